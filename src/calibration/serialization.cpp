#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "calibration/adaptive_conformal.hpp"
#include "calibration/mondrian_conformal.hpp"
#include "calibration/selective_calibrator.hpp"
#include "calibration/split_conformal.hpp"
#include "gpuforecast/core/archive.hpp"

// Kept apart from the math so that using a calibrator does not pull in the archive code.
namespace gpuforecast {

void SplitConformal::save(ArchiveWriter& w) const {
  w.f64(m_alpha);
  w.u32(static_cast<std::uint32_t>(m_score));
  w.f64(m_quantile);
  w.f64s(m_scores);
}

SplitConformal SplitConformal::load(ArchiveReader& r) {
  SplitConformal c;
  c.m_alpha = r.f64();
  if (!(c.m_alpha > 0 && c.m_alpha < 1)) r.fail(fmt::format("conformal alpha {} outside (0, 1)", c.m_alpha));
  const auto s = r.u32();
  if (s > 1) r.fail(fmt::format("unknown conformal score id {}", s));
  c.m_score = static_cast<ConformalScore>(s);
  c.m_quantile = r.f64();
  c.m_scores = r.f64s();
  return c;
}


void MondrianConformal::save(ArchiveWriter& w) const {
  w.f64(m_alpha);
  w.u32(static_cast<std::uint32_t>(m_score));
  w.u32(static_cast<std::uint32_t>(m_group_by));
  w.u64(m_min_group_size);
  m_pooled.save(w);
  w.u64(m_groups.size());
  for (const auto& [k, c] : m_groups) {
    w.str(k);
    c.save(w);
  }
}

MondrianConformal MondrianConformal::load(ArchiveReader& r) {
  MondrianConformal m;
  m.m_alpha = r.f64();
  if (!(m.m_alpha > 0 && m.m_alpha < 1)) r.fail(fmt::format("conformal alpha {} outside (0, 1)", m.m_alpha));
  const auto s = r.u32();
  if (s > 1) r.fail(fmt::format("unknown conformal score id {}", s));
  m.m_score = static_cast<ConformalScore>(s);
  const auto g = r.u32();
  if (g > 3) r.fail(fmt::format("unknown Mondrian grouping id {}", g));
  m.m_group_by = static_cast<GroupBy>(g);
  m.m_min_group_size = r.u64();
  m.m_pooled = SplitConformal::load(r);
  const auto n = r.u64();
  for (std::uint64_t i = 0; i < n; ++i) {
    auto key = r.str();
    m.m_groups.emplace(std::move(key), SplitConformal::load(r));
  }
  return m;
}


void AdaptiveConformal::save(ArchiveWriter& w) const {
  w.f64(m_alpha);
  w.f64(m_gamma);
  w.f64(m_alpha_t);
  w.f64(m_alpha_1);
  w.u32(static_cast<std::uint32_t>(m_score));
  w.u64(m_window);
  w.f64s(std::vector<double>(m_scores.begin(), m_scores.end()));
  w.u64(m_steps);
  w.u64(m_misses);
}

AdaptiveConformal AdaptiveConformal::load(ArchiveReader& r) {
  AdaptiveConformal a;
  a.m_alpha = r.f64();
  a.m_gamma = r.f64();
  a.m_alpha_t = r.f64();
  a.m_alpha_1 = r.f64();
  const auto s = r.u32();
  if (s > 1) r.fail(fmt::format("unknown conformal score id {}", s));
  a.m_score = static_cast<ConformalScore>(s);
  a.m_window = r.u64();
  const auto scores = r.f64s();
  a.m_scores.assign(scores.begin(), scores.end());
  a.m_sorted = scores;
  std::sort(a.m_sorted.begin(), a.m_sorted.end());
  a.m_steps = r.u64();
  a.m_misses = r.u64();
  return a;
}


void SelectiveCalibrator::save(ArchiveWriter& w) const {
  const auto& o = m_options;
  w.f64(o.alpha);
  w.u32(static_cast<std::uint32_t>(o.score));
  w.u32(static_cast<std::uint32_t>(o.group_by));
  w.u64(o.min_group_size);
  w.f64(o.risk_alpha);
  w.f64(o.delta);
  w.u32(static_cast<std::uint32_t>(o.loss));
  w.f64(o.tolerance);
  w.u32(static_cast<std::uint32_t>(o.confidence));
  w.u64(o.max_thresholds);
  w.f64(o.deferral_fraction);
  w.f64(o.max_p_fail);
  w.f64(o.aci_gamma);
  w.u64(o.aci_window);
  w.u64(o.seed);
  m_conformal.save(w);
  const auto& d = m_deferral;
  w.f64(d.alpha);
  w.f64(d.delta);
  w.f64(d.threshold);
  w.u32(d.any_valid ? 1 : 0);
  w.u64(d.calibration_size);
  w.u64(d.accepted);
  w.f64(d.coverage);
  w.f64(d.empirical_risk);
  w.f64(d.risk_upper_bound);
  w.u64(d.steps.size());
  for (const auto& s : d.steps) {
    w.f64(s.threshold);
    w.u64(s.accepted);
    w.u64(s.losses);
    w.f64(s.p_value);
    w.u32(s.rejected ? 1 : 0);
  }
  w.u32(m_adaptive ? 1 : 0);
  if (m_adaptive) m_adaptive->save(w);
  // Version 2.
  w.f64(o.reference_ms);
  w.u32(m_scope ? 1 : 0);
  if (m_scope) {
    w.str(m_scope->device);
    w.f64(m_scope->correction.offset);
    w.f64(m_scope->correction.slope);
    w.u64(m_scope->adapt_points);
    // Version 3.
    w.u64(m_scope->view_devices.size());
    for (const auto& v : m_scope->view_devices) w.str(v);
    w.f64(m_scope->stacking.intercept);
    w.f64s(m_scope->stacking.weights);
  }
}

SelectiveCalibrator SelectiveCalibrator::load(ArchiveReader& r, std::uint32_t version) {
  SelectiveCalibrator c;
  auto& o = c.m_options;
  auto enum_u32 = [&](std::uint32_t max, const char* what) {
    const auto v = r.u32();
    if (v > max) r.fail(std::string("unknown ") + what + " id " + std::to_string(v));
    return v;
  };
  o.alpha = r.f64();
  o.score = static_cast<ConformalScore>(enum_u32(1, "conformal score"));
  o.group_by = static_cast<GroupBy>(enum_u32(3, "Mondrian grouping"));
  o.min_group_size = r.u64();
  o.risk_alpha = r.f64();
  o.delta = r.f64();
  o.loss = static_cast<DeferralLoss>(enum_u32(1, "deferral loss"));
  o.tolerance = r.f64();
  o.confidence = static_cast<ConfidenceScore>(enum_u32(2, "confidence score"));
  o.max_thresholds = r.u64();
  o.deferral_fraction = r.f64();
  o.max_p_fail = r.f64();
  o.aci_gamma = r.f64();
  o.aci_window = r.u64();
  o.seed = r.u64();
  for (double a : {o.alpha, o.risk_alpha, o.delta})
    if (!(a > 0 && a < 1)) r.fail("calibration level " + std::to_string(a) + " outside (0, 1)");
  c.m_conformal = MondrianConformal::load(r);
  auto& d = c.m_deferral;
  d.alpha = r.f64();
  d.delta = r.f64();
  d.threshold = r.f64();
  d.any_valid = r.u32() != 0;
  d.calibration_size = r.u64();
  d.accepted = r.u64();
  d.coverage = r.f64();
  d.empirical_risk = r.f64();
  d.risk_upper_bound = r.f64();
  const auto n = r.u64();
  if (n > 1'000'000) r.fail("implausible number of Learn-then-Test steps " + std::to_string(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    LttStep s;
    s.threshold = r.f64();
    s.accepted = r.u64();
    s.losses = r.u64();
    s.p_value = r.f64();
    s.rejected = r.u32() != 0;
    d.steps.push_back(s);
  }
  if (r.u32() != 0) c.m_adaptive = AdaptiveConformal::load(r);
  if (version < 2) return c;
  o.reference_ms = r.f64();
  if (!(o.reference_ms >= 0) || !std::isfinite(o.reference_ms))
    r.fail("calibration reference runtime " + std::to_string(o.reference_ms) + " ms is not a finite value >= 0");
  if (r.u32() != 0) {
    DeviceScope s;
    s.device = r.str();
    s.correction.offset = r.f64();
    s.correction.slope = r.f64();
    s.adapt_points = r.u64();
    if (!std::isfinite(s.correction.offset) || !(s.correction.slope > 0) || !std::isfinite(s.correction.slope))
      r.fail("device correction of " + s.device + " is not finite with a positive slope");
    if (version >= 3) {
      const auto views = r.u64();
      if (views > 10'000) r.fail("implausible number of view devices " + std::to_string(views));
      for (std::uint64_t v = 0; v < views; ++v) s.view_devices.push_back(r.str());
      s.stacking.intercept = r.f64();
      s.stacking.weights = r.f64s();
      if (s.stacking.weights.size() != s.view_devices.size())
        r.fail(fmt::format("device {}: {} view devices and {} stacking weights", s.device, s.view_devices.size(),
                           s.stacking.weights.size()));
      const bool finite = std::isfinite(s.stacking.intercept) &&
                          std::all_of(s.stacking.weights.begin(), s.stacking.weights.end(),
                                      [](double w) { return std::isfinite(w) && w >= 0; });
      if (!finite) r.fail("view stacking of " + s.device + " is not finite with non-negative weights");
    }
    c.m_scope = std::move(s);
  }
  return c;
}

}  // namespace gpuforecast
