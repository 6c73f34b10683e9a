#include "gpuforecast/space/tuning_space.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_set>

#include "gpuforecast/core/error.hpp"
#include "core/parameter_check.hpp"
#include "space/compiled_constraints.hpp"

namespace gpuforecast {

namespace detail {
struct ListedConfigs {
  std::vector<Config> configs;
  std::unordered_set<std::string> keys;
};
}  // namespace detail

TuningSpace::TuningSpace(std::vector<Parameter> parameters, std::vector<std::string> constraints)
    : m_parameters(std::move(parameters)), m_constraints(std::move(constraints)) {
  std::set<std::string> seen;
  auto names = std::make_shared<std::vector<std::string>>();
  for (const auto& p : m_parameters) {
    if (p.name.empty()) throw invalid_argument_error("tuning parameter with an empty name");
    if (!seen.insert(p.name).second)
      throw invalid_argument_error(fmt::format("tuning parameter \"{}\" is declared twice", p.name));
    names->push_back(p.name);
  }
  m_names = std::move(names);
  m_compiled = detail::compile_constraints(m_parameters, m_constraints);
}

std::size_t TuningSpace::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < m_parameters.size(); ++i)
    if (m_parameters[i].name == name) return i;
  throw invalid_argument_error(fmt::format("the tuning space has no parameter \"{}\"", name));
}

std::uint64_t TuningSpace::cartesian_size() const noexcept {
  if (m_parameters.empty()) return 0;
  std::uint64_t n = 1;
  for (const auto& p : m_parameters) {
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(p.values.size()), &n))
      return std::numeric_limits<std::uint64_t>::max();  // saturates: "more than we can count"
  }
  return n;
}

bool TuningSpace::contains(const Config& config) const noexcept {
  if (config.size() != m_parameters.size()) return false;
  if (config.shared_names() && config.shared_names() != m_names && m_names && *config.shared_names() != *m_names)
    return false;
  for (std::size_t i = 0; i < m_parameters.size(); ++i) {
    const auto& vals = m_parameters[i].values;
    bool found = false;
    for (const auto& v : vals)
      if (v == config[i]) {
        found = true;
        break;
      }
    if (!found) return false;
  }
  return true;
}

bool TuningSpace::is_valid(const Config& config) const {
  if (!contains(config)) return false;
  const auto& cc = compiled_constraints(*this);
  if (!cc.constants_hold()) return false;
  if (cc.numeric) {
    // Searches call this for every candidate: numeric spaces take the evaluate_number path.
    std::vector<double> numbers(config.size());
    for (std::size_t i = 0; i < config.size(); ++i) numbers[i] = config[i].as_double();
    for (std::size_t level = 0; level < cc.by_level.size(); ++level)
      if (!cc.level_holds(level, numbers.data(), nullptr)) return false;
    return !m_members || m_members->keys.count(config.key()) != 0;
  }
  for (std::size_t c = 0; c < cc.expressions.size(); ++c) {
    const auto& used = cc.expressions[c].used_variables();
    if (used.empty()) continue;
    const Value r = cc.expressions[c].evaluate(config.values());
    if (r.is_string() ? r.as_string().empty() : r.as_double() == 0.0) return false;
  }
  return !m_members || m_members->keys.count(config.key()) != 0;
}

Config TuningSpace::make_config(std::vector<Value> values) const {
  if (values.size() != m_parameters.size())
    throw invalid_argument_error(fmt::format("make_config: {} values for a space of {} parameters", values.size(),
                                             m_parameters.size()));
  return Config(m_names, std::move(values));
}

TuningSpace TuningSpace::restricted_to(std::span<const Config> members) const {
  TuningSpace out = *this;
  auto listed = std::make_shared<detail::ListedConfigs>();
  std::vector<std::pair<std::vector<std::size_t>, const Config*>> ordered;
  for (const auto& c : members) {
    if (!contains(c))
      throw invalid_argument_error(fmt::format("cannot restrict the tuning space to [{}]: it is outside the parameters' values",
                                               c.to_string()));
    // Violates a constraint (or, restricting again, is not a member already), or is repeated.
    if (!is_valid(c) || !listed->keys.insert(c.key()).second) continue;
    std::vector<std::size_t> idx(c.size());
    for (std::size_t p = 0; p < c.size(); ++p) {
      const auto& vals = m_parameters[p].values;
      idx[p] = static_cast<std::size_t>(std::find(vals.begin(), vals.end(), c[p]) - vals.begin());
    }
    ordered.emplace_back(std::move(idx), &c);
  }
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  listed->configs.reserve(ordered.size());
  for (const auto& [idx, c] : ordered) listed->configs.push_back(Config(m_names, c->values()));
  out.m_members = std::move(listed);
  return out;
}

const std::vector<Config>* TuningSpace::members() const noexcept { return m_members ? &m_members->configs : nullptr; }

using detail::check_value;
using detail::join_names;
using detail::list_values;
using detail::match_names;
using detail::refuse_configuration;

std::string why_outside(const TuningSpace& space, const Config& c) {
  const auto& params = space.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& allowed = params[i].values;
    if (std::find(allowed.begin(), allowed.end(), c[i]) == allowed.end())
      return fmt::format("{}={} is not among the values of {} [{}]", params[i].name, c[i].to_string(), params[i].name,
                         list_values(allowed));
  }
  if (space.is_valid(c)) return {};
  std::string broken;
  std::size_t count = 0;
  for (const auto& constraint : space.constraints()) {
    const TuningSpace one(params, {constraint});
    if (!one.is_valid(one.make_config(c.values()))) broken += (count++ ? ", \"" : "\"") + constraint + "\"";
  }
  if (count == 0) return "is not among the configurations the space lists";
  return fmt::format("breaks the constraint{} {}", count > 1 ? "s" : "", broken);
}

void check_configuration(const TuningSpace& space, const Config& config, std::size_t row) {
  const auto& params = space.parameters();
  const auto index = match_names(*space.names(), "the space", config, row);
  std::vector<Value> ordered(params.size());
  for (std::size_t i = 0; i < config.size(); ++i) {
    const Parameter& p = params[index[i]];
    check_value(config[i], p.name, p.values, "the space's values", config, row);
    ordered[index[i]] = config[i];
  }
  const Config in_order = space.make_config(std::move(ordered));
  if (const std::string why = why_outside(space, in_order); !why.empty()) {
    // The parameter at fault when one value is outside its list; the whole configuration when
    // it breaks constraints.
    std::string parameter;
    std::string expected;
    for (const auto& p : params)
      if (std::find(p.values.begin(), p.values.end(), in_order.at(p.name)) == p.values.end()) {
        parameter = p.name;
        expected = list_values(p.values);
        break;
      }
    if (parameter.empty()) expected = join_names(space.constraints());
    refuse_configuration(row, config, parameter, expected, why);
  }
}

}  // namespace gpuforecast
