#include "gpuforecast/run/search_target.hpp"

#include <utility>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

SearchTarget search_target(const SpaceData& data) {
  SearchTarget target;
  target.space = data.space;
  target.prototype.kernel = data.kernel;
  target.prototype.problem_size = data.problem_size;
  target.prototype.device = data.device;
  if (!data.observations.empty()) target.prototype.spec = data.observations.front().candidate.spec;
  return target;
}

SearchTarget search_target(const T1File& t1, std::shared_ptr<const Device> device) {
  if (t1.kernel.source.empty())
    throw input_error(t1.path, "KernelFile", "the kernel source named by KernelFile was not found beside the spec");
  SearchTarget target;
  target.space = t1.space;
  target.prototype.kernel = t1.kernel.benchmark_name;
  target.prototype.problem_size = t1.kernel.problem_size;
  target.prototype.device = std::move(device);
  target.prototype.spec = std::make_shared<const KernelSpec>(t1.kernel);
  return target;
}

}  // namespace gpuforecast
