#include "gpuforecast/core/parameter_schema.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/edit_distance.hpp"
#include "core/parameter_check.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

struct ValueLess {
  bool operator()(const Value& a, const Value& b) const { return (a <=> b) == std::partial_ordering::less; }
};

enum class Kind { integer, real, text, mixed };

Kind kind_of(const std::vector<Value>& values) {
  bool ints = true, numbers = true, strings = true;
  for (const auto& v : values) {
    ints = ints && v.is_int();
    numbers = numbers && v.is_number();
    strings = strings && v.is_string();
  }
  if (values.empty()) return Kind::mixed;
  return ints ? Kind::integer : numbers ? Kind::real : strings ? Kind::text : Kind::mixed;
}

}  // namespace

namespace detail {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string list_values(const std::vector<Value>& values) {
  std::string out;
  if (values.size() <= 12) {
    for (const auto& v : values) out += (out.empty() ? "" : ", ") + v.to_string();
    return out;
  }
  for (std::size_t i = 0; i < 3; ++i) out += values[i].to_string() + ", ";
  return fmt::format("{}..., {} ({} values)", out, values.back().to_string(), values.size());
}

[[noreturn]] void refuse_configuration(std::size_t row, const Config& config, std::string parameter,
                                       std::string expected, const std::string& message) {
  throw invalid_configuration_error(row, std::move(parameter), std::move(expected),
                                    fmt::format("configuration {} [{}]: {}", row, config.to_string(), message));
}

std::vector<std::size_t> match_names(const std::vector<std::string>& known, const std::string& what,
                                     const Config& config, std::size_t row) {
  const std::string expected = join_names(known);
  if (config.size() == 0)
    refuse_configuration(row, config, "", expected,
                         fmt::format("is empty; {} has the {} parameters {}", what, known.size(), expected));
  const auto& names = config.names();
  std::vector<std::size_t> index(names.size());
  std::vector<bool> given(known.size(), false);
  std::vector<std::string> unknown;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto it = std::find(known.begin(), known.end(), names[i]);
    if (it == known.end()) {
      unknown.push_back(names[i]);
      continue;
    }
    index[i] = static_cast<std::size_t>(it - known.begin());
    if (given[index[i]])
      refuse_configuration(row, config, names[i], expected, fmt::format("parameter {} is given twice", names[i]));
    given[index[i]] = true;
  }
  std::vector<std::string> missing;
  for (std::size_t k = 0; k < known.size(); ++k)
    if (!given[k]) missing.push_back(known[k]);
  if (!unknown.empty()) {
    const std::string& u = unknown.front();
    std::string hint;
    std::size_t best = u.size() / 3 + 2;  // a few typos, not a different word
    for (const auto& m : missing.empty() ? known : missing) {
      const std::size_t d = detail::edit_distance(u, m);
      if (d < best) best = d, hint = fmt::format(" (did you mean {}?)", m);
    }
    refuse_configuration(row, config, u, expected,
                         fmt::format("unknown parameter {}{}; {} has the parameters {}", u, hint, what, expected));
  }
  if (!missing.empty())
    refuse_configuration(row, config, missing.front(), expected,
                         fmt::format("parameter{} {} missing; {} has the parameters {}", missing.size() > 1 ? "s" : "",
                                     join_names(missing) + (missing.size() > 1 ? " are" : " is"), what, expected));
  return index;
}

// Type and finiteness of one value against the values its parameter takes. The list of values
// is written out only to refuse: on the hot path (every value of every forecast) it is not.
void check_value(const Value& v, const std::string& name, const std::vector<Value>& values, const char* source,
                 const Config& config, std::size_t row) {
  const auto refuse_because = [&](auto&& message_for) {
    const std::string expected = list_values(values);
    refuse_configuration(row, config, name, expected, message_for(expected));
  };
  if (v.is_float() && !std::isfinite(v.as_double()))
    refuse_because([&](const std::string& e) {
      return fmt::format("{}={} is not a finite number ({}: {})", name, v.to_string(), source, e);
    });
  const Kind kind = kind_of(values);
  if (v.is_string() && (kind == Kind::integer || kind == Kind::real))
    refuse_because([&](const std::string& e) {
      return fmt::format("{}=\"{}\" is a string, but {} is a number ({}: {})", name, v.as_string(), name, source, e);
    });
  if (v.is_number() && kind == Kind::text)
    refuse_because([&](const std::string& e) {
      return fmt::format("{}={} is a number, but {} is a string ({}: {})", name, v.to_string(), name, source, e);
    });
  if (v.is_float() && kind == Kind::integer && v.as_double() != std::floor(v.as_double()))
    refuse_because([&](const std::string& e) {
      return fmt::format("{}={} is not an integer, but {} is ({}: {})", name, v.to_string(), name, source, e);
    });
}

}  // namespace detail

using detail::list_values;
using detail::refuse_configuration;
using detail::match_names;
using detail::check_value;

namespace {

std::string range_of(const std::vector<Value>& seen) {
  if (seen.empty()) return "nothing";
  if (seen.size() <= 6) return list_values(seen);
  return seen.front().to_string() + ".." + seen.back().to_string();
}

}  // namespace

std::vector<KernelSchema> KernelSchema::of(std::span<const Observation> observations) {
  struct Building {
    ParameterNames names;
    bool consistent = true;
    std::vector<std::set<Value, ValueLess>> values;
  };
  std::map<std::string, Building> by_kernel;
  for (const auto& o : observations) {
    const Config& c = o.candidate.config;
    Building& b = by_kernel[o.candidate.kernel];
    if (!b.consistent) continue;
    if (!b.names) {
      b.names = c.shared_names();
      b.values.resize(c.size());
    } else if (b.names != c.shared_names() && (!c.shared_names() || *b.names != c.names())) {
      b.consistent = false;
      continue;
    }
    for (std::size_t i = 0; i < c.size(); ++i) b.values[i].insert(c[i]);
  }
  std::vector<KernelSchema> out;
  for (auto& [kernel, b] : by_kernel) {
    if (!b.consistent || !b.names || b.names->empty()) continue;
    KernelSchema s;
    s.kernel = kernel;
    for (std::size_t i = 0; i < b.names->size(); ++i)
      s.parameters.push_back({(*b.names)[i], std::vector<Value>(b.values[i].begin(), b.values[i].end())});
    out.push_back(std::move(s));
  }
  return out;
}

std::string check_configuration(const KernelSchema& schema, const Config& config, std::size_t row) {
  detail::NameMatch match;
  return detail::check_configuration(schema, config, row, match);
}

namespace detail {

std::string check_configuration(const KernelSchema& schema, const Config& config, std::size_t row, NameMatch& match) {
  if (config.size() == 0 || match.schema != &schema || match.names != &config.names()) {
    std::vector<std::string> known;
    known.reserve(schema.parameters.size());
    for (const auto& p : schema.parameters) known.push_back(p.name);
    match.index = match_names(known, "kernel " + schema.kernel, config, row);
    match.schema = &schema;
    match.names = &config.names();
  }
  std::string extrapolated;
  for (std::size_t i = 0; i < config.size(); ++i) {
    const ParameterSchema& p = schema.parameters[match.index[i]];
    const Value& v = config[i];
    check_value(v, p.name, p.values, "seen in training", config, row);
    if (v.is_number() && !p.values.empty() && p.values.front().is_number() && v.as_double() < 0 &&
        p.values.front().as_double() >= 0)
      refuse_configuration(row, config, p.name, list_values(p.values),
                           fmt::format("{}={} is negative, but every value of {} seen in training is >= 0 (seen: {})",
                                       p.name, v.to_string(), p.name, list_values(p.values)));
    if (!std::binary_search(p.values.begin(), p.values.end(), v, ValueLess{}))
      extrapolated += fmt::format("{}{}={} (seen {})", extrapolated.empty() ? "" : ", ", p.name, v.to_string(),
                                  range_of(p.values));
  }
  return extrapolated.empty() ? extrapolated : "never seen in training: " + extrapolated;
}

}  // namespace detail

}  // namespace gpuforecast
