#pragma once
// One evaluation run as JSON, shared by `gpuforecast eval --json` and benchmarks/forecast_quality
// so both write the same fields.
#include <nlohmann/json.hpp>

#include "surrogate/evaluation.hpp"

namespace gpuforecast::detail {

inline nlohmann::json evaluation_run_json(const EvaluationRun& r) {
  return {{"protocol", r.protocol},
          {"surrogate", r.surrogate},
          {"target", r.target},
          {"seed", r.seed},
          {"train_fraction", r.train_fraction},
          {"target_samples", r.target_samples},
          {"train", r.train_count},
          {"test", r.test_count},
          {"spearman", r.scores.spearman},
          {"kendall", r.scores.kendall},
          {"mape", r.scores.mape},
          {"top1_recall", r.scores.top1_recall},
          {"utility", r.scores.utility},
          {"bin_exact", r.scores.bins.exact},
          {"bin_within_one", r.scores.bins.within_one},
          {"brier", r.scores.bins.brier},
          {"crps", r.scores.bins.crps},
          {"fit_seconds", r.fit_seconds},
          {"predict_seconds", r.predict_seconds}};
}

}  // namespace gpuforecast::detail
