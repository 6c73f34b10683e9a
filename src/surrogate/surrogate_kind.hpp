#pragma once
// Surrogate kinds by name: how make_surrogate(name, seed) builds one and how a model file's
// "surrogate" section (kind + archive) is read back. The library registers its own kinds (ridge,
// knn, gp, forest, xgboost, ensemble); libgpuforecast_transformer.so registers "transformer" when
// it is loaded (the core loads it on first use of that name); users register theirs the same way,
// and their surrogates are then saved and loaded through model files like ours:
//
//   gpuforecast::register_surrogate_kind<MySurrogate>("mine", [](std::uint64_t seed) { return MySurrogate(seed); });
//   auto s = gpuforecast::make_surrogate("mine", 7);   // ... fit, save_surrogate, load_surrogate
#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct SurrogateKind {
  std::string name;                                    // what kind() returns and model files store
  std::function<AnySurrogate(std::uint64_t seed)> make;  // untrained, every random choice seeded
  std::function<AnySurrogate(ArchiveReader&)> load;      // the inverse of AnySurrogate::save
};

// Thread-safe. Throws invalid_argument_error (naming the kind) when the name is empty, holds a
// character outside [A-Za-z0-9_.-], is reserved ("default", "ensemble", "ensemble(...)"), is
// registered already, or a function is missing.
void register_surrogate_kind(SurrogateKind kind);

// For a PersistentSurrogate type: `make(seed)` returns an S; loading is S::load.
template <PersistentSurrogate S, class Make>
  requires std::invocable<Make&, std::uint64_t> && std::convertible_to<std::invoke_result_t<Make&, std::uint64_t>, S>
void register_surrogate_kind(std::string name, Make make) {
  register_surrogate_kind(SurrogateKind{
      std::move(name), [make = std::move(make)](std::uint64_t seed) mutable -> AnySurrogate { return S(make(seed)); },
      [](ArchiveReader& r) -> AnySurrogate { return S::load(r); }});
}

// Whether `name` is registered now. Never loads a plugin (surrogate_names() does).
[[nodiscard]] bool has_surrogate_kind(std::string_view name);
// Registered kinds, in registration order (the library's own first).
[[nodiscard]] std::vector<std::string> registered_surrogate_kinds();

}  // namespace gpuforecast
