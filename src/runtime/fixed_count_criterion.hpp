#pragma once
// Stop after a fixed number of samples (also the sample cap of the adaptive rule).
#include <cstddef>

#include "runtime/stopping_criterion.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class FixedCountCriterion final : public StoppingCriterion {
 public:
  explicit FixedCountCriterion(std::size_t count);  // count >= 1
  [[nodiscard]] bool is_finished(std::span<const double> samples_ms, double elapsed_s) const override;
  [[nodiscard]] std::string name() const override { return "fixed_count"; }
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::size_t count() const noexcept { return m_count; }

 private:
  std::size_t m_count;
};

}  // namespace gpuforecast
