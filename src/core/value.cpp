#include "gpuforecast/core/config.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cmath>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

double Value::as_double() const {
  if (const auto* i = std::get_if<std::int64_t>(&m_v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&m_v)) return *d;
  throw invalid_argument_error(fmt::format("value \"{}\" is a string, a number was expected",
                                           std::get<std::string>(m_v)));
}

std::int64_t Value::as_int() const {
  if (const auto* i = std::get_if<std::int64_t>(&m_v)) return *i;
  const double d = as_double();
  if (std::floor(d) != d || !std::isfinite(d))
    throw invalid_argument_error(fmt::format("value {} is not an integer", to_string()));
  return static_cast<std::int64_t>(d);
}

const std::string& Value::as_string() const {
  if (const auto* s = std::get_if<std::string>(&m_v)) return *s;
  throw invalid_argument_error(fmt::format("value {} is a number, a string was expected", to_string()));
}

std::string Value::to_string() const {
  if (const auto* i = std::get_if<std::int64_t>(&m_v)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&m_v)) return *s;
  const double d = std::get<double>(m_v);
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip representation, as Python's repr; integral floats keep ".0".
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string out(buf, end);
  if (out.find_first_of(".eEn") == std::string::npos) out += ".0";
  return out;
}

bool operator==(const Value& a, const Value& b) noexcept {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return std::get<std::int64_t>(a.m_v) == std::get<std::int64_t>(b.m_v);
    return a.as_double() == b.as_double();
  }
  if (a.is_string() && b.is_string()) return std::get<std::string>(a.m_v) == std::get<std::string>(b.m_v);
  return false;
}

std::partial_ordering operator<=>(const Value& a, const Value& b) noexcept {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return std::get<std::int64_t>(a.m_v) <=> std::get<std::int64_t>(b.m_v);
    return a.as_double() <=> b.as_double();
  }
  if (a.is_string() && b.is_string()) return std::get<std::string>(a.m_v) <=> std::get<std::string>(b.m_v);
  return a.is_number() ? std::partial_ordering::less : std::partial_ordering::greater;
}

}  // namespace gpuforecast
