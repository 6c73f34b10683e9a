#pragma once
// Nonconformity scores of a runtime forecast and the intervals they induce. Everything is done
// in log-runtime, where surrogate errors are roughly symmetric; intervals come back in ms.
#include <string_view>

#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct Interval {
  double low_ms = 0;
  double high_ms = 0;
  [[nodiscard]] bool contains(double t_ms) const noexcept { return t_ms >= low_ms && t_ms <= high_ms; }
  [[nodiscard]] double width_ms() const noexcept { return high_ms - low_ms; }
};

enum class ConformalScore {
  // |log t - log t_hat| / spread: split conformal on normalised residuals.
  normalised_residual,
  // max(log lo - log t, log t - log hi) on the 5%/95% quantile head: conformalised quantile
  // regression (Romano, Patterson and Candes 2019).
  cqr,
};

[[nodiscard]] std::string_view to_string(ConformalScore s) noexcept;
// "split"/"normalised_residual" or "cqr"; throws invalid_argument_error otherwise.
[[nodiscard]] ConformalScore parse_conformal_score(std::string_view s);

// The log-scale spread used to normalise residuals: Forecast::spread when positive, else the
// width of the quantile head ((log hi - log lo) / 3.29, a normal's 5%-95% width), else 1.
// Floored at 1e-6 so a degenerate model cannot produce a zero-width interval.
[[nodiscard]] double effective_spread(const Forecast& f) noexcept;

// Score of an observed runtime. Throws invalid_argument_error for non-positive or NaN inputs.
[[nodiscard]] double nonconformity(ConformalScore s, const Forecast& f, double observed_ms);

// The set {t : nonconformity(s, f, t) <= q}, in ms. q = +inf gives [0, +inf].
[[nodiscard]] Interval conformal_interval(ConformalScore s, const Forecast& f, double q);

}  // namespace gpuforecast
