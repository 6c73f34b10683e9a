#include "calibration/metrics.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {
void check_sizes(std::size_t a, std::size_t b, const char* what) {
  if (a != b) throw invalid_argument_error(fmt::format("{}: sizes differ ({} and {})", what, a, b));
  if (a == 0) throw invalid_argument_error(fmt::format("{}: no points", what));
}
void check_bins(std::span<const int> y, const char* what) {
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] < 1 || y[i] > speedup_bin_count)
      throw invalid_argument_error(fmt::format("{}: true bin {} of point {} is outside 1..8", what, y[i], i));
}
}  // namespace

double empirical_coverage(std::span<const Interval> iv, std::span<const double> t) {
  check_sizes(iv.size(), t.size(), "coverage");
  std::size_t in = 0;
  for (std::size_t i = 0; i < iv.size(); ++i) in += iv[i].contains(t[i]) ? 1 : 0;
  return static_cast<double>(in) / static_cast<double>(iv.size());
}

double mean_interval_width(std::span<const Interval> iv) {
  if (iv.empty()) throw invalid_argument_error("mean interval width: no intervals");
  double s = 0;
  for (const auto& i : iv) s += i.width_ms();
  return s / static_cast<double>(iv.size());
}

double mean_log_interval_width(std::span<const Interval> iv) {
  if (iv.empty()) throw invalid_argument_error("mean log interval width: no intervals");
  double s = 0;
  for (const auto& i : iv)
    s += (i.low_ms > 0 && std::isfinite(i.high_ms)) ? std::log(i.high_ms / i.low_ms) : std::numeric_limits<double>::infinity();
  return s / static_cast<double>(iv.size());
}

std::vector<ReliabilityBin> reliability_bins(std::span<const BinProbabilities> p, std::span<const int> y,
                                             std::size_t bins) {
  check_sizes(p.size(), y.size(), "reliability");
  check_bins(y, "reliability");
  if (bins == 0) throw invalid_argument_error("reliability: need at least one bin");
  std::vector<ReliabilityBin> out(bins);
  for (std::size_t b = 0; b < bins; ++b) {
    out[b].lower = static_cast<double>(b) / static_cast<double>(bins);
    out[b].upper = static_cast<double>(b + 1) / static_cast<double>(bins);
  }
  for (std::size_t i = 0; i < p.size(); ++i) {
    const auto top = std::max_element(p[i].begin(), p[i].end());
    const double conf = *top;
    if (std::isnan(conf)) throw invalid_argument_error(fmt::format("reliability: probabilities of point {} are NaN", i));
    auto b = static_cast<std::size_t>(std::clamp(conf, 0.0, 1.0) * static_cast<double>(bins));
    b = std::min(b, bins - 1);
    auto& r = out[b];
    ++r.count;
    r.mean_confidence += conf;
    r.accuracy += (top - p[i].begin() + 1) == y[i] ? 1.0 : 0.0;
  }
  for (auto& r : out)
    if (r.count > 0) {
      r.mean_confidence /= static_cast<double>(r.count);
      r.accuracy /= static_cast<double>(r.count);
    }
  return out;
}

double expected_calibration_error(std::span<const BinProbabilities> p, std::span<const int> y, std::size_t bins) {
  const auto rb = reliability_bins(p, y, bins);
  double e = 0;
  for (const auto& r : rb)
    e += static_cast<double>(r.count) / static_cast<double>(p.size()) * std::abs(r.accuracy - r.mean_confidence);
  return e;
}

double brier_score(std::span<const BinProbabilities> p, std::span<const int> y) {
  check_sizes(p.size(), y.size(), "Brier score");
  check_bins(y, "Brier score");
  double s = 0;
  for (std::size_t i = 0; i < p.size(); ++i) s += brier(p[i], y[i]);
  return s / static_cast<double>(p.size());
}

double crps_ordinal(std::span<const BinProbabilities> p, std::span<const int> y) {
  check_sizes(p.size(), y.size(), "CRPS");
  check_bins(y, "CRPS");
  double s = 0;
  for (std::size_t i = 0; i < p.size(); ++i) s += crps_ordinal(p[i], y[i]);
  return s / static_cast<double>(p.size());
}

double negative_log_likelihood(std::span<const BinProbabilities> p, std::span<const int> y) {
  check_sizes(p.size(), y.size(), "NLL");
  check_bins(y, "NLL");
  double s = 0;
  for (std::size_t i = 0; i < p.size(); ++i) s -= std::log(std::max(p[i][static_cast<std::size_t>(y[i] - 1)], 1e-12));
  return s / static_cast<double>(p.size());
}

std::vector<RiskCoveragePoint> risk_coverage_curve(std::span<const double> c, std::span<const double> loss) {
  check_sizes(c.size(), loss.size(), "risk-coverage curve");
  const std::size_t n = c.size();
  for (std::size_t i = 0; i < n; ++i)
    if (std::isnan(c[i]) || std::isnan(loss[i]))
      throw invalid_argument_error(fmt::format("risk-coverage curve: point {} has a NaN confidence or loss", i));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return c[a] > c[b]; });
  std::vector<RiskCoveragePoint> out;
  double cum = 0;
  for (std::size_t j = 0; j < n; ++j) {
    cum += loss[order[j]];
    if (j + 1 == n || c[order[j + 1]] != c[order[j]])
      out.push_back({static_cast<double>(j + 1) / static_cast<double>(n), cum / static_cast<double>(j + 1), c[order[j]]});
  }
  return out;
}

double aurc(std::span<const double> c, std::span<const double> loss) {
  const auto curve = risk_coverage_curve(c, loss);
  const double n = static_cast<double>(c.size());
  double area = 0, prev = 0;
  for (const auto& p : curve) {
    // every k inside a tie group shares the group's risk
    area += p.risk * (p.coverage * n - prev * n);
    prev = p.coverage;
  }
  return area / n;
}

}  // namespace gpuforecast
