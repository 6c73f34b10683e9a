#include "gpuforecast/core/config.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <memory>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {
const std::vector<std::string>& no_names() {
  static const std::vector<std::string> empty;
  return empty;
}
}  // namespace

Config::Config(ParameterNames names, std::vector<Value> values) : m_names(std::move(names)), m_values(std::move(values)) {
  const std::size_t n = m_names ? m_names->size() : 0;
  if (n != m_values.size())
    throw invalid_argument_error(
        fmt::format("config has {} values for {} parameter names", m_values.size(), n));
}

const std::vector<std::string>& Config::names() const { return m_names ? *m_names : no_names(); }

const Value* Config::find(std::string_view name) const noexcept {
  if (!m_names) return nullptr;
  for (std::size_t i = 0; i < m_names->size(); ++i)
    if ((*m_names)[i] == name) return &m_values[i];
  return nullptr;
}

const Value& Config::at(std::string_view name) const {
  if (const Value* v = find(name)) return *v;
  throw invalid_argument_error(fmt::format("config [{}] has no parameter \"{}\"", to_string(), name));
}

std::string Config::key() const {
  std::string out;
  for (std::size_t i = 0; i < m_values.size(); ++i) {
    if (i) out += ',';
    out += m_values[i].to_string();
  }
  return out;
}

std::string Config::to_string() const {
  std::string out;
  const auto& n = names();
  for (std::size_t i = 0; i < m_values.size(); ++i) {
    if (i) out += ", ";
    out += n[i];
    out += '=';
    out += m_values[i].to_string();
  }
  return out;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Value parse_value(std::string_view text) {
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front())
    return Value(std::string(text.substr(1, text.size() - 2)));
  std::int64_t i = 0;
  if (auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
      ec == std::errc() && p == text.data() + text.size())
    return Value(i);
  double d = 0;
  if (auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      ec == std::errc() && p == text.data() + text.size())
    return Value(d);
  return Value(std::string(text));
}

}  // namespace

Config Config::parse(std::string_view text) {
  auto names = std::make_shared<std::vector<std::string>>();
  std::vector<Value> values;
  if (trim(text).empty()) return Config(std::move(names), std::move(values));
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = trim(text.substr(start, comma - start));
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || trim(item.substr(0, eq)).empty())
      throw invalid_argument_error(
          fmt::format("configuration \"{}\": \"{}\" is not NAME=VALUE", text, item));
    names->emplace_back(trim(item.substr(0, eq)));
    values.push_back(parse_value(trim(item.substr(eq + 1))));
    start = comma + 1;
  }
  return Config(std::move(names), std::move(values));
}

}  // namespace gpuforecast
