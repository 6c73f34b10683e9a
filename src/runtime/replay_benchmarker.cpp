#include "gpuforecast/runtime/replay_benchmarker.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

struct ReplayBenchmarker::Impl {
  std::shared_ptr<const SpaceData> data;
  ReplayOptions options;
  std::unordered_map<std::string, std::size_t> index;  // key in the data's parameter order
  std::vector<std::string> names;                      // the data's parameter order
  std::mt19937_64 rng;
  std::mt19937_64 sentinel_rng;
  std::vector<double> sentinel_runs;  // the steadiest configuration's stored runs (ms)
  bool sentinel_warmed_up = false;
  std::unordered_set<std::string> visited;
  std::size_t count = 0;
  double seconds = 0;
  std::mutex mutex;

  Impl(std::shared_ptr<const SpaceData> d, ReplayOptions o)
      : data(std::move(d)), options(o), rng(o.seed), sentinel_rng(o.seed ^ 0x5E47'1E1ULL) {
    if (!data) throw invalid_argument_error("ReplayBenchmarker: no data");
    if (!std::isfinite(o.time_scale) || o.time_scale < 0)
      throw invalid_argument_error(
          fmt::format("ReplayOptions::time_scale must be a finite number >= 0, not {}", o.time_scale));
    names = *data->space.names();
    if (names.empty() && !data->observations.empty()) names = data->observations.front().candidate.config.names();
    index.reserve(data->observations.size());
    for (std::size_t i = 0; i < data->observations.size(); ++i)
      index.emplace(key_of(data->observations[i].candidate.config), i);
    if (options.sentinel_repeats > 0) sentinel_runs = steadiest_runs();
  }

  // The stored runs of the ok configuration with 8 or more runs whose whole range, over its
  // median, is narrowest: the replay's stand-in for a fixed, steady reference kernel. The whole
  // range, not a central one: one stray stored run would replay as a slow device now and then.
  [[nodiscard]] std::vector<double> steadiest_runs() const {
    const std::vector<double>* best = nullptr;
    double best_spread = std::numeric_limits<double>::infinity();
    for (const auto& o : data->observations) {
      const auto& runs = o.measurement.samples_ms;
      if (!o.measurement.ok() || runs.size() < 8) continue;
      std::vector<double> sorted = runs;
      std::sort(sorted.begin(), sorted.end());
      const double median = sorted[sorted.size() / 2];
      if (!(median > 0)) continue;
      const double spread = (sorted.back() - sorted.front()) / median;
      if (spread < best_spread) best_spread = spread, best = &runs;
    }
    if (!best)
      throw invalid_argument_error(fmt::format(
          "ReplayOptions::sentinel_repeats: {} has no ok configuration with 8 or more stored runs to replay as the "
          "sentinel",
          data->path.empty() ? "the replayed data" : data->path));
    return *best;
  }

  [[nodiscard]] std::vector<double> sentinel() {
    const std::size_t n = sentinel_warmed_up ? options.sentinel_repeats
                                             : std::max(options.sentinel_repeats, options.sentinel_warmup_repeats);
    sentinel_warmed_up = true;
    std::uniform_int_distribution<std::size_t> pick(0, sentinel_runs.size() - 1);
    std::vector<double> out(n);
    for (auto& x : out) x = sentinel_runs[pick(sentinel_rng)];
    return out;
  }

  // Key in the data's parameter order, whatever order `config` has.
  [[nodiscard]] std::string key_of(const Config& config) const {
    if (config.names() == names) return config.key();
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const Value* v = config.find(names[i]);
      if (!v) return {};  // a parameter the data do not know: never matches
      if (i) out += ',';
      out += v->to_string();
    }
    if (config.size() != names.size()) return {};
    return out;
  }

  [[nodiscard]] const Observation* find(const Config& config) const {
    auto k = key_of(config);
    if (k.empty() && !names.empty()) return nullptr;
    auto it = index.find(k);
    return it == index.end() ? nullptr : &data->observations[it->second];
  }

  Measurement replay(const Candidate& candidate) {
    Measurement m = replay_stored(candidate);
    // A configuration the space rules out never ran: no sentinel after it.
    if (options.sentinel_repeats > 0 && m.status != Status::invalid) m.sentinel_ms = sentinel();
    return m;
  }

  Measurement replay_stored(const Candidate& candidate) {
    ++count;
    const Observation* stored = find(candidate.config);
    if (!stored) {
      Measurement m;
      m.status = Status::invalid;
      m.reason = fmt::format("absent from {}", data->path.empty() ? "the replayed data" : data->path);
      return m;
    }
    Measurement m = stored->measurement;
    const bool first = visited.insert(key_of(candidate.config)).second;
    m.cost_s = first ? (m.compile_ms + m.benchmark_ms) / 1000.0 : 0.0;
    seconds += m.cost_s;
    if (m.ok() && !m.samples_ms.empty()) {
      const auto& runs = stored->measurement.samples_ms;
      std::uniform_int_distribution<std::size_t> pick(0, runs.size() - 1);
      switch (options.sampling) {
        case ReplaySampling::one_run:
          m.samples_ms = {runs[pick(rng)]};
          summarise_samples(m);
          break;
        case ReplaySampling::bootstrap:
          for (auto& s : m.samples_ms) s = runs[pick(rng)];
          summarise_samples(m);
          break;
        case ReplaySampling::median: break;
        case ReplaySampling::mean: {
          double sum = 0;
          for (const double r : runs) sum += r;
          m.samples_ms = {sum / static_cast<double>(runs.size())};
          summarise_samples(m);
          break;
        }
      }
    }
    return m;
  }
};

std::string_view replay_sampling_name(ReplaySampling sampling) noexcept {
  switch (sampling) {
    case ReplaySampling::one_run: return "one_run";
    case ReplaySampling::bootstrap: return "bootstrap";
    case ReplaySampling::median: return "median";
    case ReplaySampling::mean: return "mean";
  }
  return "?";
}

ReplaySampling parse_replay_sampling(std::string_view name) {
  for (auto s : {ReplaySampling::one_run, ReplaySampling::bootstrap, ReplaySampling::median, ReplaySampling::mean})
    if (name == replay_sampling_name(s)) return s;
  throw invalid_argument_error(fmt::format("replay sampling '{}': expected one_run, bootstrap, median or mean", name));
}

ReplayBenchmarker::ReplayBenchmarker(std::shared_ptr<const SpaceData> data, ReplayOptions options)
    : m_impl(std::make_shared<Impl>(std::move(data), options)) {}

ReplayBenchmarker::ReplayBenchmarker(SpaceData data, ReplayOptions options)
    : ReplayBenchmarker(std::make_shared<const SpaceData>(std::move(data)), options) {}

std::vector<Measurement> ReplayBenchmarker::measure(std::span<const Candidate> candidates) {
  std::vector<Measurement> out;
  out.reserve(candidates.size());
  for (const auto& c : candidates) {
    {
      std::lock_guard lock(m_impl->mutex);
      out.push_back(m_impl->replay(c));
    }
    // Outside the lock: copies measuring side by side wait side by side.
    if (m_impl->options.time_scale > 0 && out.back().cost_s > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(out.back().cost_s * m_impl->options.time_scale));
  }
  return out;
}

void ReplayBenchmarker::advance_past(std::span<const Candidate> candidates) {
  std::lock_guard lock(m_impl->mutex);
  for (const auto& c : candidates) (void)m_impl->replay(c);
}

std::size_t ReplayBenchmarker::measurement_count() const noexcept { return m_impl->count; }
double ReplayBenchmarker::simulated_seconds() const noexcept { return m_impl->seconds; }
const SpaceData& ReplayBenchmarker::data() const noexcept { return *m_impl->data; }
const std::shared_ptr<const SpaceData>& ReplayBenchmarker::shared_data() const noexcept { return m_impl->data; }
const Observation* ReplayBenchmarker::find(const Config& config) const { return m_impl->find(config); }

}  // namespace gpuforecast
