#include "gpuforecast/core/config.hpp"

#include <fmt/core.h>

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

}  // namespace gpuforecast
