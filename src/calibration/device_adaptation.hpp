#pragma once
// Trust on a new GPU after K measurements. A model trained on other devices is usually right
// about which configurations are fast and wrong about how fast: its forecasts on a new device are
// off by a factor (and a slope) of their own. adapt_to_device() splits the K measurements in two:
// the adapt part fits a log-affine correction of the forecasts, log t = offset + slope log t_hat;
// the certify part, corrected, calibrates a SelectiveCalibrator (intervals and the
// Learn-then-Test deferral rule) as usual. The points that adapt never certify, so, given the
// adapt part, the certify points and the device's other configurations stay exchangeable and
// the guarantee is the calibrator's own (when the K points are a random sample of the space).
//
// The calibrator that comes back holds the correction and the device: it corrects every
// forecast of that device before deciding, and defers every candidate of another device.
#include <cstdint>
#include <span>
#include <string>

#include "calibration/selective_calibrator.hpp"
#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct DeviceAdaptationOptions {
  // Share of the K measurements that fit the correction; the rest certify. At least 3 must
  // adapt (4 to stack views); below 8 only the offset is fitted.
  double adapt_fraction = 0.3;
  bool fit_slope = true;  // false: offset only
  // The wrong_bin loss's reference: the fastest adapt point's runtime (the incumbent a search on
  // the new device has after measuring it), or a random other certify point (the calibrator's
  // usual draw). Fixed by the adapt part, the first keeps the certify points exchangeable.
  bool reference_is_best_adapted = true;
  CalibrationOptions calibration;  // the certify step (loss, confidence, alpha, delta, seed)
};

// Fits the correction on the adapt part and the calibrator on the corrected certify part of
// K measurements of one device: `candidates` (all of `device`), the model's forecasts of them
// and their measured runtimes. Which point adapts is drawn with options.calibration.seed.
// Throws invalid_argument_error for mismatched sizes, a candidate of another device, NaN or
// non-positive runtimes, or too few points for either part (naming the numbers).
[[nodiscard]] SelectiveCalibrator adapt_to_device(const std::string& device, std::span<const Candidate> candidates,
                                                  std::span<const Forecast> forecasts,
                                                  std::span<const double> observed_ms,
                                                  const DeviceAdaptationOptions& options = {});

// The same for forecasts made as views (view_stacking.hpp): the adapt part also stacks the
// views, so a new GPU that is mostly like one training GPU is forecast through that GPU's view.
// The adapt points' views are stacked each by the fit on the other adapt points (the correction
// sees honest errors), the certify points' by the fit on the whole adapt part; the certify points
// never stack. The calibrator decides stacked forecasts: stack a configuration's views with
// `stacking` before deciding. Throws as the overload above, and for fewer than 4 adapt points.
struct StackedDeviceAdaptation {
  SelectiveCalibrator calibrator;
  ViewStacking stacking;
};
[[nodiscard]] StackedDeviceAdaptation adapt_to_device(const std::string& device, std::span<const Candidate> candidates,
                                                      std::span<const ViewForecasts> views,
                                                      std::span<const double> observed_ms,
                                                      const DeviceAdaptationOptions& options = {});

// The least-squares log-affine fit alone (slope clamped to [1/3, 3]; offset only when asked, with
// fewer than 8 points, or when the forecasts do not vary). Throws for fewer than 3 points or non-positive values.
[[nodiscard]] ForecastCorrection fit_forecast_correction(std::span<const Forecast> forecasts,
                                                         std::span<const double> observed_ms, bool fit_slope = true);

}  // namespace gpuforecast
