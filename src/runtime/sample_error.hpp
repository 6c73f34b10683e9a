#pragma once
// A failure of the candidate itself while it runs (launch refused, illegal address, wrong
// output, hang). The benchmarker turns it into Measurement::status; it never escapes measure().
#include <string>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class sample_error : public error {
 public:
  sample_error(Status status, const std::string& message) : error(message), m_status(status) {}
  [[nodiscard]] Status get_status() const noexcept { return m_status; }

 private:
  Status m_status;
};

}  // namespace gpuforecast
