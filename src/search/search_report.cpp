#include "gpuforecast/search/trace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuforecast {

std::vector<double> fraction_of_optimum_curve(const Trace& trace, double optimum_ms, std::size_t length,
                                              const std::function<double(const Config&)>& reference_ms) {
  std::vector<double> curve;
  curve.reserve(length);
  double best = std::numeric_limits<double>::infinity();
  for (const auto& e : trace.entries()) {
    if (curve.size() == length) break;
    if (e.measurement.ok()) {
      const double t = reference_ms ? reference_ms(e.config) : e.measurement.median_ms;
      if (t > 0) best = std::min(best, t);
    }
    curve.push_back(std::isfinite(best) ? std::min(1.0, optimum_ms / best) : 0.0);
  }
  const double last = curve.empty() ? 0.0 : curve.back();
  while (curve.size() < length) curve.push_back(last);
  return curve;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

std::vector<BudgetSummary> summarise_curves(std::span<const std::vector<double>> curves,
                                            std::span<const std::size_t> budgets) {
  std::vector<BudgetSummary> out;
  for (auto b : budgets) {
    std::vector<double> at;
    for (const auto& c : curves)
      if (!c.empty()) at.push_back(c[std::min(std::max<std::size_t>(b, 1), c.size()) - 1]);
    BudgetSummary s;
    s.budget = b;
    s.seeds = at.size();
    for (double v : at) s.mean += v;
    if (!at.empty()) s.mean /= static_cast<double>(at.size());
    if (at.size() >= 2) {
      double ss = 0;
      for (double v : at) ss += (v - s.mean) * (v - s.mean);
      const auto n = static_cast<double>(at.size());
      s.standard_error = std::sqrt(ss / (n - 1.0) / n);
    }
    s.p10 = percentile(at, 0.1);
    out.push_back(s);
  }
  return out;
}

}  // namespace gpuforecast
