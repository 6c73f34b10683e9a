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

TEST_CASE("a fault is named by its kind and the line of its log that says what went wrong") {
  CHECK(is_fault(Status::compile_failed));
  CHECK(is_fault(Status::timeout));
  CHECK_FALSE(is_fault(Status::invalid));  // the space rules it out: no fault of the GPU's
  CHECK_FALSE(is_fault(Status::ok));
  CHECK(fault_kind(Status::compile_failed) == "compile_error");
  CHECK(fault_kind(Status::launch_failed) == "launch_failure");
  CHECK(fault_kind(Status::runtime_failed) == "crash");
  CHECK(fault_kind(Status::timeout) == "hang");
  CHECK(fault_kind(Status::invalid).empty());

  Measurement m;
  m.status = Status::compile_failed;
  m.reason = "compile_failed";
  m.log = "\n  kernel.cu(12): warning: variable declared but never used\r\n"
          "kernel.cu(40): error: identifier \"tile\" is undefined\n1 error detected\n";
  CHECK(fault_detail(m) == "kernel.cu(40): error: identifier \"tile\" is undefined");
  m.log = "no kernel finished within 2 s: worker 41 killed, a new one takes the next job\n";
  CHECK(fault_detail(m) == m.log.substr(0, m.log.size() - 1));
  m.log.clear();
  m.reason = "RuntimeFailedConfig";  // a replayed failure: the record's reason is all there is
  CHECK(fault_detail(m) == "RuntimeFailedConfig");
}
