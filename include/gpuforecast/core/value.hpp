#pragma once
// A tunable parameter value: an integer, a floating-point number or a string,
// as Kernel Tuner and the T1 format allow.
#include <compare>
#include <cstdint>
#include <string>
#include <variant>
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

}  // namespace gpuforecast
