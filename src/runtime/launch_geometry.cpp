#include "runtime/launch_geometry.hpp"

#include <fmt/core.h>

#include <cctype>
#include <cmath>
#include <regex>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/space/expression.hpp"

namespace gpuforecast {

std::string LaunchGeometry::to_string() const {
  return fmt::format("grid ({},{},{}) block ({},{},{}) smem {}", grid[0], grid[1], grid[2], block[0], block[1],
                     block[2], shared_memory_bytes);
}

namespace {
// `max(p)` / `min(p)` of one parameter means "over its value list" in T1 sizes; with only a
// config at hand, the config's value is the best (and for one-valued parameters exact) answer.
std::string reduce_single_minmax(const std::string& expression, const Config& config) {
  static const std::regex single(R"(\b(max|min)\s*\(\s*([A-Za-z_][A-Za-z_0-9]*)\s*\))");
  std::string out;
  auto begin = std::sregex_iterator(expression.begin(), expression.end(), single);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    const std::string name = m[2].str();
    if (!config.find(name)) continue;
    out += expression.substr(last, static_cast<std::size_t>(m.position(0)) - last);
    out += "(" + name + ")";
    last = static_cast<std::size_t>(m.position(0) + m.length(0));
  }
  out += expression.substr(last);
  return out;
}

std::uint64_t as_size(double v, const std::string& what, const Config& config, bool allow_zero) {
  if (!std::isfinite(v) || v < 0 || (!allow_zero && v == 0) || v != std::floor(v) || v > 4.0e18)
    throw invalid_argument_error(
        fmt::format("{} evaluates to {} for [{}]: must be a {} integer", what, v, config.to_string(),
                    allow_zero ? "non-negative" : "positive"));
  return static_cast<std::uint64_t>(v);
}
}  // namespace

double evaluate_spec_expression(const std::string& expression, const Config& config,
                                std::span<const std::int64_t> problem_size) {
  std::vector<Value> ps(problem_size.begin(), problem_size.end());
  const ListBinding lists[] = {{"ProblemSize", ps}, {"problem_size", ps}};
  const Expression e = Expression::compile(reduce_single_minmax(expression, config), config.names(), lists);
  const Value v = e.evaluate(config.values());
  if (v.is_string())
    throw invalid_argument_error(fmt::format("expression \"{}\" gives a string for [{}]", expression, config.to_string()));
  return v.as_double();
}

LaunchGeometry compute_launch_geometry(const KernelSpec& spec, const Config& config,
                                       std::span<const std::int64_t> problem_size) {
  if (problem_size.empty()) problem_size = spec.problem_size;
  LaunchGeometry g;
  static const char* axis = "XYZ";
  for (int d = 0; d < 3; ++d) {
    const std::string what = fmt::format("LocalSize.{}", axis[d]);
    g.block[d] = as_size(evaluate_spec_expression(spec.local_size[d], config, problem_size), what, config, false);
  }
  for (int d = 0; d < 3; ++d) {
    if (!spec.grid_div[d].empty()) {
      double divisor = 1;
      for (const auto& div : spec.grid_div[d]) {
        const double v = evaluate_spec_expression(div, config, problem_size);
        divisor *= static_cast<double>(as_size(v, fmt::format("GridDiv{} entry \"{}\"", axis[d], div), config, false));
      }
      const double p = d < static_cast<int>(problem_size.size()) ? static_cast<double>(problem_size[d]) : 1.0;
      g.grid[d] = as_size(std::ceil(p / divisor), fmt::format("grid {}", axis[d]), config, false);
    } else {
      const double global = evaluate_spec_expression(spec.global_size[d], config, problem_size);
      const std::string what = fmt::format("GlobalSize.{}", axis[d]);
      if (spec.global_size_type == "OpenCL")
        g.grid[d] = as_size(std::ceil(static_cast<double>(as_size(global, what, config, false)) /
                                      static_cast<double>(g.block[d])),
                            what, config, false);
      else
        g.grid[d] = as_size(global, what, config, false);
    }
  }
  const std::string shared = spec.shared_memory.empty() ? "0" : spec.shared_memory;
  g.shared_memory_bytes = as_size(evaluate_spec_expression(shared, config, problem_size), "SharedMemory", config, true);
  return g;
}

}  // namespace gpuforecast
