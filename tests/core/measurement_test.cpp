#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/measurement.hpp"

using namespace gpuforecast;

TEST_CASE("median and order-statistic CI of the median") {
  Measurement m;
  for (int i = 1; i <= 32; ++i) m.samples_ms.push_back(i);
  summarise_samples(m);
  CHECK(m.median_ms == Approx(16.5));
  // n = 32: P(Bin(32,1/2) <= 9) = 0.0100, <= 10: 0.0251 > 0.025, so k = 10: [x_(10), x_(23)].
  CHECK(m.ci_low_ms == 10);
  CHECK(m.ci_high_ms == 23);
}

TEST_CASE("too few samples give the whole range as interval") {
  Measurement m;
  m.samples_ms = {3, 1, 2};
  summarise_samples(m);
  CHECK(m.median_ms == 2);
  CHECK(m.ci_low_ms == 1);
  CHECK(m.ci_high_ms == 3);
}

TEST_CASE("NaN and negative samples are rejected with their index") {
  Measurement m;
  m.samples_ms = {1.0, std::numeric_limits<double>::quiet_NaN()};
  CHECK_THROWS_WITH(summarise_samples(m), Catch::Contains("sample 1"));
  m.samples_ms = {-1.0};
  CHECK_THROWS_AS(summarise_samples(m), invalid_argument_error);
}

TEST_CASE("status names round-trip, Kernel Tuner's names are understood") {
  for (auto s : {Status::ok, Status::compile_failed, Status::launch_failed, Status::runtime_failed,
                 Status::invalid, Status::timeout})
    CHECK(parse_status(to_string(s)) == s);
  CHECK(parse_status("CompilationFailedConfig") == Status::compile_failed);
  CHECK(parse_status("RuntimeFailedConfig") == Status::runtime_failed);
  CHECK_THROWS_AS(parse_status("Bogus"), invalid_argument_error);
}
