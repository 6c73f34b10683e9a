#pragma once
// When to stop sampling one candidate. Criteria are separate types (fixed count, relative CI
// width, time cap, any-of) chosen by name with a parameter bag, as nvbench does; the
// measurement loop asks `is_finished` after every sample and never prints.
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

using CriterionParams = std::map<std::string, double>;

class StoppingCriterion {
 public:
  virtual ~StoppingCriterion() = default;
  // `samples_ms` are the kernel times so far; `elapsed_s` is measuring time so far (wall clock,
  // warm-up included, compile excluded).
  [[nodiscard]] virtual bool is_finished(std::span<const double> samples_ms, double elapsed_s) const = 0;
  [[nodiscard]] virtual std::string name() const = 0;
  // Name and parameters, e.g. "relative_ci(width=0.01, confidence=0.95, min_samples=10)".
  [[nodiscard]] virtual std::string describe() const = 0;
  // Of the criteria that make up this one, which fired (itself for simple criteria).
  [[nodiscard]] virtual std::string reason(std::span<const double> samples_ms, double elapsed_s) const {
    (void)samples_ms, (void)elapsed_s;
    return name();
  }
};

// Names: "fixed_count" {count}, "relative_ci" {width, confidence, min_samples},
// "time_cap" {seconds}, and "adaptive" = any of relative_ci {width=0.01, confidence=0.95,
// min_samples=10}, fixed_count {max_samples=200} and time_cap {max_seconds=1}.
// Unknown names or parameters throw invalid_argument_error listing what is accepted.
[[nodiscard]] std::unique_ptr<StoppingCriterion> make_stopping_criterion(std::string_view name,
                                                                         const CriterionParams& params = {});
[[nodiscard]] std::vector<std::string> stopping_criterion_names();

// Stops when any of its parts stops.
class AnyOfCriterion final : public StoppingCriterion {
 public:
  explicit AnyOfCriterion(std::vector<std::unique_ptr<StoppingCriterion>> parts);
  [[nodiscard]] bool is_finished(std::span<const double> samples_ms, double elapsed_s) const override;
  [[nodiscard]] std::string name() const override { return "any_of"; }
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::string reason(std::span<const double> samples_ms, double elapsed_s) const override;

 private:
  std::vector<std::unique_ptr<StoppingCriterion>> m_parts;
};

}  // namespace gpuforecast
