// Every example kernel (examples/kernels/*.json + source) compiles for sm_80 and sm_90 under
// every configuration of a seeded sample of its space, with geometry the device accepts and
// shared memory the ptxas report confirms. GPUFORECAST_EXAMPLE_SAMPLE sets the sample size
// (8 here; the `slow` variant compiles more).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <future>
#include <memory>

#include "gpuforecast/data/community_formats.hpp"
#include "runtime/compile_pool.hpp"
#include "runtime/launch_geometry.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "support/data.hpp"

#ifndef GPUFORECAST_EXAMPLE_SAMPLE
#define GPUFORECAST_EXAMPLE_SAMPLE 8
#endif

using namespace gpuforecast;

namespace {
std::filesystem::path kernels_dir() { return test::source_dir() / "examples" / "kernels"; }

double expected_static_shared(const std::string& kernel, const Config& c) {
  auto v = [&](const char* n) { return static_cast<double>(c.at(n).as_int()); };
  if (kernel == "gpuforecast_sgemm" && v("use_shared"))
    return 4 * v("tile_k") * (v("block_size_y") * v("tile_size_y") + v("block_size_x") * v("tile_size_x"));
  if (kernel == "gpuforecast_conv2d" && v("use_shmem"))
    return 4 * (v("block_size_y") * v("tile_size_y") + v("filter_height") - 1) *
           (v("block_size_x") * v("tile_size_x") + v("filter_width") - 1);
  if (kernel == "gpuforecast_transpose" && v("use_shared"))
    return 4 * v("block_size_x") * (v("block_size_x") + v("pad_shared"));
  return -1;  // not asserted
}
}  // namespace

TEST_CASE("every example kernel compiles for sm_80 and sm_90 across a sample of its space",
          "[runtime][examples][nvrtc]") {
  const std::vector<std::string> names = {"sgemm", "conv2d", "reduction", "transpose", "softmax"};
  NvrtcCompiler compiler;
  CompilePool pool(compiler, 2);
  for (const auto& name : names) {
    const auto path = kernels_dir() / (name + ".json");
    INFO("T1 spec " << path.string());
    REQUIRE(std::filesystem::exists(path));
    const T1File t1 = read_t1(path.string());
    REQUIRE_FALSE(t1.kernel.source.empty());
    auto spec = std::make_shared<const KernelSpec>(t1.kernel);
    const auto configs = sample_valid(t1.space, GPUFORECAST_EXAMPLE_SAMPLE, 20261130);
    // Fewer only when the whole space is smaller (transpose has 45 configurations).
    REQUIRE(configs.size() >= std::min<std::size_t>(GPUFORECAST_EXAMPLE_SAMPLE, 45));
    std::vector<std::pair<Config, std::shared_future<std::shared_ptr<const CompiledKernel>>>> jobs;
    for (const auto& c : configs)
      for (const char* arch : {"sm_80", "sm_90"}) jobs.emplace_back(c, pool.submit(spec, c, arch));
    for (auto& [config, future] : jobs) {
      const auto k = future.get();
      INFO(name << " [" << config.to_string() << "] " << k->target << "\n" << k->log);
      CHECK(k->ok);
      if (!k->ok) continue;
      const auto g = compute_launch_geometry(*spec, config);
      CHECK(g.threads_per_block() <= 1024);
      CHECK(g.grid[0] * g.grid[1] * g.grid[2] >= 1);
      CHECK(k->features.at("registers") > 0);
      // Large blocks under __launch_bounds__ may spill a little: that is part of the space.
      CHECK(k->features.count("spill_stores_bytes") == 1);
      if (const double shared = expected_static_shared(spec->benchmark_name, config); shared >= 0)
        CHECK(k->features.at("static_shared_memory_bytes") == shared);
      CHECK(k->features.at("static_shared_memory_bytes") <= 48 * 1024);
    }
  }
}
