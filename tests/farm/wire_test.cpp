// The farm's messages: a configuration and a measurement arrive as they left, and a damaged
// message is refused with the message kind and byte position, never read past its end.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "farm/wire.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

TEST_CASE("a job carries the configuration's names and values of every kind", "[farm]") {
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"block", "scale", "layout"});
  const Config sent(names, {Value(128), Value(0.5), Value("row")});
  ParameterNames received_names;
  std::uint64_t id = 0;
  const Config got = detail::wire::decode_job(detail::wire::encode_job(42, sent), id, received_names);
  CHECK(id == 42);
  CHECK(got == sent);
  CHECK(got.names() == sent.names());
  CHECK(got[0].is_int());
  CHECK(got[1].is_float());
  CHECK(got[2].is_string());
  // The next job with the same parameters shares the name list instead of making another.
  const Config again = detail::wire::decode_job(detail::wire::encode_job(43, sent), id, received_names);
  CHECK(again.shared_names() == got.shared_names());
}

TEST_CASE("a result carries the whole measurement", "[farm]") {
  Measurement m;
  m.status = Status::runtime_failed;
  m.samples_ms = {1.5, 1.25};
  m.median_ms = 1.375, m.ci_low_ms = 1.25, m.ci_high_ms = 1.5, m.compile_ms = 800, m.benchmark_ms = 120;
  m.cost_s = 0.92;
  m.reason = "RuntimeFailedConfig";
  m.log = "too many resources requested for launch";
  std::uint64_t id = 0;
  const Measurement got = detail::wire::decode_result(detail::wire::encode_result(7, m), id);
  CHECK(id == 7);
  CHECK(got.status == m.status);
  CHECK(got.samples_ms == m.samples_ms);
  CHECK(got.median_ms == m.median_ms);
  CHECK(got.ci_low_ms == m.ci_low_ms);
  CHECK(got.ci_high_ms == m.ci_high_ms);
  CHECK(got.compile_ms == m.compile_ms);
  CHECK(got.benchmark_ms == m.benchmark_ms);
  CHECK(got.cost_s == m.cost_s);
  CHECK(got.reason == m.reason);
  CHECK(got.log == m.log);
}

TEST_CASE("a truncated or corrupted message is refused naming its kind and position", "[farm]") {
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"block"});
  std::string job = detail::wire::encode_job(1, Config(names, {Value(64)}));
  job.resize(job.size() - 3);
  ParameterNames received;
  std::uint64_t id = 0;
  CHECK_THROWS_WITH(detail::wire::decode_job(job, id, received),
                    Catch::Contains("farm job message") && Catch::Contains("at byte"));
  std::string result = detail::wire::encode_result(1, Measurement{});
  result[8] = '\x7f';  // the status
  CHECK_THROWS_WITH(detail::wire::decode_result(result, id),
                    Catch::Contains("farm result message") && Catch::Contains("unknown status"));
}
