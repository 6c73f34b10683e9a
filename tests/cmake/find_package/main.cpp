// Uses the installed headers only: no libtorch, CUDA, fmt or JSON include paths are given.
#include <gpuforecast/gpuforecast.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

int main() {
  const char* env = std::getenv("GPUFORECAST_DATA");
  const std::string data = env ? env : "../shared/datasets";
  const std::string file = data + "/benchmark_hub/cachefiles/dedispersion_milo/A100.json.gz";
  auto space = gpuforecast::load_space(file);
  std::printf("gpuforecast %s: %s on %s: %zu entries, %zu valid, best %.4f ms\n", gpuforecast::version(),
              space.kernel.c_str(), space.device->name.c_str(), space.observations.size(), space.valid_count(),
              space.best_ms());
  // An installed libgpuforecast_transformer.so is found beside libgpuforecast.so and loaded on demand.
  const auto names = gpuforecast::surrogate_names();
  std::string listed;
  for (const auto& n : names) listed += " " + n;
  std::printf("surrogates:%s\n", listed.c_str());
#ifdef GPUFORECAST_EXPECT_TRANSFORMER
  if (std::find(names.begin(), names.end(), "transformer") == names.end()) return 1;
#endif
  return space.observations.size() == 11130 ? 0 : 1;
}
