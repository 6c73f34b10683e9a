// The project's own measurements in data/ (scripts/gpu-check --dataset on an H200): each file
// reads, covers exactly the valid configurations of the T1 spec beside it, and every entry is
// a successful, plausible measurement. A re-measurement or a changed spec that breaks this
// must be committed together.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

TEST_CASE("the project's H200 dataset covers the whole space of its kernels") {
  for (const char* kernel : {"transpose", "reduction"}) {
    const auto dir = test::source_dir() / "data" / (std::string("gpuforecast_") + kernel);
    INFO(dir.string());
    REQUIRE(std::filesystem::exists(dir / (std::string(kernel) + ".cu")));
    const T1File t1 = read_t1((dir / (std::string(kernel) + ".json")).string());
    const CacheFile cache = read_kernel_tuner_cache((dir / "H200.json").string());
    CHECK(cache.device_name == "H200");

    std::set<std::string> expected;
    for (const auto& c : enumerate_valid(t1.space)) expected.insert(c.to_string());
    std::set<std::string> measured;
    for (const auto& e : cache.entries) {
      INFO(e.config.to_string());
      measured.insert(e.config.to_string());
      CHECK(e.measurement.status == Status::ok);
      CHECK(e.measurement.median_ms > 0.001);  // a microsecond: nothing on an H200 launches faster
      CHECK(e.measurement.median_ms < 100);
      CHECK(e.measurement.samples_ms.size() >= 3);
      CHECK(e.measurement.compile_ms > 0);
    }
    CHECK(measured.size() == cache.entries.size());  // each configuration once
    CHECK(measured == expected);
  }
}
