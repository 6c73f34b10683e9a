#pragma once
// libgpuforecast_transformer.so (gpuforecast::transformer) holds the libtorch transformer; the
// core never links it and loads it only when a "transformer" surrogate is asked for, so forecast()
// callers and non-transformer models never map libtorch.
#include <string>
#include <string_view>

namespace gpuforecast::detail {

inline constexpr std::string_view transformer_kind = "transformer";
inline constexpr std::string_view transformer_library = "libgpuforecast_transformer.so";
// extern "C" void gpuforecast_transformer_register(void (*register_kind)(SurrogateKind)): the
// library's one entry point; it calls register_kind with its "transformer" kind.
inline constexpr const char* transformer_entry_point = "gpuforecast_transformer_register";

// Makes sure the "transformer" kind is registered, loading the library when it is not: the path in
// GPUFORECAST_TRANSFORMER_LIBRARY when set, else the file next to libgpuforecast.so (found with
// dladdr), else the dynamic linker's search path, then calls its entry point to register the kind.
// Returns an empty string on success, else why not (dlerror's text). Thread-safe; a failure is
// not remembered, so a later call (after fixing the environment) tries again.
[[nodiscard]] std::string load_transformer_library();

// "..., which needs libgpuforecast_transformer.so (gpuforecast::transformer); it could not be
// loaded: <why>": the tail of the errors raised when loading failed.
[[nodiscard]] std::string transformer_library_missing(const std::string& why);

}  // namespace gpuforecast::detail
