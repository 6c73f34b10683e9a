#include "gpuforecast/runtime/replay_benchmarker.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "support/data.hpp"
#include "synthetic.hpp"

using namespace gpuforecast;

namespace {
Candidate candidate_of(const Config& c) {
  Candidate k;
  k.kernel = "synthetic";
  k.config = c;
  return k;
}
}  // namespace

TEST_CASE("replay returns stored runs, stored failures and invalid for absent configs", "[replay]") {
  auto data = std::make_shared<const SpaceData>(test::synthetic_data());
  ReplayBenchmarker bench(data, {.seed = 7});
  const auto& space = data->space;

  auto ok = space.make_config({8, 2, 1});
  auto failed = space.make_config({32, 2, 1});
  auto absent = space.make_config({1, 1, 0});
  std::vector<Candidate> batch{candidate_of(ok), candidate_of(failed), candidate_of(absent)};
  auto m = bench.measure(batch);
  REQUIRE(m.size() == 3);

  CHECK(m[0].status == Status::ok);
  const auto& runs = bench.find(ok)->measurement.samples_ms;
  REQUIRE(m[0].samples_ms.size() == 1);
  CHECK(std::find(runs.begin(), runs.end(), m[0].samples_ms[0]) != runs.end());
  CHECK(m[0].median_ms == m[0].samples_ms[0]);
  CHECK(m[0].cost_s == Approx(1.5));

  CHECK(m[1].status == Status::compile_failed);
  CHECK(m[1].reason == "CompilationFailedConfig");
  CHECK(m[1].cost_s == Approx(1.5));

  CHECK(m[2].status == Status::invalid);
  CHECK_THAT(m[2].reason, Catch::Contains("absent"));
  CHECK(m[2].cost_s == 0);

  CHECK(bench.measurement_count() == 3);
  CHECK(bench.simulated_seconds() == Approx(3.0));

  // A second visit is counted but costs nothing, as a cache would make it.
  auto again = bench.measure(std::vector<Candidate>{candidate_of(ok)});
  CHECK(again[0].cost_s == 0);
  CHECK(bench.measurement_count() == 4);
  CHECK(bench.simulated_seconds() == Approx(3.0));
}

TEST_CASE("replay is seeded and draws different stored runs", "[replay]") {
  auto data = std::make_shared<const SpaceData>(test::synthetic_data());
  auto config = data->space.make_config({8, 2, 1});
  auto draw = [&](std::uint64_t seed) {
    ReplayBenchmarker bench(data, {.seed = seed});
    std::vector<double> out;
    for (int i = 0; i < 40; ++i) out.push_back(bench.measure(std::vector<Candidate>{candidate_of(config)})[0].median_ms);
    return out;
  };
  CHECK(draw(3) == draw(3));
  auto v = draw(3);
  CHECK(std::set<double>(v.begin(), v.end()).size() > 1);

  ReplayBenchmarker median(data, {.seed = 1, .sampling = ReplaySampling::median});
  CHECK(median.measure(std::vector<Candidate>{candidate_of(config)})[0].median_ms ==
        Approx(test::synthetic_time(config) * 1.005));  // median of the four runs
}

TEST_CASE("replay by mean serves Kernel Tuner's stored time", "[replay][data]") {
  // What Kernel Tuner's simulation mode answers is the file's `time` (the mean of `times`):
  // replaying by the mean must give that very number, so both paths see the same search.
  const auto path = test::cache_file("gemm", "RTX_3090").string();
  const CacheFile file = read_kernel_tuner_cache(path);
  auto data = std::make_shared<const SpaceData>(load_space(path));
  ReplayBenchmarker bench(data, {.seed = 5, .sampling = ReplaySampling::mean});
  std::size_t compared = 0;
  for (std::size_t i = 0; i < file.entries.size(); i += 997) {
    const CacheEntry& e = file.entries[i];
    INFO(path << " entry " << e.config.to_string());
    REQUIRE(e.measurement.ok());
    const auto m = bench.measure(std::vector<Candidate>{candidate_of(e.config)});
    CHECK(m[0].median_ms == Approx(e.mean_ms).epsilon(1e-12));
    CHECK(m[0].samples_ms.size() == 1);
    ++compared;
  }
  CHECK(compared >= 18);
  CHECK(parse_replay_sampling("mean") == ReplaySampling::mean);
  CHECK_THROWS_WITH(parse_replay_sampling("average"), Catch::Contains("one_run, bootstrap, median or mean"));
}

TEST_CASE("replay matches configurations by parameter name", "[replay]") {
  auto data = std::make_shared<const SpaceData>(test::synthetic_data());
  ReplayBenchmarker bench(data, {.sampling = ReplaySampling::median});
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"z", "y", "x"});
  Config reordered(names, {1, 2, 8});
  auto m = bench.measure(std::vector<Candidate>{candidate_of(reordered)});
  CHECK(m[0].status == Status::ok);
  CHECK(m[0].median_ms == Approx(bench.find(data->space.make_config({8, 2, 1}))->measurement.median_ms));
}

TEST_CASE("replay of a real cache file charges stored compile and benchmark time", "[replay][data]") {
  auto path = test::cache_file("convolution_milo", "A100").string();
  auto data = std::make_shared<const SpaceData>(load_space(path));
  ReplayBenchmarker bench(data, {.seed = 1});
  std::size_t failed = 0, ok = 0;
  double expected_seconds = 0;
  std::vector<Candidate> batch;
  for (std::size_t i = 0; i < data->observations.size(); i += 37) {
    batch.push_back(data->observations[i].candidate);
    const auto& m = data->observations[i].measurement;
    expected_seconds += (m.compile_ms + m.benchmark_ms) / 1000.0;
  }
  auto measured = bench.measure(batch);
  for (std::size_t j = 0; j < measured.size(); ++j) {
    const auto& stored = bench.find(batch[j].config)->measurement;
    CHECK(measured[j].status == stored.status);
    if (measured[j].ok()) {
      ++ok;
      CHECK(std::find(stored.samples_ms.begin(), stored.samples_ms.end(), measured[j].median_ms) != stored.samples_ms.end());
    } else {
      ++failed;
    }
  }
  CHECK(ok > 0);
  CHECK(bench.measurement_count() == batch.size());
  CHECK(bench.simulated_seconds() == Approx(expected_seconds));
  INFO("failed " << failed);
}

TEST_CASE("time_scale slows the replay without changing what it answers", "[replay]") {
  auto data = std::make_shared<const SpaceData>(test::synthetic_data());
  for (double bad : {-1.0, std::nan(""), HUGE_VAL})
    CHECK_THROWS_WITH(ReplayBenchmarker(data, ReplayOptions{.seed = 1, .time_scale = bad}),
                      Catch::Contains("time_scale"));
  std::vector<Candidate> batch;
  for (std::size_t i = 0; i < 6; ++i) batch.push_back(data->observations[i * 3].candidate);
  ReplayBenchmarker fast(data, ReplayOptions{.seed = 4});
  ReplayBenchmarker slow(data, ReplayOptions{.seed = 4, .time_scale = 1e-4});  // 1.5 s stored: 0.15 ms
  const auto a = fast.measure(batch);
  const auto b = slow.measure(batch);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].samples_ms == b[i].samples_ms);
    CHECK(a[i].cost_s == b[i].cost_s);
  }
}

TEST_CASE("advance_past leaves the replay where measuring would have", "[replay]") {
  auto data = std::make_shared<const SpaceData>(test::synthetic_data());
  std::vector<Candidate> first, then;
  for (std::size_t i = 0; i < 5; ++i) first.push_back(data->observations[i].candidate);
  for (std::size_t i = 5; i < 12; ++i) then.push_back(data->observations[i].candidate);
  then.push_back(first.front());  // seen before: no charge either way
  ReplayBenchmarker measured(data, ReplayOptions{.seed = 8});
  ReplayBenchmarker advanced(data, ReplayOptions{.seed = 8});
  (void)measured.measure(first);
  advanced.advance_past(first);
  const auto a = measured.measure(then);
  const auto b = advanced.measure(then);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].samples_ms == b[i].samples_ms);
    CHECK(a[i].cost_s == b[i].cost_s);
  }
  CHECK(measured.simulated_seconds() == advanced.simulated_seconds());
}
