#pragma once
// The composition layer: the one place where a surrogate and a calibrator are put together into
// the SelectiveModel a strategy (or any other caller: the command line, benchmarks, Python)
// receives. Strategies never build forecasters themselves.
//
// An online model learns during a search: without a pre-trained surrogate, one of kind
// `online_surrogate` is trained from the search's own measurements; with one (trained on other
// devices or kernels), it ranks from the first round while a small online model of
// `online_surrogate` learns the ratio measured / forecast on the target, and a second one,
// trained on the target's measurements alone, joins after 10 ok measurements, each weighted by
// how well it ranked the target's measurements before learning them. The calibrator is refitted
// each round on prequential residuals (forecasts made before the surrogate saw the point), with
// adaptive conformal updates in between, at the search's settings (intervals at 80%, deferral
// at risk 0.2).
// An offline model is the pre-trained surrogate and the calibrator of its file, as forecast() uses.
#include <cstdint>
#include <optional>
#include <string>

#include "calibration/selective_calibrator.hpp"
#include "gpuforecast/core/selective_model.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct SelectiveModelSpec {
  // A pre-trained model: a file from `gpuforecast train` (and `calibrate`), or a surrogate held in
  // memory with, optionally, its calibrator. At most one of model_path and pretrained.
  std::string model_path;
  std::optional<AnySurrogate> pretrained;
  std::optional<SelectiveCalibrator> calibrator;
  // Learn from measurements as they come (a search); false: the pre-trained model as it is.
  bool online = true;
  // The surrogate learned online: "default" (a random forest), "xgboost", "knn", "ridge",
  // "ensemble" (XGBoost + knn), or any other name of the surrogate registry; "llm": a language
  // model asked about each candidate against the incumbent (llm/llm_selective.hpp), its endpoint
  // from the environment (GPUFORECAST_LLM_BASE_URL, ...), with no model file or pre-trained model.
  std::string online_surrogate = "default";
  std::uint64_t seed = 0;
};

// Throws invalid_argument_error for a spec that contradicts itself, model_file_error for a model
// file that cannot be read.
[[nodiscard]] SelectiveModel make_selective_model(const SelectiveModelSpec& spec);

}  // namespace gpuforecast
