#pragma once
// What counts as a bad accepted forecast (the loss) and how confident a forecast is (the score
// thresholded by Learn-then-Test).
#include <array>
#include <optional>
#include <string_view>

#include "calibration/nonconformity.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

enum class DeferralLoss {
  relative_error,  // |t_hat - t| / t > tolerance (default 10%)
  wrong_bin,       // most probable speedup bin against the reference is not the true bin
};

enum class ConfidenceScore {
  interval_width,       // -log(high / low) of the calibrated interval: narrow = confident
  top_bin_probability,  // largest speedup-bin probability (needs a reference)
  ensemble_spread,      // -Forecast::spread (effective_spread when the model gives none)
};

[[nodiscard]] std::string_view to_string(DeferralLoss l) noexcept;
[[nodiscard]] std::string_view to_string(ConfidenceScore c) noexcept;
// "relative_error" | "wrong_bin"; throws invalid_argument_error otherwise.
[[nodiscard]] DeferralLoss parse_deferral_loss(std::string_view s);
// "interval_width" | "top_bin_probability" | "ensemble_spread"; throws otherwise.
[[nodiscard]] ConfidenceScore parse_confidence_score(std::string_view s);

// Probabilities of the eight half-octave speedup bins of the candidate against a reference of
// measured runtime reference_ms, from the calibrated interval read as a two-piece log-normal
// (median at the point forecast, each half's scale set by that side of the interval at level
// 1 - alpha). Bin b covers 2*log2(t_ref/t) in [b - 4, b - 3), the end bins are open.
[[nodiscard]] std::array<double, speedup_bin_count> bin_probabilities(const Forecast& f, const Interval& calibrated,
                                                                      double alpha, double reference_ms);

// 1 when the forecast is bad, 0 when it is good.
[[nodiscard]] double relative_error_loss(const Forecast& f, double observed_ms, double tolerance = 0.1);
// Needs f.bin_probabilities; throws invalid_argument_error without them.
[[nodiscard]] double wrong_bin_loss(const Forecast& f, double observed_ms, double reference_ms);

// Higher is more confident. top_bin_probability needs f.bin_probabilities (throws without).
[[nodiscard]] double confidence_score(ConfidenceScore c, const Forecast& f, const Interval& calibrated);

}  // namespace gpuforecast
