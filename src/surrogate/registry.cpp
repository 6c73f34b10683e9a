#include "gpuforecast/surrogate/registry.hpp"

#include <fmt/core.h>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/ensemble.hpp"
#include "gpuforecast/surrogate/knn.hpp"
#include "gpuforecast/surrogate/ridge.hpp"
#include "gpuforecast/surrogate/xgboost.hpp"
#if GPUFORECAST_HAVE_TORCH
#include "gpuforecast/surrogate/transformer.hpp"
#endif

namespace gpuforecast {

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

[[noreturn]] void unknown(std::string_view name) {
  throw invalid_argument_error(fmt::format("unknown surrogate \"{}\"; this build has: {}, default", name,
                                           joined(surrogate_names())));
}

AnySurrogate make_ensemble(std::uint64_t seed) {
  std::vector<AnySurrogate> members;
  for (const auto& m : ensemble_member_names()) members.push_back(make_surrogate(m, seed));
  return AnyEnsemble(std::move(members));
}
}  // namespace

std::vector<std::string> ensemble_member_names() {
#if GPUFORECAST_HAVE_XGBOOST && GPUFORECAST_HAVE_TORCH
  return {"xgboost", "transformer"};
#elif GPUFORECAST_HAVE_XGBOOST
  return {"xgboost", "knn"};
#elif GPUFORECAST_HAVE_TORCH
  return {"ridge", "transformer"};
#else
  return {"ridge", "knn"};
#endif
}

std::vector<std::string> surrogate_names() {
  std::vector<std::string> names{"ridge", "knn"};
#if GPUFORECAST_HAVE_XGBOOST
  names.emplace_back("xgboost");
#endif
#if GPUFORECAST_HAVE_TORCH
  names.emplace_back("transformer");
#endif
  names.emplace_back("ensemble");
  return names;
}

std::string default_surrogate_name() {
  // Measured with benchmarks/forecast_quality (docs/surrogates.md has the table): boosted trees
  // rank best of the tabular baselines at 2%, 5% and 10% training and in transfer; averaging them
  // with knn (the tabular "ensemble") loses about 0.02-0.03 Spearman.
#if GPUFORECAST_HAVE_XGBOOST
  return "xgboost";
#else
  return "ridge";
#endif
}

AnySurrogate make_surrogate(std::string_view name, std::uint64_t seed) {
  if (name == "default") return make_surrogate(default_surrogate_name(), seed);
  if (name == "ridge") return RidgeSurrogate();
  if (name == "knn") {
    KnnOptions o;
    o.seed = seed;
    return KnnSurrogate(o);
  }
#if GPUFORECAST_HAVE_XGBOOST
  if (name == "xgboost") {
    XgboostOptions o;
    o.seed = seed;
    return XgboostSurrogate(o);
  }
#endif
#if GPUFORECAST_HAVE_TORCH
  if (name == "transformer") {
    TransformerOptions o;
    o.seed = seed;
    return TransformerSurrogate(o);
  }
#endif
  if (name == "ensemble") return make_ensemble(seed);
  unknown(name);
}

AnySurrogate load_surrogate_archive(std::string_view kind, ArchiveReader& r) {
  if (kind == "ridge") return RidgeSurrogate::load(r);
  if (kind == "knn") return KnnSurrogate::load(r);
  if (kind == "ensemble") return AnyEnsemble::load(r);
#if GPUFORECAST_HAVE_XGBOOST
  if (kind == "xgboost") return XgboostSurrogate::load(r);
#endif
#if GPUFORECAST_HAVE_TORCH
  if (kind == "transformer") return TransformerSurrogate::load(r);
#endif
  r.fail(fmt::format("the model holds a \"{}\" surrogate, which this build cannot load (it has: {})", kind,
                     joined(surrogate_names())));
}

}  // namespace gpuforecast
