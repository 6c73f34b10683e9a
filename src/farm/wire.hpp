#pragma once
// What crosses the network between rank 0 and the workers: tags and message bodies, in the
// library's archive format. Candidates travel as configurations only (each worker holds the
// kernel, device and problem of the search); results as whole Measurements.
#include <cstdint>
#include <string>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/measurement.hpp"

namespace gpuforecast::detail::wire {

enum Tag : int {
  hello = 1,      // worker -> 0: device name
  job = 2,        // 0 -> worker: job id, configuration
  result = 3,     // worker -> 0: job id, measurement
  heartbeat = 4,  // worker -> 0: job id still running
  stop = 5,       // 0 -> worker: end
  refuse = 6,     // worker -> 0 instead of hello: why it cannot measure (it takes no work)
};

[[nodiscard]] std::string encode_job(std::uint64_t id, const Config& config);
// `names` is reused when the parameter names match, so configs share their name list.
[[nodiscard]] Config decode_job(const std::string& bytes, std::uint64_t& id, ParameterNames& names);
[[nodiscard]] std::string encode_result(std::uint64_t id, const Measurement& m);
[[nodiscard]] Measurement decode_result(const std::string& bytes, std::uint64_t& id);
[[nodiscard]] std::string encode_id(std::uint64_t id);
[[nodiscard]] std::uint64_t decode_id(const std::string& bytes);

}  // namespace gpuforecast::detail::wire
