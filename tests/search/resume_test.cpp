#include "runtime/resumed_benchmarker.hpp"
#include "search/resume.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include <unistd.h>

#include "data/kernel_tuner_cache_appender.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "search/cache_writer.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/run/strategy_registry.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

namespace {

struct Temp {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("gpuforecast_resume_test_" + std::to_string(::getpid()));
  Temp() { std::filesystem::create_directories(dir); }
  ~Temp() { std::filesystem::remove_all(dir); }
};

struct Setup {
  std::shared_ptr<const SpaceData> data;
  Candidate prototype;
  explicit Setup(const std::string& device)
      : data(std::make_shared<const SpaceData>(
            load_replay_space(test::cache_file("convolution_milo", device).string()))) {
    prototype.kernel = data->kernel;
    prototype.problem_size = data->problem_size;
    prototype.device = data->device;
  }
};

// One genetic run of 40 measurements on the replayed data, seed 3: the cache it writes, what
// it measured. `earlier`: continue that cache.
Trace search(const Setup& s, const std::string& cache, const CacheFile* earlier, std::size_t* served = nullptr) {
  StrategySettings settings;
  settings.seed = 3;
  auto strategy = make_strategy("genetic", settings);
  ReplayBenchmarker bench(s.data, ReplayOptions{.seed = 99});
  SearchContextOptions options{.max_batch = 1};
  Trace trace;
  auto run = [&](auto b) {
    SearchContext ctx(s.data->space, s.prototype, std::move(b), Budget{40, 0}, options);
    ctx.add_observer(earlier ? KernelTunerCacheWriter(cache, *earlier) : KernelTunerCacheWriter(cache));
    strategy.run(ctx);
    ctx.finish();
    trace = ctx.trace();
  };
  if (earlier) {
    ResumedBenchmarker<ReplayBenchmarker> resumed(bench, *earlier);
    run(resumed);  // a copy, sharing its count with `resumed`
    if (served) *served = resumed.served();
  } else {
    run(bench);
  }
  return trace;
}

void check_same(const Trace& a, const Trace& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("measurement " << i + 1);
    const auto& x = a.entries()[i];
    const auto& y = b.entries()[i];
    CHECK(x.config == y.config);
    CHECK(x.measurement.status == y.measurement.status);
    CHECK(x.measurement.median_ms == y.measurement.median_ms);
    CHECK(x.measurement.samples_ms == y.measurement.samples_ms);
    CHECK(x.cost_s == y.cost_s);
  }
}

}  // namespace

TEST_CASE("a search continued from the first measurements of its cache ends as the uninterrupted one",
          "[search][resume]") {
  Temp tmp;
  const Setup s("A4000");
  const std::string full_cache = (tmp.dir / "full.json").string();
  const Trace full = search(s, full_cache, nullptr);
  REQUIRE(full.size() == 40);

  // A killed run: the header and its first 17 entries, the cache left open.
  const CacheFile whole = read_search_cache(full_cache, s.data->space, s.prototype);
  REQUIRE(whole.entries.size() == 40);
  const std::string cut = (tmp.dir / "cut.json").string();
  {
    CacheFile first = whole;
    first.entries.resize(17);
    KernelTunerCacheAppender open(cut, first);
  }
  const CacheFile earlier = read_search_cache(cut, s.data->space, s.prototype);
  REQUIRE(earlier.entries.size() == 17);
  std::size_t served = 0;
  const Trace resumed = search(s, cut, &earlier, &served);
  CHECK(served == 17);
  check_same(full, resumed);
  // The continued cache holds every measurement once, closed.
  const CacheFile after = read_kernel_tuner_cache(cut);
  REQUIRE(after.entries.size() == 40);
  CHECK(after.warnings.empty());
  for (std::size_t i = 0; i < 40; ++i) CHECK(after.entries[i].config == whole.entries[i].config);
}

TEST_CASE("resuming from a complete cache measures nothing again", "[search][resume]") {
  Temp tmp;
  const Setup s("A4000");
  const std::string cache = (tmp.dir / "c.json").string();
  const Trace full = search(s, cache, nullptr);
  const CacheFile earlier = read_search_cache(cache, s.data->space, s.prototype);
  std::size_t served = 0;
  check_same(full, search(s, cache, &earlier, &served));
  CHECK(served == full.size());
}

TEST_CASE("a cache of another device, kernel or space is refused with the field that differs", "[search][resume]") {
  Temp tmp;
  const Setup a4000("A4000");
  const Setup a100("A100");
  const std::string cache = (tmp.dir / "a4000.json").string();
  (void)search(a4000, cache, nullptr);
  CHECK_THROWS_WITH(read_search_cache(cache, a100.data->space, a100.prototype),
                    Catch::Contains("a4000.json") && Catch::Contains("device_name") &&
                        Catch::Contains("another search"));
  Candidate other = a4000.prototype;
  other.kernel = "gemm_milo";
  CHECK_THROWS_WITH(read_search_cache(cache, a4000.data->space, other), Catch::Contains("kernel_name"));
  std::vector<Parameter> fewer = a4000.data->space.parameters();
  fewer.back().values.push_back(Value(std::int64_t{99}));
  CHECK_THROWS_WITH(read_search_cache(cache, TuningSpace(fewer, {}), a4000.prototype),
                    Catch::Contains("tune_params[\"" + fewer.back().name + "\"]"));
}
