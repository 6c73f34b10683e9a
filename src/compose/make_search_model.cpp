#include "compose/search_model.hpp"

#include <fmt/core.h>

#include "gpuforecast/core/error.hpp"
#include "online_selective.hpp"
#if GPUFORECAST_HAVE_LLM
#include "llm/llm_selective.hpp"
#endif

namespace gpuforecast {

namespace {

// The kinds this build brings, registered by their own modules on first use.
void register_builtin_kinds() {
#if GPUFORECAST_HAVE_LLM
  register_llm_search_model_kind();
#endif
}

// A registered kind is a predictor of its own: nothing of it is pre-trained.
AnySelectivePredictor registered_kind(const SearchModelSpec& spec, const SearchModelFactory& make) {
  if (!spec.model_path.empty() || spec.pretrained)
    throw invalid_argument_error(
        fmt::format("search model: surrogate {} is not trained, so it takes no pre-trained model", spec.online_surrogate));
  return make(spec.seed);
}

}  // namespace

AnySelectivePredictor make_search_model(const SearchModelSpec& spec) {
  register_builtin_kinds();
  if (const SearchModelFactory* make = find_search_model_kind(spec.online_surrogate)) return registered_kind(spec, *make);
  if (spec.online_surrogate == "llm")
    throw invalid_argument_error("surrogate llm is not in this build (it needs libcurl: GPUFORECAST_WITH_CURL)");
  if (!spec.model_path.empty() && spec.pretrained)
    throw invalid_argument_error("search model: give a model file or a Model in memory, not both");
  std::optional<Model> base = spec.model_path.empty() ? spec.pretrained : std::optional<Model>(load(spec.model_path));
  return detail::compose::OnlineSelective(std::move(base), spec.online_surrogate, spec.seed);
}

}  // namespace gpuforecast
