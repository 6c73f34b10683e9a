#include "calibration/device_adaptation.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string_view>
#include <vector>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

Forecast ForecastCorrection::apply(const Forecast& f) const {
  auto map = [&](double ms) { return ms > 0 ? std::exp(offset + slope * std::log(ms)) : ms; };
  Forecast g = f;
  g.median_ms = map(f.median_ms);
  g.lower_ms = map(f.lower_ms);
  g.upper_ms = map(f.upper_ms);
  g.spread = slope * f.spread;
  g.bin_probabilities.reset();
  return g;
}

namespace {

constexpr double min_slope = 1.0 / 3.0, max_slope = 3.0;

void check_runtime(double ms, std::size_t i, const char* what) {
  if (!(ms > 0) || !std::isfinite(ms))
    throw invalid_argument_error(fmt::format("{} {} is {} ms: need a positive finite time", what, i, ms));
}

}  // namespace

ForecastCorrection fit_forecast_correction(std::span<const Forecast> forecasts, std::span<const double> observed_ms,
                                           bool fit_slope) {
  if (forecasts.size() != observed_ms.size())
    throw invalid_argument_error(fmt::format("a forecast correction needs one runtime per forecast; got {} and {}",
                                             forecasts.size(), observed_ms.size()));
  if (forecasts.size() < 3)
    throw invalid_argument_error(fmt::format("a forecast correction needs at least 3 points, got {}", forecasts.size()));
  const std::size_t n = forecasts.size();
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    check_runtime(forecasts[i].median_ms, i, "forecast");
    check_runtime(observed_ms[i], i, "measured runtime");
    x[i] = std::log(forecasts[i].median_ms);
    y[i] = std::log(observed_ms[i]);
  }
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  ForecastCorrection c;
  // Below 8 points, or with forecasts that barely vary, a slope is mostly noise.
  if (fit_slope && n >= 8 && sxx > 1e-9 * static_cast<double>(n)) c.slope = std::clamp(sxy / sxx, min_slope, max_slope);
  c.offset = my - c.slope * mx;
  return c;
}

namespace {

// The K points of one device, checked, and which of them adapt (drawn with the calibration's seed).
struct Split {
  std::vector<std::size_t> adapt, certify;  // indices into the K points
};

// `fit` says what the adapt part does and `hint` what else would do, for the error when it is too small.
Split split_points(const std::string& device, std::span<const Candidate> candidates, std::size_t forecasts,
                   std::span<const double> observed_ms, const DeviceAdaptationOptions& o, std::size_t needed_adapt,
                   std::string_view fit, std::string_view hint = {}) {
  if (candidates.size() != forecasts || candidates.size() != observed_ms.size())
    throw invalid_argument_error(fmt::format("adapting to {} needs as many candidates, forecasts and runtimes; got {}, {} and {}",
                                             device, candidates.size(), forecasts, observed_ms.size()));
  if (!(o.adapt_fraction > 0 && o.adapt_fraction < 1))
    throw invalid_argument_error(fmt::format("adapt_fraction must lie in (0, 1), got {}", o.adapt_fraction));
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    if (!c.device || c.device->name != device)
      throw invalid_argument_error(fmt::format("adapting to {}: measurement {} ({}) is of another device", device, i,
                                               c.describe()));
    check_runtime(observed_ms[i], i, "measured runtime");
  }
  const std::size_t n = candidates.size();
  const auto n_adapt = static_cast<std::size_t>(std::round(o.adapt_fraction * static_cast<double>(n)));
  if (n_adapt < needed_adapt || n - n_adapt < 2)
    throw invalid_argument_error(fmt::format(
        "adapting to {}: {} measurements at adapt_fraction {} give {} to {} (need {}{}) and {} to certify (need 2)",
        device, n, o.adapt_fraction, n_adapt, fit, needed_adapt, hint, n - n_adapt));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(o.calibration.seed);
  std::shuffle(order.begin(), order.end(), rng);
  return {{order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_adapt)},
          {order.begin() + static_cast<std::ptrdiff_t>(n_adapt), order.end()}};
}

// The correction fitted on the adapt part's forecasts and the calibrator on the corrected certify part.
SelectiveCalibrator correct_and_certify(const std::string& device, std::span<const Forecast> adapt_f,
                                        std::span<const double> adapt_t, std::vector<Candidate> certify_c,
                                        std::vector<Forecast> certify_f, std::vector<double> certify_t,
                                        const DeviceAdaptationOptions& o) {
  const ForecastCorrection correction = fit_forecast_correction(adapt_f, adapt_t, o.fit_slope);
  for (auto& f : certify_f) f = correction.apply(f);
  CalibrationOptions co = o.calibration;
  co.group_by = GroupBy::none;  // one device: its own calibration, nothing to pool
  if (o.reference_is_best_adapted) co.reference_ms = *std::min_element(adapt_t.begin(), adapt_t.end());
  SelectiveCalibrator c = SelectiveCalibrator::fit(certify_c, certify_f, certify_t, co);
  c.restrict_to_device(DeviceScope{device, correction, adapt_f.size()});
  return c;
}

}  // namespace

SelectiveCalibrator adapt_to_device(const std::string& device, std::span<const Candidate> candidates,
                                    std::span<const Forecast> forecasts, std::span<const double> observed_ms,
                                    const DeviceAdaptationOptions& o) {
  // Below 8 adapt points the slope is left at 1 (fit_forecast_correction).
  const Split split = split_points(device, candidates, forecasts.size(), observed_ms, o, 3, "fit the correction");
  std::vector<Forecast> adapt_f, certify_f;
  std::vector<double> adapt_t, certify_t;
  std::vector<Candidate> certify_c;
  for (const std::size_t i : split.adapt) {
    adapt_f.push_back(forecasts[i]);
    adapt_t.push_back(observed_ms[i]);
  }
  for (const std::size_t i : split.certify) {
    certify_c.push_back(candidates[i]);
    certify_f.push_back(forecasts[i]);
    certify_t.push_back(observed_ms[i]);
  }
  return correct_and_certify(device, adapt_f, adapt_t, std::move(certify_c), std::move(certify_f), std::move(certify_t), o);
}

StackedDeviceAdaptation adapt_to_device(const std::string& device, std::span<const Candidate> candidates,
                                        std::span<const ViewForecasts> views, std::span<const double> observed_ms,
                                        const DeviceAdaptationOptions& o) {
  // Each adapt point is stacked by the fit on the others, which needs 3 of them.
  const Split split = split_points(device, candidates, views.size(), observed_ms, o, 4,
                                   "stack the views and fit the correction", "; the single forecasts need 3");
  std::vector<ViewForecasts> adapt_v;
  std::vector<double> adapt_t, certify_t;
  std::vector<Forecast> certify_f;
  std::vector<Candidate> certify_c;
  for (const std::size_t i : split.adapt) {
    adapt_v.push_back(views[i]);
    adapt_t.push_back(observed_ms[i]);
  }
  ViewStacking stacking = fit_view_stacking(adapt_v, adapt_t);
  const std::vector<Forecast> adapt_f = stack_leaving_each_out(adapt_v, adapt_t);
  for (const std::size_t i : split.certify) {
    certify_c.push_back(candidates[i]);
    certify_f.push_back(stacking.apply(views[i]));
    certify_t.push_back(observed_ms[i]);
  }
  return {correct_and_certify(device, adapt_f, adapt_t, std::move(certify_c), std::move(certify_f), std::move(certify_t), o),
          std::move(stacking)};
}

}  // namespace gpuforecast
