// Dataset over the shared files: every file (cache and T4) loads through load_space, devices and
// kernels are named as the benchmark_hub layout says, and the seeded splits are deterministic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

#include "gpuforecast/core/error.hpp"
#include "core/warning.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "data/temp_dir.hpp"
#include "support/data.hpp"
#include "support/wild_cache.hpp"

using namespace gpuforecast;

namespace {

std::vector<std::string> all_files() {
  std::vector<std::string> out;
  for (const auto& kernel : std::filesystem::directory_iterator(test::data_dir() / "benchmark_hub" / "cachefiles"))
    for (const auto& f : std::filesystem::directory_iterator(kernel.path()))
      if (f.path().string().ends_with(".json.gz")) out.push_back(f.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

const Dataset& milo() {
  static const Dataset d = [] {
    std::vector<std::string> paths;
    for (const char* k : {"convolution_milo", "dedispersion_milo"})
      for (const char* dev : {"A100", "A4000", "MI250X"}) paths.push_back(test::cache_file(k, dev).string());
    return Dataset::load(paths);
  }();
  return d;
}

std::vector<std::string> keys(const std::vector<Observation>& obs) {
  std::vector<std::string> out;
  for (const auto& o : obs) out.push_back(o.source + "|" + o.candidate.config.key());
  return out;
}

}  // namespace

TEST_CASE("every file under cachefiles loads into a Dataset, T4 copies included", "[sweep]") {
  const auto paths = all_files();
  // convolution 4, convolution_milo 6 + T4, dedispersion_milo 6 + T4, gemm 4, pnpoly 4
  REQUIRE(paths.size() == 26);
  const Dataset d = Dataset::load(paths);
  REQUIRE(d.spaces().size() == paths.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const SpaceData& s = d.spaces()[i];
    INFO(s.path);
    CHECK(s.path == paths[i]);
    CHECK(s.kernel == std::filesystem::path(paths[i]).parent_path().filename().string());
    REQUIRE(s.device);
    CHECK(!s.observations.empty());
    for (const auto& o : s.observations) {
      REQUIRE(o.source == s.path);
      REQUIRE(o.candidate.kernel == s.kernel);
      REQUIRE(o.candidate.device == s.device);
      REQUIRE(o.candidate.config.size() == s.space.parameters().size());
    }
    total += s.observations.size();
  }
  CHECK(d.size() == total);
  // gemm's RTX 3060 laptop file holds 10,000 of the space's 17,956 configurations
  CHECK(total == 4 * 6768 + 7 * 4362 + 7 * 11130 + 3 * 17956 + 10000 + 4 * 4092);
}

TEST_CASE("devices come from device_name, or the file stem when it is empty") {
  const Dataset& d = milo();
  std::set<std::string> devices;
  for (const auto& s : d.spaces()) devices.insert(s.device->name);
  CHECK(devices.count("A100-PCIE-40GB") == 1);
  CHECK(devices.count("MI250X") == 1);
  CHECK(devices.size() == 3);
  const SpaceData t4 = load_space(test::cache_file("convolution_milo", "A100_T4").string());
  CHECK(t4.device->name == "A100-PCIE-40GB");
  CHECK(t4.kernel == "convolution_milo");
  CHECK(t4.observations.size() == 4362);
  CHECK(t4.valid_count() == 4201);
  CHECK(t4.space.parameters().size() == 10);
}

TEST_CASE("SpaceData: valid count and best time") {
  const SpaceData s = load_space(test::cache_file("convolution_milo", "A100").string());
  CHECK(s.valid_count() == 4201);
  CHECK(s.kernel == "convolution_milo");
  CHECK(s.kernel_name == "convolution_kernel");
  CHECK(s.problem_size == std::vector<std::int64_t>{4096, 4096});
  double best = 1e300;
  for (const auto& o : s.observations)
    if (o.measurement.ok()) best = std::min(best, o.measurement.median_ms);
  CHECK(s.best_ms() == best);
  CHECK(best > 0);
}

TEST_CASE("split_random: seeded, deterministic, stratified per space, disjoint and complete") {
  const Dataset& d = milo();
  const auto a = d.split_random(0.8, 42);
  const auto b = d.split_random(0.8, 42);
  const auto c = d.split_random(0.8, 43);
  CHECK(keys(a.train) == keys(b.train));
  CHECK(keys(a.test) == keys(b.test));
  CHECK(keys(a.train) != keys(c.train));
  const std::size_t ok = d.observations(true).size();
  CHECK(a.train.size() + a.test.size() == ok);
  const auto train_keys = keys(a.train);
  const std::set<std::string> tr(train_keys.begin(), train_keys.end());
  const auto test_keys = keys(a.test);
  for (const auto& k : test_keys) REQUIRE(tr.count(k) == 0);
  // Every space contributes its own 80 %.
  for (const auto& s : d.spaces()) {
    const auto n_ok = static_cast<double>(s.valid_count());
    const auto n_train = std::count_if(a.train.begin(), a.train.end(), [&](const Observation& o) { return o.source == s.path; });
    CHECK(std::abs(static_cast<double>(n_train) - 0.8 * n_ok) <= 1.0);
  }
  // ok_only = false keeps failed observations too.
  const auto all = d.split_random(0.5, 1, false);
  CHECK(all.train.size() + all.test.size() == d.size());
  CHECK_THROWS_AS(d.split_random(1.5, 1), invalid_argument_error);
}

TEST_CASE("split by device, kernel and group") {
  const Dataset& d = milo();
  const auto by_dev = d.split_by_device("MI250X");
  for (const auto& o : by_dev.test) REQUIRE(o.candidate.device->name == "MI250X");
  for (const auto& o : by_dev.train) REQUIRE(o.candidate.device->name != "MI250X");
  CHECK(by_dev.test.size() == 4362 + 11130);
  // Dataset-file names of a device work too.
  CHECK(d.split_by_device("NVIDIA A100-PCIE-40GB").test.size() == 4201 + 11130);
  const auto by_kernel = d.split_by_kernel("dedispersion_milo");
  CHECK(by_kernel.test.size() == 3 * 11130);
  CHECK(by_kernel.train.size() == 4201 + 4201 + 4362);
  const auto by_group = d.split_by_group(
      [](const Observation& o) { return o.candidate.config.at("block_size_x").to_string(); }, "16");
  for (const auto& o : by_group.test) REQUIRE(o.candidate.config.at("block_size_x").as_int() == 16);
  CHECK(!by_group.train.empty());
  CHECK_THROWS_AS(d.split_by_device("H100"), invalid_argument_error);
  CHECK_THROWS_AS(d.split_by_kernel("gemm"), invalid_argument_error);
}

TEST_CASE("files from the wild: a board named the public-cache way, and a GPU the table lacks") {
  const test::TempDir dir;
  const auto shared = test::cache_file("convolution_milo", "A4000");
  const auto v100 = test::write_wild_cache(shared, dir.path() / "v100.json", "Tesla V100-PCIE-32GB").string();
  const auto unknown = test::write_wild_cache(shared, dir.path() / "unknown.json", "Tesla Z900-PCIE-64GB").string();
  std::vector<std::string> warnings;
  const auto previous = set_warning_handler([&](const std::string& m) { warnings.push_back(m); });
  const std::vector<std::string> paths = {v100, unknown};
  const Dataset d = Dataset::load(paths);
  set_warning_handler(previous);

  REQUIRE(d.spaces().size() == 2);
  const SpaceData& known = d.spaces()[0];
  const SpaceData& wild = d.spaces()[1];
  CHECK(known.device->name == "V100-PCIE-32GB");
  CHECK(known.device->has_numbers());
  CHECK(known.warnings.empty());
  CHECK(wild.device->name == "Tesla Z900-PCIE-64GB");
  CHECK(wild.device->vendor == "NVIDIA");
  CHECK_FALSE(wild.device->has_numbers());
  // One warning, for the unknown file, naming it and the device.
  REQUIRE(warnings.size() == 1);
  CHECK(wild.warnings == warnings);
  CHECK(warnings[0].find(unknown) != std::string::npos);
  CHECK(warnings[0].find("\"Tesla Z900-PCIE-64GB\"") != std::string::npos);
  // Everything else is the shared file's.
  for (const SpaceData* s : {&known, &wild}) {
    CHECK(s->observations.size() == 4362);
    CHECK(s->valid_count() == 4201);
    for (const auto& o : s->observations) REQUIRE(o.candidate.device == s->device);
  }
  // The unknown device's name still splits by device.
  const auto split = d.split_by_device("tesla z900-pcie-64gb");
  CHECK(split.test.size() == 4201);
  CHECK(split.train.size() == 4201);
}
