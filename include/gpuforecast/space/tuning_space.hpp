#pragma once
// Named tunable parameters with value lists, plus constraint expressions (T1 `Conditions`), and
// the check of a configuration against them. In space/ with the expressions it compiles.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct Parameter {
  std::string name;
  std::vector<Value> values;  // in the order given by the space's author
};

namespace detail {
struct CompiledConstraints;  // the expressions compiled once (src/space/compiled_constraints.hpp)
struct ListedConfigs;        // the member list of a restricted space
}

class TuningSpace {
 public:
  TuningSpace() = default;
  // Throws expression_error if a constraint does not parse or names an unknown parameter.
  TuningSpace(std::vector<Parameter> parameters, std::vector<std::string> constraints);

  [[nodiscard]] const std::vector<Parameter>& parameters() const noexcept { return m_parameters; }
  [[nodiscard]] const std::vector<std::string>& constraints() const noexcept { return m_constraints; }
  [[nodiscard]] const ParameterNames& names() const noexcept { return m_names; }
  [[nodiscard]] std::size_t index_of(const std::string& name) const;  // throws if unknown

  // Cartesian size, ignoring constraints.
  [[nodiscard]] std::uint64_t cartesian_size() const noexcept;
  // Every value is in its parameter's list.
  [[nodiscard]] bool contains(const Config& config) const noexcept;
  // contains() and every constraint holds.
  [[nodiscard]] bool is_valid(const Config& config) const;
  // Makes a Config of this space from values in parameter order.
  [[nodiscard]] Config make_config(std::vector<Value> values) const;

  // This space, restricted to the listed configurations: is_valid() holds for a member that
  // also satisfies the constraints, and for nothing else. This is Kernel Tuner's tune_cache
  // space (the configurations a cache holds with a valid time), for data whose constraints are
  // not known. Restricting a restricted space keeps what both lists hold. Throws
  // invalid_argument_error naming a member that is outside the parameters.
  [[nodiscard]] TuningSpace restricted_to(std::span<const Config> members) const;
  // The valid members of a restricted space, in enumeration order (first parameter slowest);
  // nullptr when the space is not restricted.
  [[nodiscard]] const std::vector<Config>* members() const noexcept;

 private:
  std::vector<Parameter> m_parameters;
  std::vector<std::string> m_constraints;
  ParameterNames m_names;
  std::shared_ptr<const detail::CompiledConstraints> m_compiled;
  std::shared_ptr<const detail::ListedConfigs> m_members;
  friend const detail::CompiledConstraints& compiled_constraints(const TuningSpace&);
};

// The name, type and finiteness checks of a kernel's schema (core/parameter_schema.hpp) against
// a space, then every value must be in its parameter's list and every constraint must hold (the
// error names the constraints broken). Throws invalid_configuration_error numbered `row`.
void check_configuration(const TuningSpace& space, const Config& config, std::size_t row);

// Empty when `config` (in the space's parameter order) lies in the space, otherwise why not:
// the first value outside its list, or the constraints it breaks.
[[nodiscard]] std::string why_outside(const TuningSpace& space, const Config& config);

}  // namespace gpuforecast
