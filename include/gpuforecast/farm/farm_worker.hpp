#pragma once
// A worker rank of a measurement farm: it measures the candidates rank 0 sends, one at a time,
// with whatever Benchmarker it owns (the CUDA benchmarker of its node, or a replay), sends a
// heartbeat while a measurement runs, and returns when rank 0 says stop.
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct FarmWorkerOptions {
  double heartbeat_interval_s = 0.25;
  std::string device;  // what this rank measures on, told to rank 0
};

using FarmMeasureFunction = std::function<std::vector<Measurement>(std::span<const Candidate>)>;

// `prototype` gives kernel, device, problem size and spec; rank 0 sends only configurations.
void serve_farm(const FarmMeasureFunction& measure, const Candidate& prototype, const FarmWorkerOptions& options = {});

// A worker rank that cannot measure (no CUDA driver, no GPU) tells rank 0 why instead of saying
// hello, and takes no work; rank 0 reports the reason.
void refuse_farm(const std::string& reason);

template <Benchmarker B>
void serve_farm(B& benchmarker, const Candidate& prototype, const FarmWorkerOptions& options = {}) {
  serve_farm([&benchmarker](std::span<const Candidate> c) { return benchmarker.measure(c); }, prototype, options);
}

}  // namespace gpuforecast
