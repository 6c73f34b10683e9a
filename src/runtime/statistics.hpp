#pragma once
// Order-statistic summaries of runtime samples: median and a distribution-free confidence
// interval of the median. Runtimes are skewed and heavy-tailed (clock boosts, preemption), so
// no normality is assumed.
#include <cstddef>
#include <span>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct MedianInterval {
  double median = 0;
  double low = 0;   // confidence interval of the median
  double high = 0;
  // (high - low) / 2 / median; infinity when there are too few samples for the interval to
  // exclude the extremes at this confidence, 0 for an empty sample.
  double relative_half_width = 0;
};

// `confidence` in (0, 1). The interval is [x_(k), x_(n-k+1)] with the largest k such that the
// binomial(n, 1/2) tail below k is at most (1 - confidence) / 2; with too few samples for any k
// it is the whole range and relative_half_width is infinite. Throws invalid_argument_error on
// NaN or negative samples.
[[nodiscard]] MedianInterval median_interval(std::span<const double> samples, double confidence = 0.95);

// Smallest sample count for which the interval can exclude the minimum and maximum (e.g. 6 at
// 95%): below it no relative-width rule can stop.
[[nodiscard]] std::size_t min_samples_for_interval(double confidence);

}  // namespace gpuforecast
