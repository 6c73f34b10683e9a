#pragma once
// Mondrian (group-conditional) conformal: one calibration per group (kernel, device or both),
// so coverage holds inside each group and not only on average over groups.
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "calibration/split_conformal.hpp"
#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

enum class GroupBy { none, kernel, device, kernel_and_device };

[[nodiscard]] std::string_view to_string(GroupBy g) noexcept;
// "none", "kernel", "device", "kernel_device"; throws invalid_argument_error otherwise.
[[nodiscard]] GroupBy parse_group_by(std::string_view s);
// The group a candidate falls in: "" for none, "<kernel>", "<device>", "<kernel>@<device>".
[[nodiscard]] std::string group_key(GroupBy g, const Candidate& c);

class MondrianConformal {
 public:
  MondrianConformal() = default;
  // A group with fewer than `min_group_size` calibration points (and at least as many as a
  // finite quantile needs) is answered by the pooled calibration instead, stated in
  // `uses_pooled()`. Throws invalid_argument_error unless 0 < alpha < 1.
  MondrianConformal(double alpha, ConformalScore score, GroupBy group_by, std::size_t min_group_size = 30);

  void fit(std::span<const Candidate> candidates, std::span<const Forecast> forecasts,
           std::span<const double> observed_ms);

  [[nodiscard]] Interval interval(const Candidate& c, const Forecast& f) const;
  // The calibration that answers candidate c (its group's, or the pooled one).
  [[nodiscard]] const SplitConformal& calibration_for(const Candidate& c) const;
  [[nodiscard]] bool uses_pooled(const Candidate& c) const;

  [[nodiscard]] double alpha() const noexcept { return m_alpha; }
  [[nodiscard]] ConformalScore score() const noexcept { return m_score; }
  [[nodiscard]] GroupBy group_by() const noexcept { return m_group_by; }
  [[nodiscard]] const SplitConformal& pooled() const noexcept { return m_pooled; }
  [[nodiscard]] const std::map<std::string, SplitConformal, std::less<>>& groups() const noexcept { return m_groups; }
  [[nodiscard]] bool fitted() const noexcept { return m_pooled.fitted(); }

  void save(ArchiveWriter& w) const;
  static MondrianConformal load(ArchiveReader& r);

 private:
  double m_alpha = 0.1;
  ConformalScore m_score = ConformalScore::normalised_residual;
  GroupBy m_group_by = GroupBy::none;
  std::size_t m_min_group_size = 30;
  SplitConformal m_pooled;
  std::map<std::string, SplitConformal, std::less<>> m_groups;
};

}  // namespace gpuforecast
