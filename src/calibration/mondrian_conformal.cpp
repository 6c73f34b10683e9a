#include "calibration/mondrian_conformal.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "stats/conformal_quantile.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

std::string_view to_string(GroupBy g) noexcept {
  switch (g) {
    case GroupBy::none: return "none";
    case GroupBy::kernel: return "kernel";
    case GroupBy::device: return "device";
    case GroupBy::kernel_and_device: return "kernel_device";
  }
  return "?";
}

GroupBy parse_group_by(std::string_view s) {
  if (s == "none") return GroupBy::none;
  if (s == "kernel") return GroupBy::kernel;
  if (s == "device") return GroupBy::device;
  if (s == "kernel_device" || s == "kernel_and_device") return GroupBy::kernel_and_device;
  throw invalid_argument_error(
      fmt::format("unknown Mondrian grouping \"{}\" (expected none, kernel, device or kernel_device)", s));
}

std::string group_key(GroupBy g, const Candidate& c) {
  const std::string device = c.device ? c.device->name : std::string("?");
  switch (g) {
    case GroupBy::none: return {};
    case GroupBy::kernel: return c.kernel;
    case GroupBy::device: return device;
    case GroupBy::kernel_and_device: return c.kernel + "@" + device;
  }
  return {};
}

MondrianConformal::MondrianConformal(double alpha, ConformalScore score, GroupBy group_by, std::size_t min_group_size)
    : m_alpha(alpha), m_score(score), m_group_by(group_by), m_min_group_size(min_group_size) {
  check_alpha(alpha);
}

void MondrianConformal::fit(std::span<const Candidate> candidates, std::span<const Forecast> forecasts,
                            std::span<const double> observed_ms) {
  if (candidates.size() != forecasts.size() || candidates.size() != observed_ms.size())
    throw invalid_argument_error(fmt::format(
        "Mondrian calibration needs as many candidates, forecasts and runtimes; got {}, {} and {}",
        candidates.size(), forecasts.size(), observed_ms.size()));
  m_pooled = SplitConformal(m_alpha, m_score);
  m_pooled.fit(forecasts, observed_ms);
  m_groups.clear();
  if (m_group_by == GroupBy::none) return;
  std::map<std::string, std::vector<std::size_t>, std::less<>> members;
  for (std::size_t i = 0; i < candidates.size(); ++i) members[group_key(m_group_by, candidates[i])].push_back(i);
  // A group needs enough points for a finite quantile, and at least min_group_size to be
  // trusted on its own; smaller groups fall back to the pooled calibration.
  const auto finite_min = static_cast<std::size_t>(std::ceil(1.0 / m_alpha - 1.0 - 1e-9));
  const std::size_t needed = std::max(m_min_group_size, finite_min);
  for (const auto& [key, idx] : members) {
    if (idx.size() < needed) continue;
    std::vector<Forecast> f;
    std::vector<double> t;
    for (auto i : idx) {
      f.push_back(forecasts[i]);
      t.push_back(observed_ms[i]);
    }
    SplitConformal c(m_alpha, m_score);
    c.fit(f, t);
    m_groups.emplace(key, std::move(c));
  }
}

const SplitConformal& MondrianConformal::calibration_for(const Candidate& c) const {
  if (!fitted()) throw invalid_argument_error("Mondrian conformal used before fit()");
  if (m_group_by == GroupBy::none) return m_pooled;
  auto it = m_groups.find(group_key(m_group_by, c));
  return it == m_groups.end() ? m_pooled : it->second;
}

bool MondrianConformal::uses_pooled(const Candidate& c) const { return &calibration_for(c) == &m_pooled; }

Interval MondrianConformal::interval(const Candidate& c, const Forecast& f) const {
  return calibration_for(c).interval(f);
}

}  // namespace gpuforecast
