#pragma once
// Stop when the confidence interval of the median is within +-width of the median
// (nvbench's stdrel criterion, with an order-statistic interval instead of a normal one).
#include <cstddef>

#include "runtime/stopping_criterion.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class RelativeCiCriterion final : public StoppingCriterion {
 public:
  // width in (0, 1) (0.01 = +-1%), confidence in (0, 1); min_samples >= 1 (raised to what the
  // confidence needs, see min_samples_for_interval).
  RelativeCiCriterion(double width = 0.01, double confidence = 0.95, std::size_t min_samples = 10);
  [[nodiscard]] bool is_finished(std::span<const double> samples_ms, double elapsed_s) const override;
  [[nodiscard]] std::string name() const override { return "relative_ci"; }
  [[nodiscard]] std::string describe() const override;

 private:
  double m_width;
  double m_confidence;
  std::size_t m_min_samples;
};

}  // namespace gpuforecast
