#include "search/surrogate_filtered/acquisition.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace gpuforecast {

const OptionsTable<AcquisitionOptions>& acquisition_options_table() {
  static const auto table = [] {
    OptionsTable<AcquisitionOptions> t("acquisition");
    t.add("optimism", &AcquisitionOptions::optimism,
          "exploitation ranks by expected cost * exp(-optimism * spread); 0: expected cost alone", OptionRange::at_least(0))
        .add("optimism_growth", &AcquisitionOptions::optimism_growth,
             "share of itself the optimism grows by per round without improvement", OptionRange::at_least(0))
        .add("optimism_max", &AcquisitionOptions::optimism_max, "the grown optimism stays at or below this (0: no bound)",
             OptionRange::at_least(0))
        .add("optimism_reference_spread", &AcquisitionOptions::optimism_reference_spread,
             "noise-aware optimism: scale by sd(log runtimes of the initial design) / this, within [optimism_floor, 1] "
             "(0: off)",
             OptionRange::at_least(0))
        .add("optimism_floor", &AcquisitionOptions::optimism_floor, "lowest noise-aware scale of the optimism",
             OptionRange::between(0, 1))
        .add("max_p_fail", &AcquisitionOptions::max_p_fail,
             "candidates forecast to fail with a higher probability are not measured for exploitation",
             OptionRange::between(0, 1));
    return t;
  }();
  return table;
}

double expected_cost(const Decision& d) {
  const double p = std::clamp(d.forecast.p_fail, 0.0, 0.95);
  return d.forecast.median_ms / (1.0 - p);
}

double optimistic_cost(const Decision& d, double optimism) {
  return expected_cost(d) * std::exp(-optimism * std::max(0.0, d.forecast.spread));
}

double optimistic_bound(const Decision& d) {
  double low = d.interval_low_ms > 0 ? d.interval_low_ms : d.forecast.lower_ms;
  if (!(low > 0)) low = d.forecast.median_ms;
  const double p = std::clamp(d.forecast.p_fail, 0.0, 0.95);
  return low / (1.0 - p);
}

namespace {
// sd(log runtimes measured) / reference, within [floor, 1]; 1 when off or with fewer than 3.
double noise_aware_scale(const AcquisitionOptions& o, const Trace& initial) {
  if (!(o.optimism_reference_spread > 0)) return 1.0;
  std::vector<double> logs;
  for (const auto& e : initial.entries())
    if (e.measurement.ok() && e.measurement.median_ms > 0) logs.push_back(std::log(e.measurement.median_ms));
  if (logs.size() < 3) return 1.0;
  const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / static_cast<double>(logs.size());
  double ss = 0;
  for (double x : logs) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / static_cast<double>(logs.size() - 1));
  return std::clamp(sd / o.optimism_reference_spread, std::min(1.0, o.optimism_floor), 1.0);
}
}  // namespace

OptimismSchedule::OptimismSchedule(const AcquisitionOptions& options, const Trace& initial)
    : m_options(options), m_scale(noise_aware_scale(options, initial)), m_base(options.optimism * m_scale) {}

double OptimismSchedule::at(std::size_t stagnant_rounds) const noexcept {
  const double grown = m_base * (1.0 + m_options.optimism_growth * static_cast<double>(stagnant_rounds));
  if (!(m_options.optimism_max > 0)) return grown;
  return std::min(grown, std::max(m_base, m_options.optimism_max * m_scale));
}

}  // namespace gpuforecast
