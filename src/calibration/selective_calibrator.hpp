#pragma once
// Everything a surrogate needs to become a selective predictor, fitted on held-out measurements:
// conformal intervals (split or CQR, optionally per group) and a Learn-then-Test acceptance
// threshold. Non-template so that it is compiled once and stored in the model file's
// "calibration" section; a Model (compose/model_impl.hpp) joins it to a surrogate, and
// decide_all() is the one loop that turns a surrogate's forecasts into decisions.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/adaptive_conformal.hpp"
#include "calibration/deferral.hpp"
#include "stats/learn_then_test.hpp"
#include "calibration/mondrian_conformal.hpp"
#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct CalibrationOptions {
  double alpha = 0.1;  // intervals cover with probability >= 1 - alpha
  ConformalScore score = ConformalScore::normalised_residual;
  GroupBy group_by = GroupBy::none;  // Mondrian groups
  std::size_t min_group_size = 30;   // smaller groups use the pooled calibration

  // Deferral: accept only if P(risk among accepted <= risk_alpha) >= 1 - delta.
  double risk_alpha = 0.1;
  double delta = 0.1;
  DeferralLoss loss = DeferralLoss::relative_error;
  double tolerance = 0.1;  // relative_error: |t_hat - t| / t above this is a loss
  ConfidenceScore confidence = ConfidenceScore::interval_width;
  std::size_t max_thresholds = 100;
  // Fraction of the calibration set held out for Learn-then-Test; 0 reuses the whole set for
  // both steps, which is exact when the confidence is a fixed function of the forecast
  // (interval_width without groups, ensemble_spread) and close to it otherwise.
  double deferral_fraction = 0.0;
  // A forecast whose p_fail exceeds this is deferred whatever its confidence (1 disables).
  double max_p_fail = 0.5;

  // Online adaptive conformal (Gibbs and Candes); 0 disables. Used by update().
  double aci_gamma = 0.0;
  std::size_t aci_window = 0;

  std::uint64_t seed = 0;  // splits and the references drawn for the wrong_bin loss
  // > 0: the wrong_bin loss and the bin-probability confidence use this one reference runtime
  // (ms) for every calibration point, instead of a random other point of the same space; then
  // decide() uses it too when no reference is given. 0: random peers.
  double reference_ms = 0;

  // The wrong_bin loss and the top-bin confidence judge a forecast against a reference runtime.
  [[nodiscard]] bool needs_reference() const noexcept {
    return loss == DeferralLoss::wrong_bin || confidence == ConfidenceScore::top_bin_probability;
  }
};

// A monotone correction of a forecast in log-runtime, log t = offset + slope * log t_hat: what a
// device-adapted calibration (device_adaptation.hpp) applies to a model's forecasts of its device.
struct ForecastCorrection {
  double offset = 0;  // log-runtime shift (log ms)
  double slope = 1;   // > 0, so the order of forecasts is kept

  [[nodiscard]] bool is_identity() const noexcept { return offset == 0 && slope == 1; }
  // Median, quantiles and spread mapped; p_fail kept; bin probabilities dropped (they depend on
  // the interval, which is computed after the correction).
  [[nodiscard]] Forecast apply(const Forecast& f) const;
};

// What a calibration adapted to one device (adapt_to_device) holds besides the usual parts:
// the device, the correction of the model's forecasts of it, and how many points fitted it.
struct DeviceScope {
  std::string device;  // Device::name
  ForecastCorrection correction;
  std::size_t adapt_points = 0;
  // Cross-device calibration on views (view_stacking.hpp): the device's forecasts are the model's
  // forecasts as each of these training GPUs, stacked; decide() expects them stacked (Model does it).
  std::vector<std::string> view_devices;
  ViewStacking stacking;
};

// Version of SelectiveCalibrator::save's bytes; 2 added the device scope and the fixed reference,
// 3 the scope's views.
inline constexpr std::uint32_t calibrator_archive_version = 3;

class SelectiveCalibrator {
 public:
  SelectiveCalibrator() = default;

  // Fits on calibration data the surrogate did not train on: the candidates, the surrogate's
  // forecasts of them, and their measured runtimes (ms). Throws invalid_argument_error for bad
  // options (alpha or delta outside (0,1)), mismatched sizes, an empty set or NaN runtimes.
  static SelectiveCalibrator fit(std::span<const Candidate> candidates, std::span<const Forecast> forecasts,
                                 std::span<const double> observed_ms, const CalibrationOptions& options = {});

  // A calibrator made of parts fitted elsewhere (cross-device calibration: intervals and a
  // threshold from rehearsal GPUs). Throws invalid_argument_error for bad options or an unfitted
  // conformal part.
  static SelectiveCalibrator from_parts(const CalibrationOptions& options, MondrianConformal conformal,
                                        LttResult deferral);

  // The decision for one forecast; reference_ms (a measured reference runtime) adds the
  // speedup-bin probabilities. Thread-safe (const, no shared mutable state).
  [[nodiscard]] Decision decide(const Candidate& c, const Forecast& f,
                                std::optional<double> reference_ms = std::nullopt) const;
  // The calibrated interval alone (adaptive when update() has been used and aci_gamma > 0).
  [[nodiscard]] Interval interval(const Candidate& c, const Forecast& f) const;

  // Online: the measured runtime of a forecast made during a search. Adapts the level with
  // adaptive conformal inference when options().aci_gamma > 0. Not safe concurrently with decide().
  void update(const Candidate& c, const Forecast& f, double observed_ms);

  [[nodiscard]] bool fitted() const noexcept { return m_conformal.fitted(); }
  [[nodiscard]] const CalibrationOptions& options() const noexcept { return m_options; }
  [[nodiscard]] const MondrianConformal& conformal() const noexcept { return m_conformal; }
  [[nodiscard]] const LttResult& deferral() const noexcept { return m_deferral; }
  [[nodiscard]] const std::optional<AdaptiveConformal>& adaptive() const noexcept { return m_adaptive; }
  // Set by adapt_to_device: forecasts of `scope.device` are corrected before every decision and
  // interval, and candidates of any other device are deferred (the calibration says nothing of them).
  void restrict_to_device(DeviceScope scope) { m_scope = std::move(scope); }
  [[nodiscard]] const std::optional<DeviceScope>& device_scope() const noexcept { return m_scope; }
  // One line: "alpha 0.1 split intervals (q = 1.64 on 436 points); accept if confidence >= ..."
  [[nodiscard]] std::string describe() const;

  void save(ArchiveWriter& w) const;
  // `version`: the archive version the bytes were written with (1: before device scopes).
  static SelectiveCalibrator load(ArchiveReader& r, std::uint32_t version = calibrator_archive_version);

 private:
  [[nodiscard]] double confidence_of(const Forecast& f, const Interval& iv) const;
  // The interval of an already corrected forecast.
  [[nodiscard]] Interval uncorrected_interval(const Candidate& c, const Forecast& f) const;
  CalibrationOptions m_options;
  MondrianConformal m_conformal;
  LttResult m_deferral;
  std::optional<AdaptiveConformal> m_adaptive;
  std::optional<DeviceScope> m_scope;
};

// Per-point loss of a forecast under the calibrator's options (reference needed for wrong_bin).
[[nodiscard]] double deferral_loss(const CalibrationOptions& o, const Forecast& f, double observed_ms,
                                   std::optional<double> reference_ms = std::nullopt);

// The decision on each candidate from the surrogate's forecast of it (forecasts[i] of
// candidates[i]): the calibrator's, or, without one, the forecast's own interval, deferred
// because `uncalibrated_reason`. Thread-safe as decide() is.
[[nodiscard]] std::vector<Decision> decide_all(const SelectiveCalibrator* calibrator, std::span<const Candidate> candidates,
                                               std::span<const Forecast> forecasts, std::optional<double> reference_ms,
                                               std::string_view uncalibrated_reason);

}  // namespace gpuforecast
