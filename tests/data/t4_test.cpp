// T4 results files: the shared A100_T4 copies agree entry by entry with the A100 cache files,
// and write-then-read round-trips.
#include <catch2/catch.hpp>

#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "data/temp_dir.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

TEST_CASE("the T4 copies agree entry by entry with the cache files") {
  for (const char* kernel : {"convolution_milo", "dedispersion_milo"}) {
    INFO(kernel);
    const CacheFile c = read_kernel_tuner_cache(test::cache_file(kernel, "A100").string());
    const T4File t = read_t4(test::cache_file(kernel, "A100_T4").string());
    CHECK(t.schema_version == "1.0.0");
    CHECK(t.time_unit == "miliseconds");  // sic, as written in the files
    REQUIRE(t.results.size() == c.entries.size());
    for (std::size_t i = 0; i < c.entries.size(); ++i) {
      const CacheEntry& e = c.entries[i];
      const T4Result& r = t.results[i];
      INFO("entry " << i << " " << e.config.key());
      REQUIRE(r.config.names() == e.config.names());
      REQUIRE(r.config == e.config);
      REQUIRE(r.measurement.status == e.measurement.status);
      REQUIRE(r.measurement.samples_ms == e.measurement.samples_ms);
      REQUIRE(r.measurement.median_ms == e.measurement.median_ms);
      REQUIRE(r.measurement.compile_ms == e.measurement.compile_ms);
      REQUIRE(r.framework_ms == e.extra.at("framework_time"));
      REQUIRE(r.validation_ms == e.extra.at("verification_time"));
      REQUIRE(r.search_algorithm_ms == e.extra.at("strategy_time"));
      REQUIRE(r.timestamp == e.timestamp);
      REQUIRE(r.objectives == std::vector<std::string>{"time"});
      if (e.measurement.ok()) {
        REQUIRE(r.invalidity == "correct");
        REQUIRE(r.measurements.size() == 1);
        REQUIRE(r.measurements[0].first == "time");
        REQUIRE(r.measurements[0].second == e.mean_ms);
      } else {
        REQUIRE(r.text_measurements.size() == 1);
        REQUIRE(r.text_measurements[0].second == e.measurement.reason);
        REQUIRE(r.measurement.reason == e.measurement.reason);
      }
    }
  }
}

TEST_CASE("T4 write-then-read round-trips (plain and gzip)") {
  const T4File t = read_t4(test::cache_file("convolution_milo", "A100_T4").string());
  test::TempDir dir;
  for (const char* name : {"out_T4.json", "out_T4.json.gz"}) {
    const std::string out = (dir.path() / name).string();
    write_t4(t, out);
    const T4File u = read_t4(out);
    INFO(out);
    CHECK(u.schema_version == t.schema_version);
    CHECK(u.time_unit == t.time_unit);
    REQUIRE(u.results.size() == t.results.size());
    for (std::size_t i = 0; i < t.results.size(); ++i) {
      const auto& a = t.results[i];
      const auto& b = u.results[i];
      REQUIRE(a.config.names() == b.config.names());
      REQUIRE(a.config == b.config);
      REQUIRE(a.invalidity == b.invalidity);
      REQUIRE(a.timestamp == b.timestamp);
      REQUIRE(a.measurement.status == b.measurement.status);
      REQUIRE(a.measurement.reason == b.measurement.reason);
      REQUIRE(a.measurement.samples_ms == b.measurement.samples_ms);
      REQUIRE(a.measurement.median_ms == b.measurement.median_ms);
      REQUIRE(a.measurement.compile_ms == b.measurement.compile_ms);
      REQUIRE(a.framework_ms == b.framework_ms);
      REQUIRE(a.search_algorithm_ms == b.search_algorithm_ms);
      REQUIRE(a.validation_ms == b.validation_ms);
      REQUIRE(a.measurements == b.measurements);
      REQUIRE(a.text_measurements == b.text_measurements);
      REQUIRE(a.objectives == b.objectives);
    }
  }
}
