#pragma once
// One assignment of values to the parameters of a TuningSpace (a Config), and the values
// themselves: an integer, a floating-point number or a string, as Kernel Tuner and T1 allow.
#include <compare>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class Value {
 public:
  Value() = default;
  Value(std::int64_t v) : m_v(v) {}                    // NOLINT: implicit by design
  Value(int v) : m_v(static_cast<std::int64_t>(v)) {}  // NOLINT
  Value(double v) : m_v(v) {}                          // NOLINT
  Value(std::string v) : m_v(std::move(v)) {}          // NOLINT
  Value(const char* v) : m_v(std::string(v)) {}        // NOLINT

  [[nodiscard]] bool is_int() const noexcept { return m_v.index() == 0; }
  [[nodiscard]] bool is_float() const noexcept { return m_v.index() == 1; }
  [[nodiscard]] bool is_number() const noexcept { return m_v.index() != 2; }
  [[nodiscard]] bool is_string() const noexcept { return m_v.index() == 2; }

  // Numeric value; throws invalid_argument_error for strings.
  [[nodiscard]] double as_double() const;
  // Integer value; throws for strings and for non-integral floats.
  [[nodiscard]] std::int64_t as_int() const;
  // The string; throws for numbers.
  [[nodiscard]] const std::string& as_string() const;

  // Python's str(): "16", "0.5", "1.0", "abc". Used for Kernel Tuner cache keys.
  [[nodiscard]] std::string to_string() const;

  // Numbers compare by value (1 == 1.0); strings after numbers.
  friend bool operator==(const Value& a, const Value& b) noexcept;
  friend std::partial_ordering operator<=>(const Value& a, const Value& b) noexcept;

 private:
  std::variant<std::int64_t, double, std::string> m_v{std::int64_t{0}};
};

// Parameter names are shared by every Config of a space: a search holds millions of configs.
using ParameterNames = std::shared_ptr<const std::vector<std::string>>;

class Config {
 public:
  Config() = default;
  // values[i] is the value of (*names)[i]; sizes must agree (throws invalid_argument_error).
  Config(ParameterNames names, std::vector<Value> values);

  [[nodiscard]] std::size_t size() const noexcept { return m_values.size(); }
  [[nodiscard]] const std::vector<std::string>& names() const;
  [[nodiscard]] const ParameterNames& shared_names() const noexcept { return m_names; }
  [[nodiscard]] const std::vector<Value>& values() const noexcept { return m_values; }
  [[nodiscard]] std::vector<Value>& values() noexcept { return m_values; }
  [[nodiscard]] const Value& operator[](std::size_t i) const { return m_values[i]; }

  // Value by parameter name; throws invalid_argument_error naming the parameter if absent.
  [[nodiscard]] const Value& at(std::string_view name) const;
  [[nodiscard]] const Value* find(std::string_view name) const noexcept;

  // Kernel Tuner's cache key: values joined by ',' in parameter order ("16,1,1,1,0,0,0,1,15,15").
  [[nodiscard]] std::string key() const;
  // Human form for messages: "block_size_x=16, block_size_y=1, ...".
  [[nodiscard]] std::string to_string() const;
  // The inverse of to_string(), for command lines: "block_size_x=16,method=\"fast\",ratio=0.5".
  // A value is an integer or a number (nan and inf included) when it reads whole as one, else a
  // string (quotes optional). "" is the empty configuration. Throws invalid_argument_error
  // naming the item that is not NAME=VALUE.
  [[nodiscard]] static Config parse(std::string_view text);

  friend bool operator==(const Config& a, const Config& b) noexcept { return a.m_values == b.m_values; }

 private:
  ParameterNames m_names;
  std::vector<Value> m_values;
};

}  // namespace gpuforecast
