#pragma once
// Surrogate kinds by name: how make_surrogate(name, seed) builds one and how a model file's
// "surrogate" section (kind + archive) is read back. The library registers its own kinds (ridge,
// knn, gp, forest, xgboost, ensemble); libgpuforecast_transformer.so registers "transformer" when
// it is loaded (the core loads it on first use of that name); users register theirs the same way,
// and their surrogates are then saved and loaded through model files like ours:
//
//   gpuforecast::register_surrogate_kind<MySurrogate>("mine", [](std::uint64_t seed) { return MySurrogate(seed); });
//   auto s = gpuforecast::make_surrogate("mine", 7);   // ... fit, save_surrogate, load_surrogate
#include <cstdint>
#include <concepts>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// "ridge", "knn", "gp", "forest", "xgboost", "compact", "compact(name=value,...)" (compact.hpp's
// options table), "transformer", "ensemble", "ensemble(m=w,...)" or "default" (the best measured in this
// build: see default_surrogate_name()), or a kind registered with register_surrogate_kind
// (below), with every random choice seeded by `seed`. Throws invalid_argument_error
// listing the available names for an unknown or not-built one. "transformer" loads
// libgpuforecast_transformer.so on first use; when it cannot, gpuforecast::error names the
// library and the reason.
[[nodiscard]] AnySurrogate make_surrogate(std::string_view name, std::uint64_t seed = 0);
// Names make_surrogate accepts in this build (without "default"), registered kinds included;
// "transformer" when libgpuforecast_transformer.so loads (this call tries).
[[nodiscard]] std::vector<std::string> surrogate_names();
// Members of "ensemble" in this build, each made with its own seed (ensemble_member_seed): xgboost, gp and the
// transformer when libtorch is built in, otherwise xgboost and knn (ridge stands in for a
// missing xgboost).
[[nodiscard]] std::vector<std::string> ensemble_member_names();
// Their weights in "ensemble" (measured with benchmarks/forecast_quality).
[[nodiscard]] std::vector<double> ensemble_member_weights();
// What "default" means in this build; chosen from benchmarks/forecast_quality (docs/surrogates.md).
[[nodiscard]] std::string default_surrogate_name();
// An ensemble by name: "ensemble" is this build's members with their measured weights;
// "ensemble(xgboost=0.7,knn=0.3)" any members with any non-negative weights (normalised).
struct EnsembleRecipe {
  std::vector<std::string> members;
  std::vector<double> weights;  // one per member
};
// The seed of an ensemble member that is the n-th (from 0) of its kind in the recipe: the
// ensemble's own seed for the first, distinct ones after it, so that a member named twice, e.g.
// ensemble(xgboost,xgboost,xgboost), bags differently subsampled models instead of repeating one.
[[nodiscard]] constexpr std::uint64_t ensemble_member_seed(std::uint64_t seed, std::size_t n) noexcept {
  return seed + 0x9e3779b97f4a7c15ULL * n;
}
// n for each member of the recipe: how many earlier members are of the same kind.
[[nodiscard]] std::vector<std::size_t> ensemble_member_repeats(const std::vector<std::string>& members);
// nullopt when `name` is not an ensemble name; invalid_argument_error when it is malformed
// (the message quotes it) or names an unknown member.
[[nodiscard]] std::optional<EnsembleRecipe> ensemble_recipe(std::string_view name);
// Rebuilds a saved surrogate of the given kind (the inverse of AnySurrogate::save), by the
// registered kind's loader; "transformer" loads its library first (model_file_error naming the
// library and the reason when it cannot).
[[nodiscard]] AnySurrogate load_surrogate_archive(std::string_view kind, ArchiveReader& r);
// A surrogate nested in another archive (a model file's surrogate, each of its view models): its
// kind, then its own archive as one blob, so that a reader can skip or name it without knowing it.
void save_surrogate_with_kind(ArchiveWriter& w, const AnySurrogate& surrogate);
// The inverse. The nested archive's errors name "<r's origin> [<what> <kind>]"; bytes left after
// it are an error there.
[[nodiscard]] AnySurrogate load_surrogate_with_kind(ArchiveReader& r, std::string_view what);

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
