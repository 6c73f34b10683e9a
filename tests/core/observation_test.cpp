#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

TEST_CASE("successful_runs keeps the ok runs with a positive median, in order", "[data]") {
  const std::vector<std::string> files{test::cache_file("convolution_milo", "A4000").string()};
  const Dataset data = Dataset::load(files);
  const std::vector<Observation> all = data.observations(false);
  std::size_t failed = 0;
  std::vector<const Observation*> kept;
  for (const auto& o : all) {
    if (o.measurement.ok() && o.measurement.median_ms > 0) kept.push_back(&o);
    else ++failed;
  }
  // The file holds both kinds, so the filter is exercised on real failures.
  REQUIRE(failed > 0);
  REQUIRE_FALSE(kept.empty());

  const TimedCandidates runs = successful_runs(all);
  REQUIRE(runs.candidates.size() == kept.size());
  REQUIRE(runs.median_ms.size() == kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    CHECK(runs.median_ms[i] == kept[i]->measurement.median_ms);
    CHECK(runs.candidates[i].config == kept[i]->candidate.config);
  }
  // Only the ok ones in, the same result: what callers pass as data.observations(true).
  const TimedCandidates from_ok = successful_runs(data.observations(true));
  CHECK(from_ok.median_ms == runs.median_ms);
}

TEST_CASE("successful_runs of nothing, or of failures only, is empty") {
  CHECK(successful_runs({}).candidates.empty());
  Observation failed;
  failed.measurement.status = Status::compile_failed;
  failed.measurement.median_ms = 1.0;
  Observation zero;
  zero.measurement.status = Status::ok;  // ok but no time: not a usable run
  const std::vector<Observation> both{failed, zero};
  const TimedCandidates runs = successful_runs(both);
  CHECK(runs.candidates.empty());
  CHECK(runs.median_ms.empty());
}
