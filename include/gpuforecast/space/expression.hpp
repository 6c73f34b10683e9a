#pragma once
// The T1 `Conditions` language: a small Python subset. Compiled once to a flat program, then
// evaluated fast (>= 1e6 evaluations/s on one core; see benchmarks/expression_speed).
//   literals: integers, floats, True/False, strings in quotes (for == and !=)
//   operators: + - * / // % ** unary -, comparisons < <= > >= == != (chained: a < b <= c),
//              and / or / not, parentheses, indexing name[i] (ProblemSize[0])
//   functions: min, max, abs, int, float, len (min/max/len also over a bound list)
// Semantics follow Python: // floors, % takes the divisor's sign, / is true division,
// and/or short-circuit, ints stay exact (int64) until mixed with floats.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

namespace detail {
struct ExpressionProgram;
}

// A name bound to a constant list when the expression is compiled: `ProblemSize` bound to
// [4096, 4096] makes `ProblemSize[0]` work; a parameter bound to its value list makes
// `max(filter_width)` work (T1 argument sizes use both).
struct ListBinding {
  std::string name;
  std::vector<Value> values;
};

class Expression {
 public:
  Expression() = default;
  // `variables` are the names the expression may use; variable i is bound to values[i] at
  // evaluation. Throws expression_error (expression, 1-based column) on syntax errors and on
  // unknown names.
  static Expression compile(std::string_view source, std::span<const std::string> variables);
  // As above, plus names bound to constant lists (indexing, min/max over a list, len).
  static Expression compile(std::string_view source, std::span<const std::string> variables,
                            std::span<const ListBinding> lists);

  [[nodiscard]] Value evaluate(std::span<const Value> values) const;
  // Fast path for all-numeric bindings.
  [[nodiscard]] double evaluate_number(std::span<const double> values) const;
  [[nodiscard]] bool test(std::span<const double> values) const { return evaluate_number(values) != 0.0; }
  [[nodiscard]] const std::string& source() const noexcept;
  // Indices (into `variables`) of the names the expression uses.
  [[nodiscard]] const std::vector<std::size_t>& used_variables() const noexcept;

 private:
  std::shared_ptr<const detail::ExpressionProgram> m_program;
};

}  // namespace gpuforecast
