#include "compose/selective_model_spec.hpp"

#include "calibration/model_bundle.hpp"
#include "calibration/selective_forecaster.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "online_selective.hpp"
#if GPUFORECAST_HAVE_LLM
#include "llm/llm_selective.hpp"
#endif

namespace gpuforecast {

namespace {

// The LLM as the search's filter (llm/llm_selective.hpp): its endpoint from the environment
// (GPUFORECAST_LLM_BASE_URL, _MODEL, _API_KEY, _CACHE); nothing is trained, so nothing is
// pre-trained either.
SelectiveModel llm_selective_model(const SelectiveModelSpec& spec) {
  if (!spec.model_path.empty() || spec.pretrained)
    throw invalid_argument_error("selective model: surrogate llm is not trained, so it takes no pre-trained model");
  if (!spec.online) throw invalid_argument_error("selective model: surrogate llm only learns online (a search)");
#if GPUFORECAST_HAVE_LLM
  LlmSelectiveOptions o;
  o.surrogate.endpoint = llm_options_from_environment();
  if (o.surrogate.endpoint.base_url.empty() || o.surrogate.endpoint.model.empty())
    throw invalid_argument_error(
        "surrogate llm: no endpoint: set GPUFORECAST_LLM_BASE_URL and GPUFORECAST_LLM_MODEL (docs/llm.md)");
  return LlmSelective(std::move(o));
#else
  throw invalid_argument_error("surrogate llm is not in this build (it needs libcurl: GPUFORECAST_WITH_CURL)");
#endif
}

}  // namespace

SelectiveModel make_selective_model(const SelectiveModelSpec& spec) {
  if (spec.online_surrogate == "llm") return llm_selective_model(spec);
  if (!spec.model_path.empty() && spec.pretrained)
    throw invalid_argument_error("selective model: give a model file or a surrogate in memory, not both");
  std::optional<AnySurrogate> base = spec.pretrained;
  std::optional<SelectiveCalibrator> calibrator = spec.calibrator;
  std::string origin = "the surrogate given";
  if (!spec.model_path.empty()) {
    const ModelFile file = read_model_file(spec.model_path);
    base = surrogate_from(file, spec.model_path);
    calibrator = calibration_from(file, spec.model_path);
    origin = spec.model_path;
  }
  if (!spec.online) {
    if (!base) throw invalid_argument_error("selective model: an offline model needs a pre-trained surrogate");
    if (!calibrator)
      throw invalid_argument_error(origin + ": no calibration to decide with (run `gpuforecast calibrate` on it first)");
    return SelectiveForecaster<AnySurrogate>(std::move(*base), std::move(*calibrator));
  }
  if (base)
    return detail::compose::pretrained_selective_model(std::move(*base), std::move(calibrator), spec.online_surrogate,
                                                      spec.seed);
  return detail::compose::online_selective_model(spec.online_surrogate, spec.seed);
}

}  // namespace gpuforecast
