#include "runtime/stopping_criterion.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "gpuforecast/core/error.hpp"
#include "runtime/fixed_count_criterion.hpp"
#include "runtime/relative_ci_criterion.hpp"
#include "runtime/statistics.hpp"
#include "runtime/time_cap_criterion.hpp"

namespace gpuforecast {

FixedCountCriterion::FixedCountCriterion(std::size_t count) : m_count(count) {
  if (count == 0) throw invalid_argument_error("fixed_count: count must be at least 1");
}
bool FixedCountCriterion::is_finished(std::span<const double> samples_ms, double) const {
  return samples_ms.size() >= m_count;
}
std::string FixedCountCriterion::describe() const { return fmt::format("fixed_count(count={})", m_count); }

RelativeCiCriterion::RelativeCiCriterion(double width, double confidence, std::size_t min_samples)
    : m_width(width), m_confidence(confidence), m_min_samples(min_samples) {
  if (!(width > 0 && width < 1))
    throw invalid_argument_error(fmt::format("relative_ci: width must be in (0, 1), got {}", width));
  if (!(confidence > 0 && confidence < 1))
    throw invalid_argument_error(fmt::format("relative_ci: confidence must be in (0, 1), got {}", confidence));
  m_min_samples = std::max({m_min_samples, std::size_t{1}, min_samples_for_interval(confidence)});
}
bool RelativeCiCriterion::is_finished(std::span<const double> samples_ms, double) const {
  if (samples_ms.size() < m_min_samples) return false;
  return median_interval(samples_ms, m_confidence).relative_half_width <= m_width;
}
std::string RelativeCiCriterion::describe() const {
  return fmt::format("relative_ci(width={}, confidence={}, min_samples={})", m_width, m_confidence, m_min_samples);
}

TimeCapCriterion::TimeCapCriterion(double seconds) : m_seconds(seconds) {
  if (!(seconds > 0)) throw invalid_argument_error(fmt::format("time_cap: seconds must be > 0, got {}", seconds));
}
bool TimeCapCriterion::is_finished(std::span<const double> samples_ms, double elapsed_s) const {
  return !samples_ms.empty() && elapsed_s >= m_seconds;
}
std::string TimeCapCriterion::describe() const { return fmt::format("time_cap(seconds={})", m_seconds); }

AnyOfCriterion::AnyOfCriterion(std::vector<std::unique_ptr<StoppingCriterion>> parts) : m_parts(std::move(parts)) {
  if (m_parts.empty()) throw invalid_argument_error("any_of: needs at least one criterion");
}
bool AnyOfCriterion::is_finished(std::span<const double> samples_ms, double elapsed_s) const {
  return std::any_of(m_parts.begin(), m_parts.end(),
                     [&](const auto& p) { return p->is_finished(samples_ms, elapsed_s); });
}
std::string AnyOfCriterion::describe() const {
  std::string s = "any_of(";
  for (std::size_t i = 0; i < m_parts.size(); ++i) s += (i ? ", " : "") + m_parts[i]->describe();
  return s + ")";
}
std::string AnyOfCriterion::reason(std::span<const double> samples_ms, double elapsed_s) const {
  for (const auto& p : m_parts)
    if (p->is_finished(samples_ms, elapsed_s)) return p->reason(samples_ms, elapsed_s);
  return "not finished";
}

namespace {
class ParamReader {
 public:
  ParamReader(std::string_view criterion, const CriterionParams& params, std::vector<std::string> known)
      : m_criterion(criterion), m_params(params) {
    for (const auto& [k, v] : params) {
      if (std::find(known.begin(), known.end(), k) == known.end()) {
        std::string list;
        for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
        throw invalid_argument_error(fmt::format("stopping criterion \"{}\" has no parameter \"{}\" (accepted: {})",
                                                 criterion, k, list.empty() ? "none" : list));
      }
      if (!std::isfinite(v))
        throw invalid_argument_error(fmt::format("stopping criterion \"{}\": parameter {} is {}", criterion, k, v));
    }
  }
  [[nodiscard]] double get(const std::string& key, double fallback) const {
    auto it = m_params.find(key);
    return it == m_params.end() ? fallback : it->second;
  }
  [[nodiscard]] std::size_t count(const std::string& key, double fallback) const {
    double v = get(key, fallback);
    if (v < 0 || v != std::floor(v))
      throw invalid_argument_error(
          fmt::format("stopping criterion \"{}\": {} must be a non-negative integer, got {}", m_criterion, key, v));
    return static_cast<std::size_t>(v);
  }

 private:
  std::string_view m_criterion;
  const CriterionParams& m_params;
};
}  // namespace

std::vector<std::string> stopping_criterion_names() { return {"adaptive", "fixed_count", "relative_ci", "time_cap"}; }

std::unique_ptr<StoppingCriterion> make_stopping_criterion(std::string_view name, const CriterionParams& params) {
  if (name == "fixed_count") {
    ParamReader p(name, params, {"count"});
    return std::make_unique<FixedCountCriterion>(p.count("count", 32));
  }
  if (name == "relative_ci") {
    ParamReader p(name, params, {"width", "confidence", "min_samples"});
    return std::make_unique<RelativeCiCriterion>(p.get("width", 0.01), p.get("confidence", 0.95),
                                                 p.count("min_samples", 10));
  }
  if (name == "time_cap") {
    ParamReader p(name, params, {"seconds"});
    return std::make_unique<TimeCapCriterion>(p.get("seconds", 1.0));
  }
  if (name == "adaptive") {
    ParamReader p(name, params, {"width", "confidence", "min_samples", "max_samples", "max_seconds"});
    std::vector<std::unique_ptr<StoppingCriterion>> parts;
    parts.push_back(std::make_unique<RelativeCiCriterion>(p.get("width", 0.01), p.get("confidence", 0.95),
                                                          p.count("min_samples", 10)));
    parts.push_back(std::make_unique<FixedCountCriterion>(p.count("max_samples", 200)));
    parts.push_back(std::make_unique<TimeCapCriterion>(p.get("max_seconds", 1.0)));
    return std::make_unique<AnyOfCriterion>(std::move(parts));
  }
  std::string list;
  for (const auto& n : stopping_criterion_names()) list += (list.empty() ? "" : ", ") + n;
  throw invalid_argument_error(fmt::format("unknown stopping criterion \"{}\" (known: {})", name, list));
}

}  // namespace gpuforecast
