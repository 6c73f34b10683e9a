#pragma once
// The model a search decides with, made in one place for every caller (the runner, benchmarks,
// Python): strategies never build one themselves.
//
// It learns during the search. Without a Model to start from, a surrogate of kind
// `online_surrogate` is trained from the search's own measurements; with one (trained on other
// devices or kernels), the Model ranks from the first round while a small online model of
// `online_surrogate` learns the ratio measured / forecast on the target, and a second one,
// trained on the target's measurements alone, joins after 10 ok measurements, each weighted by
// how well it ranked the target's measurements before learning them; a Model with per-GPU views
// (`calibrate --rehearse`) forecasts through them, stacked by the search's own measurements
// (run_stacked_views.hpp), once it has 8, and takes no target-only model. The calibrator is refitted
// each round on prequential residuals (forecasts made before the surrogate saw the point), with
// adaptive conformal updates in between, at the search's settings (intervals at 80%, deferral
// at risk 0.2). A search that should not learn takes the Model itself: it is a SelectivePredictor.
#include <cstdint>
#include <optional>
#include <string>

#include "gpuforecast/core/any_selective_predictor.hpp"
#include "gpuforecast/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct SearchModelSpec {
  // The Model to start from: a file from `gpuforecast train` (and `calibrate`), or one in
  // memory; at most one of the two. Neither: the search's own measurements alone.
  std::string model_path;
  std::optional<Model> pretrained;
  // What learns online: "default" (a random forest), "xgboost", "knn", "ridge", "ensemble"
  // (XGBoost + knn), or any other name of the surrogate registry; or a search-model kind that is
  // a predictor of its own (core/any_selective_predictor.hpp), such as "llm": a language model
  // asked about each candidate against the incumbent (llm/llm_selective.hpp), which starts from
  // no Model.
  std::string online_surrogate = "default";
  std::uint64_t seed = 0;
};

// Throws invalid_argument_error for a spec that contradicts itself, model_file_error for a model
// file that cannot be read.
[[nodiscard]] AnySelectivePredictor make_search_model(const SearchModelSpec& spec);

}  // namespace gpuforecast
