#pragma once
// The two calibration plots the CLI writes: a reliability diagram of the speedup-bin
// probabilities and the risk-coverage curve with the deferral rule's operating point.
#include <string>
#include <vector>

#include "calibration/metrics.hpp"
#include "report/svg_plot.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Accuracy against mean confidence per bin (bars, with the count of each bin noted), the
// diagonal of perfect calibration, and the ECE in the title.
[[nodiscard]] SvgPlot reliability_diagram(const std::vector<ReliabilityBin>& bins, double ece, const std::string& title);

// Selective risk against coverage; a dashed line at the risk level alpha and a point at the
// coverage/risk the deferral rule achieved (skipped when accepted_fraction is negative).
[[nodiscard]] SvgPlot risk_coverage_plot(const std::vector<RiskCoveragePoint>& curve, double alpha,
                                         double accepted_fraction, double risk_accepted, double aurc_value,
                                         const std::string& title);

}  // namespace gpuforecast
