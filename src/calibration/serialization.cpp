#include <fmt/core.h>

#include <algorithm>

#include "gpuforecast/calibration/adaptive_conformal.hpp"
#include "gpuforecast/calibration/mondrian_conformal.hpp"
#include "gpuforecast/calibration/split_conformal.hpp"
#include "gpuforecast/surrogate/archive.hpp"

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


}  // namespace gpuforecast
