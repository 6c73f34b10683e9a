#pragma once
// Stop when measuring one candidate has taken `seconds` of wall time (at least one sample).
#include "runtime/stopping_criterion.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class TimeCapCriterion final : public StoppingCriterion {
 public:
  explicit TimeCapCriterion(double seconds);  // > 0
  [[nodiscard]] bool is_finished(std::span<const double> samples_ms, double elapsed_s) const override;
  [[nodiscard]] std::string name() const override { return "time_cap"; }
  [[nodiscard]] std::string describe() const override;

 private:
  double m_seconds;
};

}  // namespace gpuforecast
