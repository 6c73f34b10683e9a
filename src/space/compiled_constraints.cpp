#include "space/compiled_constraints.hpp"

#include <algorithm>

namespace gpuforecast::detail {

namespace {
bool truthy(const Value& v) {
  if (v.is_string()) return !v.as_string().empty();
  return v.as_double() != 0.0;
}
}  // namespace

bool CompiledConstraints::holds(std::size_t c, const double* numbers, const std::vector<Value>* values) const {
  const Expression& e = expressions[c];
  if (numbers) return e.evaluate_number(std::span<const double>(numbers, numeric_values.size())) != 0.0;
  return truthy(e.evaluate(*values));
}

bool CompiledConstraints::level_holds(std::size_t level, const double* numbers, const std::vector<Value>* values) const {
  for (std::size_t c : by_level[level])
    if (!holds(c, numbers, values)) return false;
  return true;
}

bool CompiledConstraints::constants_hold() const {
  // Constant constraints read no variable, but evaluation still wants one slot per parameter.
  const std::vector<Value> none(by_level.size());
  for (std::size_t c : constant)
    if (!truthy(expressions[c].evaluate(none))) return false;
  return true;
}

std::shared_ptr<const CompiledConstraints> compile_constraints(const std::vector<Parameter>& parameters,
                                                               const std::vector<std::string>& constraints) {
  auto cc = std::make_shared<CompiledConstraints>();
  std::vector<std::string> names;
  names.reserve(parameters.size());
  for (const auto& p : parameters) names.push_back(p.name);
  cc->by_level.resize(parameters.size());
  for (std::size_t c = 0; c < constraints.size(); ++c) {
    cc->expressions.push_back(Expression::compile(constraints[c], names));
    const auto& used = cc->expressions.back().used_variables();
    if (used.empty()) cc->constant.push_back(c);
    else cc->by_level[*std::max_element(used.begin(), used.end())].push_back(c);
  }
  cc->numeric_values.resize(parameters.size());
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    for (const auto& v : parameters[p].values) {
      if (!v.is_number()) {
        cc->numeric = false;
        break;
      }
      cc->numeric_values[p].push_back(v.as_double());
    }
  }
  // A float value that is not an integer would be bound as a float by evaluate_number too,
  // so only strings force the generic path.
  if (!cc->numeric) cc->numeric_values.assign(parameters.size(), {});
  return cc;
}

}  // namespace gpuforecast::detail

namespace gpuforecast {

const detail::CompiledConstraints& compiled_constraints(const TuningSpace& space) {
  static const detail::CompiledConstraints empty;
  return space.m_compiled ? *space.m_compiled : empty;
}

}  // namespace gpuforecast
