#include "calibration/cross_device_calibration.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>

#include "calibration/device_adaptation.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

constexpr std::size_t never = static_cast<std::size_t>(-1);

void check_options(const CrossDeviceOptions& o) {
  if (o.samples > 0 && o.samples < 3)
    throw invalid_argument_error(fmt::format(
        "cross-device calibration: {} measurements of the new device are too few to fit a correction (0, or at least 3)",
        o.samples));
  if (o.samples == 0 && o.calibration.needs_reference())
    throw invalid_argument_error(
        "cross-device calibration: the wrong_bin loss and the top-bin confidence need a measured reference, so K >= 3");
  if (!(o.check_max_loss >= 0 && o.check_max_loss <= 1))
    throw invalid_argument_error(
        fmt::format("cross-device calibration: check_max_loss must lie in [0, 1], got {}", o.check_max_loss));
  if (o.steps < 2)
    throw invalid_argument_error(fmt::format("cross-device calibration: need at least 2 steps, got {}", o.steps));
  if (!(o.start_fraction > 0 && o.start_fraction < 1))
    throw invalid_argument_error(
        fmt::format("cross-device calibration: start_fraction must lie in (0, 1), got {}", o.start_fraction));
  if (!(o.calibration.delta > 0 && o.calibration.delta < 1) || !(o.calibration.risk_alpha > 0 && o.calibration.risk_alpha < 1))
    throw invalid_argument_error(fmt::format("cross-device calibration: risk_alpha {} and delta {} must lie in (0, 1)",
                                             o.calibration.risk_alpha, o.calibration.delta));
}

// What the K measurements of a device give: the forecast correction and the reference runtime.
// One function for the rehearsal GPUs and the new one, so that both follow the same procedure.
struct DeviceSample {
  ForecastCorrection correction;
  std::optional<double> reference_ms;
};

DeviceSample learn_from_samples(std::span<const Forecast> forecasts, std::span<const double> observed_ms,
                                const CrossDeviceOptions& o) {
  DeviceSample s;
  if (forecasts.empty()) return s;
  s.correction = fit_forecast_correction(forecasts, observed_ms, o.fit_slope);
  if (o.calibration.needs_reference()) s.reference_ms = *std::min_element(observed_ms.begin(), observed_ms.end());
  return s;
}

// A rehearsal GPU after its K draws: its other configurations, corrected, and the K themselves.
struct Rehearsed {
  std::vector<Candidate> k_candidates;
  std::vector<Forecast> k_forecasts;
  std::vector<double> k_observed_ms;
  std::vector<Candidate> candidates;
  std::vector<Forecast> forecasts;
  std::vector<double> observed_ms;
  std::optional<double> reference_ms;
};

// With views, the K points stack them: each of the K by a fit on the other K - 1 (so that the
// correction and the check fitted on them see honest errors), every other point by the fit on all K.
constexpr std::size_t min_stacking_samples = 4;

Rehearsed rehearse(const RehearsalDevice& d, std::size_t index, const CrossDeviceOptions& o) {
  const std::size_t n = d.candidates.size();
  const bool views = !d.views.empty();
  if ((views ? d.views.size() : d.forecasts.size()) != n || d.observed_ms.size() != n)
    throw invalid_argument_error(fmt::format("rehearsal device {}: {} candidates, {} {} and {} runtimes", d.name, n,
                                             views ? d.views.size() : d.forecasts.size(),
                                             views ? "views" : "forecasts", d.observed_ms.size()));
  if (n <= o.samples)
    throw invalid_argument_error(fmt::format(
        "rehearsal device {}: {} successful runs, need more than the K = {} that adapt", d.name, n, o.samples));
  if (views && o.samples < min_stacking_samples)
    throw invalid_argument_error(fmt::format("rehearsal device {}: stacking views needs K >= {}, got {}", d.name,
                                             min_stacking_samples, o.samples));
  for (std::size_t i = 0; i < n; ++i)
    if (!(d.observed_ms[i] > 0) || !std::isfinite(d.observed_ms[i]))
      throw invalid_argument_error(fmt::format("rehearsal device {}: runtime {} ({}) is {} ms", d.name, i,
                                               d.candidates[i].describe(), d.observed_ms[i]));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Each device its own stream, so adding a device leaves the others' draws as they were.
  std::mt19937_64 rng(o.calibration.seed * 0x9e3779b97f4a7c15ULL + index);
  std::shuffle(order.begin(), order.end(), rng);
  Rehearsed r;
  std::vector<ViewForecasts> k_views;
  for (std::size_t j = 0; j < o.samples; ++j) {
    r.k_candidates.push_back(d.candidates[order[j]]);
    r.k_observed_ms.push_back(d.observed_ms[order[j]]);
    if (views)
      k_views.push_back(d.views[order[j]]);
    else
      r.k_forecasts.push_back(d.forecasts[order[j]]);
  }
  std::optional<ViewStacking> stacking;
  if (views) {
    stacking = fit_view_stacking(k_views, r.k_observed_ms);
    r.k_forecasts = stack_leaving_each_out(k_views, r.k_observed_ms);
  }
  const DeviceSample s = learn_from_samples(r.k_forecasts, r.k_observed_ms, o);
  r.reference_ms = s.reference_ms;
  for (std::size_t j = o.samples; j < n; ++j) {
    const std::size_t i = order[j];
    r.candidates.push_back(d.candidates[i]);
    r.forecasts.push_back(s.correction.apply(stacking ? stacking->apply(d.views[i]) : d.forecasts[i]));
    r.observed_ms.push_back(d.observed_ms[i]);
  }
  return r;
}

// The check a GPU's own K measurements make: the share of them that are losses when each is
// forecast as the other K - 1 would correct it (leave one out), scored under the rule's loss.
double check_loss_share(std::span<const Candidate> c, std::span<const Forecast> f, std::span<const double> t,
                        const MondrianConformal& conformal, const CrossDeviceOptions& o) {
  if (c.size() < o.check_min_samples) return 0;
  std::size_t losses = 0;
  std::vector<Forecast> kf;
  std::vector<double> kt;
  for (std::size_t j = 0; j < c.size(); ++j) {
    kf.clear();
    kt.clear();
    for (std::size_t i = 0; i < c.size(); ++i)
      if (i != j) {
        kf.push_back(f[i]);
        kt.push_back(t[i]);
      }
    const DeviceSample s = learn_from_samples(kf, kt, o);
    Forecast g = s.correction.apply(f[j]);
    if (s.reference_ms) g.bin_probabilities = bin_probabilities(g, conformal.interval(c[j], g), o.calibration.alpha, *s.reference_ms);
    losses += deferral_loss(o.calibration, g, t[j], s.reference_ms) > 0.5;
  }
  return static_cast<double>(losses) / static_cast<double>(c.size());
}

bool passes_check(double loss_share, const CrossDeviceOptions& o) { return loss_share <= o.check_max_loss; }

// One rehearsal GPU's points as the rule sees them, most confident first.
struct ScoredPoints {
  std::vector<double> confidence;  // -inf for a forecast deferred whatever its confidence (p_fail)
  std::vector<double> loss;
};

ScoredPoints score(const Rehearsed& r, const MondrianConformal& conformal, const CalibrationOptions& o) {
  std::vector<std::pair<double, double>> pts;
  pts.reserve(r.candidates.size());
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    Forecast f = r.forecasts[i];
    const Interval iv = conformal.interval(r.candidates[i], f);
    if (r.reference_ms) f.bin_probabilities = bin_probabilities(f, iv, o.alpha, *r.reference_ms);
    const double conf =
        f.p_fail > o.max_p_fail ? -std::numeric_limits<double>::infinity() : confidence_score(o.confidence, f, iv);
    pts.emplace_back(conf, deferral_loss(o, f, r.observed_ms[i], r.reference_ms));
  }
  std::sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  ScoredPoints s;
  for (const auto& [c, l] : pts) {
    s.confidence.push_back(c);
    s.loss.push_back(l);
  }
  return s;
}

// Answered and lost when a GPU answers its `share` most confident configurations: a prefix of its
// sorted points (never one deferred whatever its confidence).
std::pair<std::size_t, std::size_t> answered_at(const ScoredPoints& s, double share) {
  const auto finite = static_cast<std::size_t>(
      std::partition_point(s.confidence.begin(), s.confidence.end(), [](double c) { return std::isfinite(c); }) -
      s.confidence.begin());
  const std::size_t n =
      std::min(finite, static_cast<std::size_t>(std::ceil(share * static_cast<double>(s.confidence.size()) - 1e-9)));
  const double losses = std::accumulate(s.loss.begin(), s.loss.begin() + static_cast<std::ptrdiff_t>(n), 0.0);
  return {n, static_cast<std::size_t>(std::lround(losses))};
}

// The sequence: evenly spaced shares from start_fraction to all, fixed before any data is seen.
std::vector<CrossDeviceStep> share_sequence(const CrossDeviceOptions& o) {
  std::vector<CrossDeviceStep> steps;
  for (std::size_t i = 0; i < o.steps; ++i)
    steps.push_back({o.start_fraction + (1 - o.start_fraction) * static_cast<double>(i) /
                                            static_cast<double>(o.steps - 1),
                     0, false});
  return steps;
}

// Intervals of corrected forecasts, one calibration pooled over the rehearsal GPUs.
MondrianConformal pooled_conformal(const std::vector<Rehearsed>& rehearsed, const CalibrationOptions& co) {
  std::vector<Candidate> c;
  std::vector<Forecast> f;
  std::vector<double> t;
  for (const auto& r : rehearsed) {
    c.insert(c.end(), r.candidates.begin(), r.candidates.end());
    f.insert(f.end(), r.forecasts.begin(), r.forecasts.end());
    t.insert(t.end(), r.observed_ms.begin(), r.observed_ms.end());
  }
  MondrianConformal conformal(co.alpha, co.score, GroupBy::none, co.min_group_size);
  conformal.fit(c, f, t);
  return conformal;
}

// One rehearsal GPU's risk curve over the steps, and the first step at which it exceeded alpha.
RehearsalOutcome risk_curve(const std::string& name, const ScoredPoints& scored, double check_loss,
                            const std::vector<CrossDeviceStep>& steps, double alpha) {
  RehearsalOutcome out{name, scored.confidence.size(), check_loss, 0, 0, never, {}};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto [answered, losses] = answered_at(scored, steps[i].share);
    out.risks.push_back(answered ? static_cast<double>(losses) / static_cast<double>(answered) : 0);
    if (out.failed_at == never && static_cast<double>(losses) > alpha * static_cast<double>(answered)) out.failed_at = i;
  }
  return out;
}

// The walk: k from n and delta, then the largest share before more than k curves have failed.
void walk_shares(CrossDeviceRule& rule) {
  const auto& co = rule.options.calibration;
  const double slots = co.delta * static_cast<double>(rule.devices + 1) + 1e-9;
  const bool enough = slots >= 1;
  rule.allowed_failures = enough ? static_cast<std::size_t>(std::floor(slots)) - 1 : 0;
  for (std::size_t i = 0; i < rule.steps.size(); ++i) {
    auto& step = rule.steps[i];
    for (const auto& out : rule.outcomes) step.failed += out.failed_at <= i;
    step.certified = enough && step.failed <= rule.allowed_failures && (i == 0 || rule.steps[i - 1].certified);
    if (step.certified) {
      rule.any_valid = true;
      rule.share = step.share;
    }
  }
}

}  // namespace

CrossDeviceRule rehearse_new_device(std::span<const RehearsalDevice> devices, const CrossDeviceOptions& o) {
  check_options(o);
  if (devices.empty()) throw invalid_argument_error("cross-device calibration needs at least one rehearsal device");
  CrossDeviceRule rule;
  rule.options = o;
  rule.options.calibration.group_by = GroupBy::none;
  rule.devices = devices.size();
  rule.stacked_views = !devices.front().views.empty();
  for (const auto& d : devices)
    if (d.views.empty() == rule.stacked_views)
      throw invalid_argument_error(fmt::format(
          "cross-device calibration: rehearsal device {} has {} where {} has {}: every device has views, or none",
          d.name, d.views.empty() ? "no views" : "views", devices.front().name, rule.stacked_views ? "views" : "none"));
  rule.steps = share_sequence(o);

  std::vector<Rehearsed> rehearsed;
  for (std::size_t u = 0; u < devices.size(); ++u) rehearsed.push_back(rehearse(devices[u], u, o));
  rule.conformal = pooled_conformal(rehearsed, rule.options.calibration);
  std::vector<ScoredPoints> unchecked;
  std::vector<double> checks;
  for (std::size_t u = 0; u < devices.size(); ++u) {
    const Rehearsed& r = rehearsed[u];
    checks.push_back(check_loss_share(r.k_candidates, r.k_forecasts, r.k_observed_ms, rule.conformal, o));
    unchecked.push_back(score(r, rule.conformal, rule.options.calibration));
  }
  // The rule under one check limit: a GPU whose own K measurements fail the check answers
  // nothing, here as on a new GPU.
  std::vector<ScoredPoints> scored;
  const auto walk_with_check = [&](double limit) {
    CrossDeviceRule r = rule;
    r.options.check_max_loss = limit;
    scored = unchecked;
    for (std::size_t u = 0; u < devices.size(); ++u) {
      if (!passes_check(checks[u], r.options))
        std::fill(scored[u].confidence.begin(), scored[u].confidence.end(), -std::numeric_limits<double>::infinity());
      r.outcomes.push_back(risk_curve(devices[u].name, scored[u], checks[u], r.steps, o.calibration.risk_alpha));
    }
    walk_shares(r);
    return r;
  };
  if (o.choose_check) {
    double best_limit = 0, best_answered = -1;
    for (const double limit : CrossDeviceOptions::check_limits) {
      const CrossDeviceRule r = walk_with_check(limit);
      double answered = 0;
      for (const double c : checks) answered += r.any_valid && c <= limit ? r.share : 0.0;
      if (answered > best_answered + 1e-12) best_answered = answered, best_limit = limit;
    }
    rule = walk_with_check(best_limit);
  } else {
    rule = walk_with_check(o.check_max_loss);
  }
  for (std::size_t u = 0; u < devices.size() && rule.any_valid; ++u)
    std::tie(rule.outcomes[u].answered, rule.outcomes[u].losses) = answered_at(scored[u], rule.share);
  return rule;
}

namespace {

NewDeviceCalibration adapt_forecasts(const CrossDeviceRule& rule, const std::string& device,
                                     std::span<const Candidate> candidates, std::span<const Forecast> forecasts,
                                     std::span<const double> observed_ms, std::span<const Candidate> space,
                                     std::span<const Forecast> space_forecasts) {
  const CrossDeviceOptions& o = rule.options;
  if (candidates.size() != o.samples || forecasts.size() != o.samples || observed_ms.size() != o.samples)
    throw invalid_argument_error(fmt::format(
        "the cross-device rule was rehearsed for K = {} measurements of a new device; got {} candidates, {} forecasts "
        "and {} runtimes",
        o.samples, candidates.size(), forecasts.size(), observed_ms.size()));
  if (space.empty() || space.size() != space_forecasts.size())
    throw invalid_argument_error(fmt::format("adapting to {}: {} configurations to decide and {} forecasts of them",
                                             device, space.size(), space_forecasts.size()));
  auto check_device = [&](const Candidate& c, std::size_t i, const char* what) {
    if (!c.device || c.device->name != device)
      throw invalid_argument_error(
          fmt::format("adapting to {}: {} {} ({}) is of another device", device, what, i, c.describe()));
  };
  for (std::size_t i = 0; i < candidates.size(); ++i) check_device(candidates[i], i, "measurement");
  for (std::size_t i = 0; i < space.size(); ++i) check_device(space[i], i, "configuration");
  const DeviceSample s = learn_from_samples(forecasts, observed_ms, o);
  CalibrationOptions co = o.calibration;
  if (s.reference_ms) co.reference_ms = *s.reference_ms;
  DeviceCheck check;
  check.loss_share = check_loss_share(candidates, forecasts, observed_ms, rule.conformal, o);
  check.passed = passes_check(check.loss_share, o);

  // The confidence that answers the certified share of the space, scored as decide() will.
  std::vector<double> confidence;
  for (std::size_t i = 0; i < space.size(); ++i) {
    Forecast f = s.correction.apply(space_forecasts[i]);
    const Interval iv = rule.conformal.interval(space[i], f);
    if (s.reference_ms) f.bin_probabilities = bin_probabilities(f, iv, co.alpha, *s.reference_ms);
    if (!(f.p_fail > co.max_p_fail)) confidence.push_back(confidence_score(co.confidence, f, iv));
  }
  std::sort(confidence.begin(), confidence.end(), std::greater<>());
  const auto answered = std::min(
      confidence.size(), static_cast<std::size_t>(std::ceil(rule.share * static_cast<double>(space.size()) - 1e-9)));
  LttResult d;
  d.alpha = co.risk_alpha;
  d.delta = co.delta;
  d.any_valid = rule.any_valid && check.passed && answered > 0;
  d.threshold = d.any_valid ? confidence[answered - 1] : std::numeric_limits<double>::infinity();
  d.coverage = d.any_valid ? rule.share : 0;
  std::size_t losses = 0;
  for (const auto& out : rule.outcomes) {
    d.calibration_size += out.configurations;
    d.accepted += out.answered;
    losses += out.losses;
  }
  d.empirical_risk = d.accepted ? static_cast<double>(losses) / static_cast<double>(d.accepted) : 0;
  d.risk_upper_bound = binomial_upper_bound(losses, d.accepted, co.delta);
  SelectiveCalibrator c = SelectiveCalibrator::from_parts(co, rule.conformal, std::move(d));
  c.restrict_to_device(DeviceScope{device, s.correction, o.samples});
  return {std::move(c), check, std::nullopt};
}

}  // namespace

NewDeviceCalibration adapt_with_rule(const CrossDeviceRule& rule, const std::string& device,
                                     std::span<const Candidate> candidates, std::span<const Forecast> forecasts,
                                     std::span<const double> observed_ms, std::span<const Candidate> space,
                                     std::span<const Forecast> space_forecasts) {
  if (rule.stacked_views)
    throw invalid_argument_error(fmt::format(
        "adapting to {}: the cross-device rule was rehearsed on views, so the new device's forecasts must come as views "
        "too",
        device));
  return adapt_forecasts(rule, device, candidates, forecasts, observed_ms, space, space_forecasts);
}

NewDeviceCalibration adapt_with_rule(const CrossDeviceRule& rule, const std::string& device,
                                     std::span<const Candidate> candidates, std::span<const ViewForecasts> views,
                                     std::span<const double> observed_ms, std::span<const Candidate> space,
                                     std::span<const ViewForecasts> space_views) {
  if (!rule.stacked_views)
    throw invalid_argument_error(fmt::format(
        "adapting to {}: the cross-device rule was rehearsed on single forecasts, not on views", device));
  if (views.size() != rule.options.samples || observed_ms.size() != rule.options.samples)
    throw invalid_argument_error(fmt::format(
        "the cross-device rule was rehearsed for K = {} measurements of a new device; got {} views and {} runtimes",
        rule.options.samples, views.size(), observed_ms.size()));
  if (views.size() < min_stacking_samples)
    throw invalid_argument_error(fmt::format("adapting to {}: stacking views needs K >= {}, got {}", device,
                                             min_stacking_samples, views.size()));
  const ViewStacking stacking = fit_view_stacking(views, observed_ms);
  const std::vector<Forecast> k_forecasts = stack_leaving_each_out(views, observed_ms);
  const std::vector<Forecast> space_forecasts = stacking.apply(space_views);
  NewDeviceCalibration out =
      adapt_forecasts(rule, device, candidates, k_forecasts, observed_ms, space, space_forecasts);
  out.stacking = stacking;
  return out;
}

std::string CrossDeviceRule::describe() const {
  const auto& co = options.calibration;
  std::string s = fmt::format(
      "rehearsed on {} GPUs, each playing a new one adapted from K = {} of its measurements; a new GPU's risk among "
      "answered forecasts ({}) exceeds {} with probability <= {} if it is exchangeable with them (drawn like them)",
      devices, options.samples, to_string(co.loss), co.risk_alpha, co.delta);
  if (co.delta * static_cast<double>(devices + 1) < 1 - 1e-9)
    return s + fmt::format("; {} GPUs are too few for delta {} (need {}): every forecast is deferred", devices, co.delta,
                           static_cast<std::size_t>(std::ceil(1 / co.delta - 1 - 1e-9)));
  if (!any_valid)
    return s + fmt::format("; more than {} of them exceed {} already at the first share: every forecast is deferred",
                           allowed_failures, co.risk_alpha);
  s += fmt::format("; answer the {:.0f}% most confident ({}) of a GPU's configurations (at most {} of the {} above {} "
                   "there)",
                   100 * share, to_string(co.confidence), allowed_failures, devices, co.risk_alpha);
  if (options.samples >= options.check_min_samples)
    s += fmt::format("; a GPU whose K lose more than {:.0f}% when each is forecast from the others answers nothing ({})",
                     100 * options.check_max_loss,
                     options.choose_check ? "the limit under which the rehearsal GPUs answer the most" : "as given");
  return s;
}

}  // namespace gpuforecast
