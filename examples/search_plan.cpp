// Running a search from C++: a Plan in, a Result out, first on recorded measurements, then
// measuring through a benchmarker of your own (here one that answers a formula, where yours
// would run the kernel).
//
//   example_search_plan CACHE.json.gz     (e.g. ../shared/datasets/benchmark_hub/cachefiles/pnpoly/RTX_3090.json.gz)
#include <gpuforecast/gpuforecast.hpp>

#include <cstdio>
#include <exception>
#include <memory>
#include <span>
#include <vector>

namespace {

// Any type with measure(candidates) -> measurements is a Benchmarker (core/concepts.hpp).
struct FormulaBenchmarker {
  std::vector<gpuforecast::Measurement> measure(std::span<const gpuforecast::Candidate> candidates) {
    std::vector<gpuforecast::Measurement> out;
    for (const auto& c : candidates) {
      gpuforecast::Measurement m;
      m.status = gpuforecast::Status::ok;
      m.median_ms = 1.0;
      for (const auto& v : c.config.values()) m.median_ms += 0.001 * v.as_double();
      m.ci_low_ms = m.ci_high_ms = m.median_ms;
      m.samples_ms = {m.median_ms};
      m.cost_s = 0.5;
      out.push_back(m);
    }
    return out;
  }
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CACHE.json[.gz]\n", argv[0]);
    return 2;
  }
  // 1. Replayed: 10 seeds side by side, the fraction of the optimum after 25, 50 and 100.
  gpuforecast::Plan plan;
  plan.replay().data = std::make_shared<const gpuforecast::SpaceData>(gpuforecast::load_replay_space(argv[1]));
  plan.strategy = "surrogate";
  plan.budget = 100;
  plan.seeds = 10;
  plan.threads = 0;  // one per hardware thread; the result is the same for any count
  const gpuforecast::Result replayed = gpuforecast::run(plan);
  for (const auto& row : replayed.summary(std::vector<std::size_t>{25, 50, 100}))
    std::printf("replayed, %zu measurements: %.3f of the optimum\n", row.budget, row.mean);

  // 2. Measured by a benchmarker of yours, over the same space: one seed, its trace.
  const gpuforecast::SearchTarget target = gpuforecast::search_target(*plan.replay().data);
  gpuforecast::Plan yours;
  yours.backend = gpuforecast::caller_backend(target.space, target.prototype, std::make_shared<FormulaBenchmarker>());
  yours.strategy = "genetic";
  yours.budget = 40;
  yours.seeds = 1;
  const gpuforecast::Trace trace = gpuforecast::run(yours).runs.front().trace;
  if (const auto* best = trace.best())
    std::printf("measured by the caller: best %.4f ms [%s] after %zu measurements\n", best->measurement.median_ms,
                best->config.to_string().c_str(), trace.size());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "example_search_plan: %s\n", e.what());
  return 1;
}
