#pragma once
// Trust on a new GPU from what the training GPUs taught: cross-device calibration.
//
// K measurements of a new GPU are too few to certify a deferral rule on their own. But every
// GPU the model was trained on can play the new one: a model that never saw it forecasts it,
// K of its measurements correct those forecasts exactly as they would on a new GPU, and its
// other configurations, ranked by the confidence of their forecasts, give a risk curve: the
// realised risk among its s most confident configurations, for each share s of a fixed
// sequence. One curve per rehearsal GPU. Shares, not confidence values, because a model is more
// or less sure of a whole GPU at once: a threshold on the confidence itself answers most of one
// GPU and nothing of the next, while a share means the same on every GPU (and ranks only need
// forecasts, which exist for every configuration of the new GPU before anything is measured).
//
// The rule: walk the shares from the smallest up and stop before the first share at which more
// than k rehearsal curves have exceeded alpha (at it or at a smaller share), with k the largest
// integer such that (k + 1) / (n + 1) <= delta. If the new GPU is exchangeable with the n
// rehearsal GPUs (drawn like them), its realised risk at the chosen share exceeds alpha with
// probability at most delta: it is wrongly trusted only if at most k of the other n failed no
// later than it did, and at most k + 1 of n + 1 exchangeable curves can be in that position. The
// unit of the guarantee is the GPU, not the configuration, so it needs n >= 1 / delta - 1
// rehearsal GPUs (9 at delta = 0.1) and says nothing of a GPU unlike them (group the rehearsal
// GPUs so that they are alike: the same vendor, for instance).
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibration/selective_calibrator.hpp"
#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "internal_api.hpp"

namespace gpuforecast GPUFORECAST_INTERNAL_API {

// One training GPU (one kernel measured on it) playing the new GPU.
struct RehearsalDevice {
  std::string name;  // shown in reports, e.g. "convolution_milo/A100"
  std::vector<Candidate> candidates;
  std::vector<Forecast> forecasts;  // by a model that saw neither this GPU nor the new one
  std::vector<double> observed_ms;
  // Instead of `forecasts` (left empty then): one per candidate, its forecast for each GPU that
  // model was trained on (view_stacking.hpp). The K measurements stack the views before they
  // correct the stacked forecasts; every device of a rule must have views, or none.
  std::vector<ViewForecasts> views;
};

struct CrossDeviceOptions {
  // K, the new GPU's measurements: all of them fit the log-affine forecast correction (offset
  // only below 8, none at 0) and the fastest is the wrong_bin loss's reference (so that loss
  // needs K >= 1). A rule rehearsed for K serves only K.
  std::size_t samples = 20;
  bool fit_slope = true;
  // Loss, confidence score, interval alpha, risk_alpha, delta and the seed of the K draws.
  CalibrationOptions calibration;
  // The sequence: `steps` evenly spaced shares of a GPU's configurations answered, from
  // `start_fraction` to all. A start among the very most confident few would let one or two
  // unlucky losses of one GPU end the walk; coarse steps give a curve fewer chances to fail.
  std::size_t steps = 20;
  double start_fraction = 0.05;
  // The K measurements check the GPU before anything is answered: each is forecast as the other
  // K - 1 would correct it, and a GPU on which more than `check_max_loss` of them are losses
  // answers nothing. The rehearsal GPUs pass the same check, so one the model cannot forecast
  // defers instead of failing, and the rule stays exchangeable. Below `check_min_samples`
  // measurements there is no check.
  double check_max_loss = 0.1;
  std::size_t check_min_samples = 8;
  // The rehearsal chooses check_max_loss among check_limits (and the rule keeps the choice): the
  // limit under which a GPU like the rehearsal GPUs answers the most, on average over them (one
  // that fails the check answers nothing, one that passes the rule's share); ties keep the
  // smaller limit. A strict limit defers GPUs the rule would trust; a loose one lets rehearsal
  // GPUs the model forecasts badly into the walk, where they end it early. The choice is a
  // function of the rehearsal GPUs alone, never of the new GPU. False: check_max_loss as given.
  bool choose_check = true;
  static constexpr double check_limits[] = {0.05, 0.1, 0.15, 0.2, 0.25};
};

// The check a new GPU's K measurements make: the share of them lost when each is left out, and
// whether that passes (a GPU that fails answers nothing).
struct DeviceCheck {
  double loss_share = 0;
  bool passed = true;
};

// One rehearsal GPU at the chosen threshold.
struct RehearsalOutcome {
  std::string name;
  std::size_t configurations = 0;  // judged: its configurations other than the K
  double check_loss = 0;           // the check's share of its K lost when left out
  std::size_t answered = 0;
  std::size_t losses = 0;
  // Index in CrossDeviceRule::steps of the first threshold at which its risk exceeded alpha
  // (npos: never).
  std::size_t failed_at = static_cast<std::size_t>(-1);
  std::vector<double> risks;  // its realised risk at each step's share
};

struct CrossDeviceStep {
  double share = 0;        // of each GPU's configurations, its most confident answered
  std::size_t failed = 0;  // rehearsal GPUs whose risk has exceeded alpha by this step
  bool certified = false;
};

struct CrossDeviceRule {
  CrossDeviceOptions options;
  MondrianConformal conformal;  // intervals of corrected forecasts, pooled over the rehearsal GPUs
  std::size_t devices = 0;             // n
  bool stacked_views = false;          // rehearsed on views: a new GPU must bring views too
  std::size_t allowed_failures = 0;    // k; meaningful only when n >= 1 / delta - 1
  bool any_valid = false;
  double share = 0;  // certified: a new GPU answers this share of its most confident configurations
  std::vector<CrossDeviceStep> steps;
  std::vector<RehearsalOutcome> outcomes;
  // One paragraph: the GPUs, k of n, the threshold, and the exchangeability the guarantee assumes.
  [[nodiscard]] std::string describe() const;
};

// Rehearses the new-GPU procedure on every device and derives the rule. Throws
// invalid_argument_error for mismatched sizes, a device with fewer than K + 1 successful runs,
// wrong_bin with K = 0, or bad options (naming the device or option).
[[nodiscard]] CrossDeviceRule rehearse_new_device(std::span<const RehearsalDevice> devices,
                                                  const CrossDeviceOptions& options = {});

// What a new GPU gets from the rule: its calibration, and the check its K measurements made
// (a failed check answers nothing, and says why).
struct NewDeviceCalibration {
  SelectiveCalibrator calibrator;
  DeviceCheck check;
  // With views: how the new GPU's forecasts are made from them. The calibrator decides stacked
  // forecasts: stack a configuration's views with it before calling decide().
  std::optional<ViewStacking> stacking;
};

// The new GPU's calibration: its K measurements (exactly options.samples, all of `device`) fit
// the correction and the reference, and must pass the check; the rule's intervals decide, with
// the confidence threshold that answers the certified share of `space`, the configurations of the
// new GPU to be decided (forecasts only, nothing measured; the K among them or not). Forecasts of
// other devices are deferred (as adapt_to_device's calibrations do). Throws
// invalid_argument_error for a K other than the rule's, a measurement or configuration of another
// device, or an empty space.
[[nodiscard]] NewDeviceCalibration adapt_with_rule(const CrossDeviceRule& rule, const std::string& device,
                                                   std::span<const Candidate> candidates,
                                                   std::span<const Forecast> forecasts,
                                                   std::span<const double> observed_ms,
                                                   std::span<const Candidate> space,
                                                   std::span<const Forecast> space_forecasts);

// The same for a rule rehearsed on views: the K measurements' views, stacked by a fit on the
// other K - 1 for each, correct and check; the space's views are stacked by the fit on all K.
// Throws invalid_argument_error when the rule was rehearsed without views (and the overload above
// throws when it was rehearsed with them), or for K < 4.
[[nodiscard]] NewDeviceCalibration adapt_with_rule(const CrossDeviceRule& rule, const std::string& device,
                                                   std::span<const Candidate> candidates,
                                                   std::span<const ViewForecasts> views,
                                                   std::span<const double> observed_ms,
                                                   std::span<const Candidate> space,
                                                   std::span<const ViewForecasts> space_views);

}  // namespace gpuforecast
