// Kernel Tuner cache files from ../shared/datasets: every file loads, counts match what Python's
// json module reads from the same files (hard-coded below), and write-then-read round-trips.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "support/data.hpp"
#include "data/temp_dir.hpp"

using namespace gpuforecast;

namespace {

struct Expected {
  const char* kernel;
  const char* device;        // file stem
  const char* device_name;   // as written in the file
  std::size_t entries;
  std::size_t parameters;
  std::size_t ok;
  std::size_t compile_failed;
  std::size_t runtime_failed;
};

// Counted with Python's json module over the same files.
const Expected kFiles[] = {
    {"convolution", "RTX_2080_Ti", "NVIDIA GeForce RTX 2080 Ti", 6768, 8, 5256, 1426, 86},
    {"convolution", "RTX_3060_laptop", "NVIDIA GeForce RTX 3060 Laptop GPU", 6768, 8, 5220, 1426, 122},
    {"convolution", "RTX_3090", "NVIDIA GeForce RTX 3090", 6768, 8, 5220, 1426, 122},
    {"convolution", "RTX_Titan", "NVIDIA TITAN RTX", 6768, 8, 5256, 1426, 86},
    {"convolution_milo", "A100", "NVIDIA A100-PCIE-40GB", 4362, 10, 4201, 6, 155},
    {"convolution_milo", "A4000", "NVIDIA RTX A4000", 4362, 10, 4201, 6, 155},
    {"convolution_milo", "A6000", "NVIDIA RTX A6000", 4362, 10, 3889, 252, 221},
    {"convolution_milo", "MI250X", "", 4362, 10, 4362, 0, 0},
    {"convolution_milo", "W6600", "AMD Radeon PRO W6600", 4362, 10, 4362, 0, 0},
    {"convolution_milo", "W7800", "AMD Radeon PRO W7800", 4362, 10, 4246, 116, 0},
    {"dedispersion_milo", "A100", "NVIDIA A100-PCIE-40GB", 11130, 8, 11130, 0, 0},
    {"dedispersion_milo", "A4000", "NVIDIA RTX A4000", 11130, 8, 11130, 0, 0},
    {"dedispersion_milo", "A6000", "NVIDIA RTX A6000", 11130, 8, 11130, 0, 0},
    {"dedispersion_milo", "MI250X", "", 11130, 8, 11130, 0, 0},
    {"dedispersion_milo", "W6600", "AMD Radeon PRO W6600", 11130, 8, 11130, 0, 0},
    {"dedispersion_milo", "W7800", "AMD Radeon PRO W7800", 11130, 8, 11130, 0, 0},
};

}  // namespace

TEST_CASE("every Kernel Tuner cache file loads with the counts Python reads", "[sweep]") {
  for (const auto& e : kFiles) {
    const auto path = test::cache_file(e.kernel, e.device).string();
    INFO(path);
    const CacheFile f = read_kernel_tuner_cache(path);
    CHECK(f.benchmark == e.kernel);
    CHECK(f.device_name == e.device_name);
    CHECK(f.entries.size() == e.entries);
    CHECK(f.space.parameters().size() == e.parameters);
    std::map<Status, std::size_t> by_status;
    for (const auto& entry : f.entries) ++by_status[entry.measurement.status];
    CHECK(by_status[Status::ok] == e.ok);
    CHECK(by_status[Status::compile_failed] == e.compile_failed);
    CHECK(by_status[Status::runtime_failed] == e.runtime_failed);
  }
}

TEST_CASE("dedispersion_milo A100: 11,130 entries, 8 parameters, header and first entry as in the file") {
  const CacheFile f = read_kernel_tuner_cache(test::cache_file("dedispersion_milo", "A100").string());
  REQUIRE(f.entries.size() == 11130);
  REQUIRE(f.space.parameters().size() == 8);
  CHECK(f.kernel_name == "dedispersion_kernel");
  CHECK(f.problem_size == std::vector<std::int64_t>{25000, 2048, 1});
  CHECK(f.objective == "time");
  CHECK(f.space.parameters()[1].name == "block_size_y");
  CHECK(f.space.parameters()[1].values.size() == 29);
  for (const auto& e : f.entries) {
    REQUIRE(e.measurement.ok());
    REQUIRE(e.measurement.samples_ms.size() == 32);
    REQUIRE(e.extra.count("GB/s") == 1);
    REQUIRE(e.extra.count("verification_time") == 1);
    REQUIRE(e.measurement.median_ms > 0);
    REQUIRE(e.measurement.ci_low_ms <= e.measurement.median_ms);
    REQUIRE(e.measurement.median_ms <= e.measurement.ci_high_ms);
  }
}

TEST_CASE("convolution_milo A100: 10 parameters; failed configurations kept with their reason") {
  const CacheFile f = read_kernel_tuner_cache(test::cache_file("convolution_milo", "A100").string());
  REQUIRE(f.space.parameters().size() == 10);
  const auto& first = f.entries.front();
  CHECK(first.config.key() == "16,1,1,1,0,0,0,1,15,15");
  CHECK(first.mean_ms == Approx(3.8753279224038124).epsilon(1e-15));
  CHECK(first.measurement.samples_ms.size() == 32);
  CHECK(first.measurement.samples_ms[0] == 3.976191997528076);
  CHECK(first.measurement.compile_ms == 918.5990339610726);
  CHECK(first.measurement.benchmark_ms == 126.3829180970788);
  CHECK(first.extra.at("GFLOP/s") == 1948.1569950129526);
  CHECK(first.extra.at("framework_time") == 105.24242906831205);
  CHECK(first.timestamp == "2023-12-22 09:54:05.502007+00:00");
  std::size_t runtime_failed = 0;
  for (const auto& e : f.entries) {
    if (e.measurement.status != Status::runtime_failed) continue;
    ++runtime_failed;
    CHECK(e.measurement.reason == "RuntimeFailedConfig");
    CHECK(e.measurement.compile_ms > 0);
  }
  CHECK(runtime_failed == 155);
}

TEST_CASE("cache write-then-read round-trips (plain and gzip)") {
  const CacheFile f = read_kernel_tuner_cache(test::cache_file("convolution_milo", "A6000").string());
  test::TempDir dir;
  for (const char* name : {"A6000.json", "A6000.json.gz"}) {
    const std::string out = (dir.path() / name).string();
    write_kernel_tuner_cache(f, out);
    const CacheFile g = read_kernel_tuner_cache(out);
    INFO(out);
    CHECK(g.device_name == f.device_name);
    CHECK(g.kernel_name == f.kernel_name);
    CHECK(g.problem_size == f.problem_size);
    CHECK(g.objective == f.objective);
    REQUIRE(g.space.parameters().size() == f.space.parameters().size());
    for (std::size_t i = 0; i < f.space.parameters().size(); ++i) {
      CHECK(g.space.parameters()[i].name == f.space.parameters()[i].name);
      CHECK(g.space.parameters()[i].values == f.space.parameters()[i].values);
    }
    REQUIRE(g.entries.size() == f.entries.size());
    for (std::size_t i = 0; i < f.entries.size(); ++i) {
      const auto& a = f.entries[i];
      const auto& b = g.entries[i];
      REQUIRE(a.config == b.config);
      REQUIRE(a.measurement.status == b.measurement.status);
      REQUIRE(a.measurement.reason == b.measurement.reason);
      REQUIRE(a.measurement.samples_ms == b.measurement.samples_ms);
      REQUIRE(a.measurement.median_ms == b.measurement.median_ms);
      REQUIRE(a.measurement.compile_ms == b.measurement.compile_ms);
      REQUIRE(a.measurement.benchmark_ms == b.measurement.benchmark_ms);
      REQUIRE(a.mean_ms == b.mean_ms);
      REQUIRE(a.extra == b.extra);
      REQUIRE(a.timestamp == b.timestamp);
    }
  }
}
