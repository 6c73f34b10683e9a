#pragma once
// Small synthetic spaces and data for testing the search plumbing without real files.
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/space/enumerate.hpp"

namespace gpuforecast::test {

// x in {1..32 powers of two}, y in {1,2,3,4}, z in {0,1}; constraint x*y <= 64.
inline TuningSpace synthetic_space() {
  std::vector<Parameter> params{{"x", {1, 2, 4, 8, 16, 32}}, {"y", {1, 2, 3, 4}}, {"z", {0, 1}}};
  return TuningSpace(std::move(params), {"x * y <= 64"});
}

// A smooth runtime with one optimum at x=8, y=2, z=1; x=32,y=2 fails to compile.
inline double synthetic_time(const Config& c) {
  const double x = c.at("x").as_double(), y = c.at("y").as_double(), z = c.at("z").as_double();
  return 1.0 + std::pow(std::log2(x) - 3.0, 2) + 0.5 * std::pow(y - 2.0, 2) + (z > 0 ? 0.0 : 0.7);
}
inline bool synthetic_fails(const Config& c) { return c.at("x").as_int() == 32 && c.at("y").as_int() == 2; }

// Every valid config stored with four runs around synthetic_time, failures as compile_failed;
// config (1, 1, 0) is left out so that absent configurations can be tested.
inline SpaceData synthetic_data() {
  SpaceData d;
  d.path = "synthetic.json";
  d.kernel = "synthetic";
  d.space = synthetic_space();
  for (const auto& c : enumerate_valid(d.space)) {
    if (c.at("x").as_int() == 1 && c.at("y").as_int() == 1 && c.at("z").as_int() == 0) continue;
    Observation o;
    o.candidate.kernel = "synthetic";
    o.candidate.config = c;
    o.measurement.compile_ms = 1000;
    o.measurement.benchmark_ms = 500;
    if (synthetic_fails(c)) {
      o.measurement.status = Status::compile_failed;
      o.measurement.reason = "CompilationFailedConfig";
    } else {
      const double t = synthetic_time(c);
      o.measurement.status = Status::ok;
      o.measurement.samples_ms = {t * 0.99, t, t * 1.01, t * 1.02};
      summarise_samples(o.measurement);
    }
    d.observations.push_back(std::move(o));
  }
  return d;
}

// A forecast the predictor is sure of: +-10% around `median_ms`, not deferred.
inline Decision confident_decision(double median_ms) {
  Decision d;
  d.forecast.median_ms = median_ms;
  d.forecast.lower_ms = median_ms * 0.9;
  d.forecast.upper_ms = median_ms * 1.1;
  d.interval_low_ms = d.forecast.lower_ms;
  d.interval_high_ms = d.forecast.upper_ms;
  d.defer = false;
  return d;
}

// A benchmarker that computes `time` (synthetic_time unless told) and counts its calls.
struct CountingBenchmarker {
  std::shared_ptr<std::size_t> calls = std::make_shared<std::size_t>(0);
  double (*time)(const Config&) = synthetic_time;
  std::vector<Measurement> measure(std::span<const Candidate> candidates) {
    std::vector<Measurement> out;
    for (const auto& c : candidates) {
      ++*calls;
      Measurement m;
      m.status = Status::ok;
      m.median_ms = time(c.config);
      m.samples_ms = {m.median_ms};
      m.cost_s = 2.0;
      out.push_back(m);
    }
    return out;
  }
};
static_assert(Benchmarker<CountingBenchmarker>);

}  // namespace gpuforecast::test
