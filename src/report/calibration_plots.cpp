#include "report/calibration_plots.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace gpuforecast {

SvgPlot reliability_diagram(const std::vector<ReliabilityBin>& bins, double ece, const std::string& title) {
  SvgPlot p(fmt::format("{} (ECE {:.3f})", title, ece), "confidence (probability of the most likely speedup bin)",
            "accuracy (fraction right)");
  p.x_range(0, 1).y_range(0, 1);
  std::vector<double> x, y, gx, gy;
  for (const auto& b : bins) {
    if (b.count == 0) continue;
    x.push_back(0.5 * (b.lower + b.upper));
    y.push_back(b.accuracy);
    gx.push_back(b.mean_confidence);
    gy.push_back(b.mean_confidence);
  }
  const double width = bins.empty() ? 0.1 : 0.9 * (bins.front().upper - bins.front().lower);
  p.bars("accuracy per confidence bin", x, y, "#0072B2", width);
  p.points("mean confidence in the bin", gx, gy, "#D55E00");
  p.line("perfect calibration", {0, 1}, {0, 1}, "#555555", true);
  for (const auto& b : bins)
    if (b.count > 0)
      p.note(0.5 * (b.lower + b.upper) - 0.04, 0.015, fmt::format("n={}", b.count));  // counts along the bottom
  return p;
}

SvgPlot risk_coverage_plot(const std::vector<RiskCoveragePoint>& curve, double alpha, double accepted_fraction,
                           double risk_accepted, double aurc_value, const std::string& title) {
  SvgPlot p(fmt::format("{} (AURC {:.3f})", title, aurc_value), "coverage (fraction answered without measuring)",
            "selective risk (fraction of accepted that are wrong)");
  std::vector<double> x{0}, y;
  double ymax = alpha;
  for (const auto& c : curve) {
    x.push_back(c.coverage);
    y.push_back(c.risk);
    ymax = std::max(ymax, c.risk);
  }
  y.insert(y.begin(), y.empty() ? 0.0 : y.front());
  p.x_range(0, 1).y_range(0, std::min(1.0, ymax * 1.1 + 0.01));
  p.line("risk when accepting the most confident", x, y, "#0072B2");
  p.line(fmt::format("target risk alpha = {}", alpha), {0, 1}, {alpha, alpha}, "#D55E00", true);
  if (accepted_fraction > 0)
    p.points(fmt::format("deferral rule: {:.1f}% accepted, risk {:.3f}", 100 * accepted_fraction, risk_accepted),
             {accepted_fraction}, {risk_accepted}, "#009E73");
  else if (accepted_fraction == 0)
    p.points("deferral rule: nothing certified, all measured", {0.0}, {0.0}, "#009E73");
  return p;
}

}  // namespace gpuforecast
