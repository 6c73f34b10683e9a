#pragma once
// How the surrogate-filtered search values a forecast. The expected cost is the forecast median
// inflated by the chance the candidate fails; exploitation ranks by the optimistic cost, the
// expected cost times exp(-optimism * spread), spread being the model's own uncertainty in
// log-runtime (a lower confidence bound: in the face of uncertainty, optimism).
// The optimism follows a schedule: it grows by optimism_growth of itself per round without
// improvement, up to optimism_max (GP-UCB's growing beta), so a stuck search ranks the regions the
// model knows least about higher. Noise-aware optimism: the base optimism and its cap are
// multiplied by the standard deviation of the initial design's log-runtimes over
// optimism_reference_spread, within [optimism_floor, 1]; where runtimes differ by a few percent
// (dedispersion), the trees' disagreement is mostly measurement noise and a bonus for it
// measures noise.
#include <cstddef>

#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/options_table.hpp"
#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct AcquisitionOptions {
  double optimism = 1;           // 0: rank by the expected cost alone
  double optimism_growth = 0.1;  // share of itself added per round without improvement
  double optimism_max = 3;       // the grown optimism stays at or below this (0: no bound)
  double optimism_reference_spread = 0.3;  // 0: noise-aware optimism off
  double optimism_floor = 0.5;
  // Candidates whose forecast failure probability exceeds this are not measured for exploitation.
  double max_p_fail = 0.5;
};

[[nodiscard]] const OptionsTable<AcquisitionOptions>& acquisition_options_table();

// The forecast median inflated by the chance the candidate fails.
[[nodiscard]] double expected_cost(const Decision& d);
// The expected cost shrunk by the model's uncertainty: a lower confidence bound.
[[nodiscard]] double optimistic_cost(const Decision& d, double optimism);
// The calibrated interval's lower end (the forecast's own when uncalibrated), failure-inflated.
[[nodiscard]] double optimistic_bound(const Decision& d);

class OptimismSchedule {
 public:
  // `initial` holds the initial design's measurements (for the noise-aware scale).
  OptimismSchedule(const AcquisitionOptions& options, const Trace& initial);
  [[nodiscard]] double base() const noexcept { return m_base; }
  // The optimism after `stagnant_rounds` rounds without improvement.
  [[nodiscard]] double at(std::size_t stagnant_rounds) const noexcept;
  [[nodiscard]] double noise_scale() const noexcept { return m_scale; }

 private:
  AcquisitionOptions m_options;
  double m_scale = 1;
  double m_base = 0;
};

}  // namespace gpuforecast
