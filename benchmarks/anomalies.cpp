// Anomaly detection on GPU behaviour (search/anomaly_monitor.hpp) against injected faults: the
// surrogate-filtered search replays a shared space (every repeat as stored), once clean and once
// through a benchmarker that injects
//   - slowed measurements: each with probability 2%, all repeats times U(1.3, 3);
//   - a device-wide step: every measurement from half the budget on, times 1.15;
//   - a run of bimodal repeats: 5 measurements from three quarters of the budget on, the second
//     half of their repeats times 1.3.
// The replay times a sentinel with every measurement (ReplayOptions::sentinel_repeats, from the
// stored runs of the space's steadiest configuration); a slowed measurement and the step slow
// the sentinel by the same factor, as a slow device slows every kernel (--sentinel-repeats 0:
// no sentinel, the forecast-based tests alone).
// Reported per space and over all: recall of the slowed measurements (flagged slow_outlier or
// slow_device; among all of them, and among those the model had forecast),
// recall of the bimodal run (repeat_rise), the step found (a step_drift alarm
// at or after it) and its delay in measurements, and the false flags of the clean run (every
// kind, over its measurements).
//
//   anomalies [--data DIR] [--kernels k1,k2] [--devices d1,d2] [--seeds 5] [--budget 200]
//             [--outlier-level 0.01] [--slow-device-level 0.005] [--drift-h 8] [--drift-k 0.5]
//             [--repeat-level 0.01] [--repeat-min-rise 0.05] [--repeat-run-length 3] [--sentinel-repeats 20]
//             [--json]
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/benchmark_arguments.hpp"
#include "common/shared_data_dir.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "runtime/statistics.hpp"
#include "search/anomaly_monitor.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/search/search_context.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;

namespace {

struct Args {
  fs::path data = bench::shared_data_dir();
  std::vector<std::string> kernels = {"convolution_milo", "dedispersion_milo", "convolution", "gemm", "pnpoly"};
  std::vector<std::string> devices = {"A100", "A4000", "RTX_3090", "RTX_Titan"};
  std::size_t seeds = 5, budget = 200;
  std::size_t sentinel_repeats = 20;
  AnomalyMonitorOptions monitor;
  bool json = false;
};

Args parse(int argc, char** argv) {
  Args a;
  bench::BenchmarkArguments args(
      "usage: anomalies [--data DIR] [--kernels k1,k2] [--devices d1,d2] [--seeds 5] [--budget 200]\n"
      "                 [--outlier-level 0.01] [--slow-device-level 0.005] [--drift-h 8] [--drift-k 0.5]\n"
      "                 [--repeat-level 0.01] [--repeat-min-rise 0.05] [--repeat-run-length 3] [--sentinel-repeats 20]\n"
      "                 [--json]\n");
  args.text("--data", a.data)
      .list("--kernels", a.kernels)
      .list("--devices", a.devices)
      .number("--seeds", a.seeds)
      .number("--budget", a.budget)
      .number("--outlier-level", a.monitor.outlier_level)
      .number("--drift-h", a.monitor.drift.h)
      .number("--drift-k", a.monitor.drift.k)
      .number("--slow-device-level", a.monitor.slow_device_level)
      .number("--repeat-level", a.monitor.repeat_level)
      .number("--repeat-min-rise", a.monitor.repeat_min_rise)
      .number("--repeat-run-length", a.monitor.repeat_run_length)
      .number("--sentinel-repeats", a.sentinel_repeats)
      .flag("--json", [&] { a.json = true; });
  if (!args.parse(argc, argv)) std::exit(0);
  if (a.seeds == 0 || a.budget < 40) throw invalid_argument_error("need --seeds >= 1 and --budget >= 40");
  return a;
}

// What was injected, by 1-based measurement index.
struct Injected {
  std::set<std::size_t> slowed, bimodal;
  std::size_t step_from = 0;
};

// Replays with every stored repeat, and injects the faults when `inject` is set.
class FaultyReplay {
 public:
  FaultyReplay(std::shared_ptr<const SpaceData> data, bool inject, std::size_t budget, std::uint64_t seed,
               std::size_t sentinel_repeats, std::shared_ptr<Injected> injected)
      : m_replay(std::move(data),
                 ReplayOptions{.seed = seed, .sampling = ReplaySampling::median, .sentinel_repeats = sentinel_repeats}),
        m_inject(inject),
        m_budget(budget),
        m_rng(std::make_shared<std::mt19937_64>(seed * 104729 + 17)),
        m_count(std::make_shared<std::size_t>(0)),
        m_injected(std::move(injected)) {}

  std::vector<Measurement> measure(std::span<const Candidate> candidates) {
    auto out = m_replay.measure(candidates);
    for (auto& m : out) {
      const std::size_t index = ++*m_count;
      if (!m_inject || !m.ok()) continue;
      double factor = 1;  // the device's: the sentinel timed after the measurement is slowed too
      if (index > m_budget / 2) {
        factor *= 1.15;
        if (!m_injected->step_from) m_injected->step_from = index;
      }
      if (std::uniform_real_distribution<>(0, 1)(*m_rng) < 0.02) {
        factor *= std::uniform_real_distribution<>(1.3, 3.0)(*m_rng);
        m_injected->slowed.insert(index);
      }
      const std::size_t bimodal_from = 3 * m_budget / 4;
      const bool bimodal = index >= bimodal_from && index < bimodal_from + 5 && m.samples_ms.size() >= 8;
      for (std::size_t i = 0; i < m.samples_ms.size(); ++i)
        m.samples_ms[i] *= factor * (bimodal && i >= m.samples_ms.size() / 2 ? 1.3 : 1.0);
      if (bimodal) m_injected->bimodal.insert(index);
      for (auto& x : m.sentinel_ms) x *= factor;
      if (m.samples_ms.empty()) m.median_ms *= factor;
      else summarise_samples(m);
    }
    return out;
  }

 private:
  ReplayBenchmarker m_replay;
  bool m_inject;
  std::size_t m_budget;
  std::shared_ptr<std::mt19937_64> m_rng;
  std::shared_ptr<std::size_t> m_count;
  std::shared_ptr<Injected> m_injected;
};

struct Run {
  std::vector<SearchAnomaly> anomalies;
  std::set<std::size_t> forecast;  // measurements the model forecast before they landed
  std::size_t measured = 0;
};

// Records which measurements had a forecast (the only ones the outlier test can judge).
struct ForecastSeen {
  std::set<std::string> keys;
  std::set<std::size_t>* seen;
  void on_forecasted(const SearchForecasted& e) {
    for (const auto& c : e.proposed) keys.insert(c.key());
  }
  void on_measured(const SearchMeasured& e) {
    if (keys.count(e.config.key())) seen->insert(e.index);
  }
  void on_round(const SearchRound&) { keys.clear(); }
};

Run run_search(const std::shared_ptr<const SpaceData>& data, bool inject, const Args& a, std::uint64_t seed,
               const std::shared_ptr<Injected>& injected) {
  Run r;
  Plan plan;
  plan.strategy = "surrogate";
  plan.budget = a.budget;
  plan.seeds = 1;
  plan.first_seed = seed;
  auto& faulty = plan.backend.emplace<CallerBackend>();
  faulty.space = data->space;
  faulty.prototype = data->observations.front().candidate;
  faulty.measure = [replay = FaultyReplay(data, inject, a.budget, seed, a.sentinel_repeats, injected)](
                       std::span<const Candidate> candidates) mutable { return replay.measure(candidates); };
  AnomalyMonitor monitor(a.monitor);
  plan.observe = [&](SearchContext& ctx, std::size_t, const std::string&) {
    ctx.add_observer(std::ref(monitor));
    ctx.add_observer(ForecastSeen{{}, &r.forecast});
  };
  const Result result = gpuforecast::run(plan);
  r.anomalies = monitor.anomalies();
  r.measured = result.runs.front().trace.size();
  return r;
}

struct Tally {
  std::size_t slowed = 0, slowed_forecast = 0, slowed_found = 0, slowed_forecast_found = 0;
  std::size_t bimodal = 0, bimodal_found = 0;
  std::size_t steps = 0, steps_found = 0, steps_within_20 = 0;
  double delay_sum = 0;
  std::size_t clean_measured = 0, clean_flags = 0;
  std::map<std::string, std::size_t> clean_by_kind;
  void add(const Tally& o) {
    for (const auto& [k, n] : o.clean_by_kind) clean_by_kind[k] += n;
    slowed += o.slowed, slowed_forecast += o.slowed_forecast, slowed_found += o.slowed_found;
    slowed_forecast_found += o.slowed_forecast_found, bimodal += o.bimodal, bimodal_found += o.bimodal_found;
    steps += o.steps, steps_found += o.steps_found, steps_within_20 += o.steps_within_20, delay_sum += o.delay_sum;
    clean_measured += o.clean_measured, clean_flags += o.clean_flags;
  }
  static double ratio(std::size_t a, std::size_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0; }
  [[nodiscard]] nlohmann::json json() const {
    return {{"slowed", slowed},
            {"slowed_recall", ratio(slowed_found, slowed)},
            {"slowed_forecast", slowed_forecast},
            {"slowed_forecast_recall", ratio(slowed_forecast_found, slowed_forecast)},
            {"bimodal", bimodal},
            {"bimodal_recall", ratio(bimodal_found, bimodal)},
            {"steps", steps},
            {"steps_found", steps_found},
            {"steps_within_20", steps_within_20},
            {"mean_delay", steps_found ? delay_sum / static_cast<double>(steps_found) : 0.0},
            {"clean_measured", clean_measured},
            {"clean_false_flag_rate", ratio(clean_flags, clean_measured)},
            {"clean_flags_by_kind", clean_by_kind}};
  }
};

Tally judge(const Run& faulty, const Injected& injected, const Run& clean) {
  Tally t;
  std::set<std::size_t> outliers, repeats;
  std::size_t first_drift = 0;
  for (const auto& a : faulty.anomalies) {
    if (a.kind == "slow_outlier" || a.kind == "slow_device") outliers.insert(a.index);
    if (a.kind == "repeat_rise") repeats.insert(a.index);
    if (a.kind == "step_drift" && injected.step_from && a.index >= injected.step_from && !first_drift)
      first_drift = a.index;
  }
  for (auto i : injected.slowed) {
    ++t.slowed;
    t.slowed_found += outliers.count(i);
    if (faulty.forecast.count(i)) ++t.slowed_forecast, t.slowed_forecast_found += outliers.count(i);
  }
  for (auto i : injected.bimodal) ++t.bimodal, t.bimodal_found += repeats.count(i);
  if (injected.step_from) {
    ++t.steps;
    if (first_drift) {
      ++t.steps_found;
      const double delay = static_cast<double>(first_drift - injected.step_from);
      t.delay_sum += delay;
      t.steps_within_20 += delay <= 20;
    }
  }
  t.clean_measured = clean.measured;
  t.clean_flags = clean.anomalies.size();
  for (const auto& a : clean.anomalies) ++t.clean_by_kind[a.kind];
  return t;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  Tally all;
  nlohmann::json rows = nlohmann::json::array();
  if (!a.json)
    fmt::print("Injected faults in replayed surrogate-filtered searches, budget {}, seeds 1-{}\n"
               "{:<28} {:>7} {:>9} {:>8} {:>7} {:>13} {:>9}\n",
               a.budget, a.seeds, "space", "slowed", "recall", "(fcast)", "bimodal", "step <=20 (d)", "false");
  for (const auto& kernel : a.kernels)
    for (const auto& device : a.devices) {
      const fs::path file = a.data / "benchmark_hub" / "cachefiles" / kernel / (device + ".json.gz");
      if (!fs::exists(file)) continue;
      auto data = std::make_shared<const SpaceData>(load_replay_space(file.string()));
      Tally space;
      for (std::uint64_t seed = 1; seed <= a.seeds; ++seed) {
        auto injected = std::make_shared<Injected>();
        const Run faulty = run_search(data, true, a, seed, injected);
        const Run clean = run_search(data, false, a, seed, std::make_shared<Injected>());
        space.add(judge(faulty, *injected, clean));
      }
      all.add(space);
      const auto j = space.json();
      rows.push_back({{"kernel", kernel}, {"device", device}, {"tally", j}});
      if (!a.json)
        fmt::print("{:<28} {:>7} {:>9.2f} {:>8.2f} {:>7.2f} {:>6}/{:<2} ({:>3.0f}) {:>9.4f}\n", kernel + " " + device,
                   space.slowed, j["slowed_recall"].get<double>(), j["slowed_forecast_recall"].get<double>(),
                   j["bimodal_recall"].get<double>(), space.steps_within_20, space.steps, j["mean_delay"].get<double>(),
                   j["clean_false_flag_rate"].get<double>());
    }
  const auto j = all.json();
  if (a.json) {
    fmt::print("{}\n", nlohmann::json{{"budget", a.budget}, {"seeds", a.seeds}, {"rows", rows}, {"all", j}}.dump(1));
  } else {
    fmt::print("{:<28} {:>7} {:>9.2f} {:>8.2f} {:>7.2f} {:>6}/{:<2} ({:>3.0f}) {:>9.4f}\n", "all", all.slowed,
               j["slowed_recall"].get<double>(), j["slowed_forecast_recall"].get<double>(),
               j["bimodal_recall"].get<double>(), all.steps_within_20, all.steps, j["mean_delay"].get<double>(),
               j["clean_false_flag_rate"].get<double>());
  }
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "anomalies: {}\n", e.what());
  return 1;
}
