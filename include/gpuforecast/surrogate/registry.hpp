#pragma once
// Surrogates by name, for the CLI, model files and bindings.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/surrogate/archive.hpp"

namespace gpuforecast {

// "ridge", "knn", "xgboost", "transformer", "ensemble", "ensemble(m=w,...)" or "default" (the best measured in this
// build: see default_surrogate_name()), with every random choice seeded by `seed`. Throws
// invalid_argument_error listing the available names for an unknown or not-built one.
[[nodiscard]] AnySurrogate make_surrogate(std::string_view name, std::uint64_t seed = 0);
// Names make_surrogate accepts in this build (without "default").
[[nodiscard]] std::vector<std::string> surrogate_names();
// Members of "ensemble" in this build, each made with the ensemble's seed: xgboost, gp and the
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
// nullopt when `name` is not an ensemble name; invalid_argument_error when it is malformed
// (the message quotes it) or names an unknown member.
[[nodiscard]] std::optional<EnsembleRecipe> ensemble_recipe(std::string_view name);
// Rebuilds a saved surrogate of the given kind (the inverse of AnySurrogate::save).
[[nodiscard]] AnySurrogate load_surrogate_archive(std::string_view kind, ArchiveReader& r);

}  // namespace gpuforecast
