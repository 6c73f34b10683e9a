#pragma once
// How good a search was: fraction of the optimum reached after n measurements, over seeds.
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// curve[n-1] = optimum_ms / (best time among the configurations measured in the first n),
// n = 1..length; 0 before anything valid was measured; a trace shorter than `length` holds its
// last value. Times are `reference_ms(config)` when given (replay: the stored median, so the
// noise of one replayed run neither flatters nor hurts a strategy), else the measured medians.
[[nodiscard]] std::vector<double> fraction_of_optimum_curve(
    const Trace& trace, double optimum_ms, std::size_t length,
    const std::function<double(const Config&)>& reference_ms = {});

struct BudgetSummary {
  std::size_t budget = 0;  // measurements
  double mean = 0;         // mean fraction of optimum over seeds
  double p10 = 0;          // 10th percentile over seeds (linear interpolation)
  // Standard error of the mean (sample standard deviation / sqrt(seeds); 0 below 2 seeds). On
  // the needle-like spaces a 20-seed mean moves by several of these between seed sets, so two
  // strategies closer than about twice the larger one are not told apart by the run.
  double standard_error = 0;
  std::size_t seeds = 0;
};

// One summary per budget; curves shorter than a budget use their last value.
[[nodiscard]] std::vector<BudgetSummary> summarise_curves(std::span<const std::vector<double>> curves,
                                                          std::span<const std::size_t> budgets);

// q in [0, 1], linear interpolation between order statistics; 0 for an empty sample.
[[nodiscard]] double percentile(std::vector<double> values, double q);

}  // namespace gpuforecast
