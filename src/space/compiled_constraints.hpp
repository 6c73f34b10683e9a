#pragma once
// A TuningSpace's constraints compiled once, grouped by the last parameter each one reads so
// that enumeration can test a constraint as soon as its parameters are bound.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/space/expression.hpp"

namespace gpuforecast::detail {

struct CompiledConstraints {
  std::vector<Expression> expressions;
  // by_level[p]: constraints whose last parameter (in parameter order) is p.
  std::vector<std::vector<std::size_t>> by_level;
  // Constraints that read no parameter at all ("1 < 2"): checked once, before anything else.
  std::vector<std::size_t> constant;
  // Every value of every parameter is a number: the evaluate_number fast path applies.
  bool numeric = true;
  std::vector<std::vector<double>> numeric_values;  // [parameter][value index]

  // Constraint c holds for a full or partial assignment (only its parameters need be bound).
  [[nodiscard]] bool holds(std::size_t c, const double* numbers, const std::vector<Value>* values) const;
  // Every constraint of `level` holds.
  [[nodiscard]] bool level_holds(std::size_t level, const double* numbers, const std::vector<Value>* values) const;
  [[nodiscard]] bool constants_hold() const;
};

std::shared_ptr<const CompiledConstraints> compile_constraints(const std::vector<Parameter>& parameters,
                                                               const std::vector<std::string>& constraints);

}  // namespace gpuforecast::detail

namespace gpuforecast {
// Declared as a friend of TuningSpace; defined in src/space/compiled_constraints.cpp.
const detail::CompiledConstraints& compiled_constraints(const TuningSpace& space);
}  // namespace gpuforecast
