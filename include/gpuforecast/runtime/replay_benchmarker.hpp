#pragma once
// A Benchmarker over recorded measurements (Kernel Tuner's simulation mode): a search runs
// against a brute-forced dataset exactly as it would against a GPU, without one.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// What a replayed measurement of an ok configuration returns.
enum class ReplaySampling {
  one_run,    // one of the stored runs, drawn with the seed (the default: measurement noise as recorded)
  bootstrap,  // as many runs as stored, resampled with replacement (noise of a median)
  median,     // the stored median every time (no noise)
  mean,       // the mean of the stored runs every time: Kernel Tuner's `time`, what its
              // simulation mode serves (no noise; one sample, as a measurement reported only as
              // a mean arrives)
};
// "one_run", "bootstrap", "median", "mean"; throws invalid_argument_error listing them.
[[nodiscard]] ReplaySampling parse_replay_sampling(std::string_view name);
[[nodiscard]] std::string_view replay_sampling_name(ReplaySampling sampling) noexcept;

struct ReplayOptions {
  std::uint64_t seed = 0;
  ReplaySampling sampling = ReplaySampling::one_run;
  // Holds each charged measurement for its stored compile + benchmark time times this factor
  // before it returns (0: no wait), so that a replayed search takes time as a live one does:
  // it can be watched, or killed in the middle. Must be finite and >= 0.
  double time_scale = 0;
  // > 0: each measurement carries this many sentinel repeats (Measurement::sentinel_ms), drawn
  // from the stored runs of the data's steadiest configuration (the ok one with 8 or more runs
  // whose range is narrowest, relative to its median), the first measurement
  // sentinel_warmup_repeats of them, as a live benchmarker calibrates its sentinel on the first
  // call. Drawn from a stream of their own: the measurements are the same with or without.
  std::size_t sentinel_repeats = 0;
  std::size_t sentinel_warmup_repeats = 200;
};

// measure() answers from `data`:
//   - stored ok configuration: status ok with runs drawn per ReplaySampling; compile_ms and
//     benchmark_ms as stored;
//   - stored failure: the stored status and reason (compile_failed, runtime_failed, ...);
//   - configuration absent from the data: status invalid, reason "absent from <path>".
// Each measured candidate is counted. The first visit of a configuration is charged its stored
// compile + benchmark time (cost_s, simulated seconds); later visits cost nothing, as a
// cache would make them. Configurations are matched by parameter name, so a space whose
// parameters are ordered differently still finds its entries.
// Copies share one state (counts, seed stream): pass it by value into a SearchContext and
// still read the counts from the original.
class ReplayBenchmarker {
 public:
  explicit ReplayBenchmarker(std::shared_ptr<const SpaceData> data, ReplayOptions options = {});
  explicit ReplayBenchmarker(SpaceData data, ReplayOptions options = {});

  [[nodiscard]] std::vector<Measurement> measure(std::span<const Candidate> candidates);
  // Moves past `candidates` as measure() would (seed stream, first visits, counts) without
  // waiting and without answering: a resumed search serves them from its cache, and the
  // measurements after them are the ones an uninterrupted search gets.
  void advance_past(std::span<const Candidate> candidates);

  [[nodiscard]] std::size_t measurement_count() const noexcept;  // candidates measured so far
  [[nodiscard]] double simulated_seconds() const noexcept;       // cost charged so far
  [[nodiscard]] const SpaceData& data() const noexcept;
  [[nodiscard]] const std::shared_ptr<const SpaceData>& shared_data() const noexcept;
  // The stored observation of `config`, or nullptr when the data do not hold it.
  [[nodiscard]] const Observation* find(const Config& config) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> m_impl;
};

static_assert(Benchmarker<ReplayBenchmarker>);

}  // namespace gpuforecast
