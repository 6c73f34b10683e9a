#include "surrogate/transformer_plugin.hpp"

#include <dlfcn.h>
#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "gpuforecast/surrogate/registry.hpp"

namespace gpuforecast::detail {

namespace {
// The folder of the object that holds this code: libgpuforecast.so (or a program that linked the
// static areas). Empty when dladdr cannot tell.
std::filesystem::path own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&load_transformer_library), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  const auto path = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path{} : path.parent_path();
}

// dlopen, then the library's registration entry point, which it hands our register function (so
// the kind lands in this copy's table even in a program that linked the static areas). On failure
// appends what went wrong to `why`. Handles are never closed: libtorch does not support unloading.
bool open(const std::string& file, std::string& why) {
  const auto failed = [&](const std::string& what) {
    why += (why.empty() ? "" : "; ") + what;
    return false;
  };
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    return failed(e ? e : file + ": unknown dlopen error");
  }
  using Register = void (*)(void (*)(SurrogateKind));
  auto* entry = reinterpret_cast<Register>(dlsym(handle, transformer_entry_point));
  if (entry == nullptr) return failed(fmt::format("{}: no {}() in it", file, transformer_entry_point));
  entry(static_cast<void (*)(SurrogateKind)>(&register_surrogate_kind));
  return true;
}
}  // namespace

std::string load_transformer_library() {
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  if (has_surrogate_kind(transformer_kind)) return {};
  std::string why;
  bool opened = false;
  if (const char* env = std::getenv("GPUFORECAST_TRANSFORMER_LIBRARY"); env != nullptr && *env != '\0') {
    opened = open(env, why);
    if (!opened) why = "GPUFORECAST_TRANSFORMER_LIBRARY: " + why;
  } else {
    const auto next_to_us = own_folder() / transformer_library;
    std::error_code ec;
    if (!next_to_us.parent_path().empty() && std::filesystem::exists(next_to_us, ec)) opened = open(next_to_us.string(), why);
    if (!opened) opened = open(std::string(transformer_library), why);
  }
  if (opened && !has_surrogate_kind(transformer_kind)) return "it loaded but registered no \"transformer\" kind";
  return opened ? std::string{} : why;
}

std::string transformer_library_missing(const std::string& why) {
  return fmt::format("which needs {} (gpuforecast::transformer); it could not be loaded: {}", transformer_library, why);
}

}  // namespace gpuforecast::detail
