// Certified screening inside the surrogate-filtered search, on every shared space: the same
// replayed runs without screening, with prequential screening (calibrated on the search's own
// forecasts made before each measurement) and with offline screening (calibrated on a seeded
// random sample of the space, --calibration-fraction of it, standing for a calibration file of
// the device); from-scratch surrogate, seeds 1-20, budget 200.
// Per space and per kernel family: candidates considered per measurement, screened out per run,
// the share of rounds whose rule certified a margin, the realised miss rate (screened-out
// proposals that beat the incumbent of their round, over all such proposals of the certified
// rounds, by the stored times) and the runs whose miss rate exceeded alpha, against the allowance delta * runs plus two
// binomial standard deviations; search quality (fraction of optimum) at 25/50/100/200 with and
// without screening, ± standard error.
//
//   screening [--data DIR] [--kernels k1,k2] [--devices d1,d2] [--seeds 20] [--first-seed 1]
//             [--budget 200] [--alpha 0.1] [--delta 0.1] [--calibration-fraction 0.2] [--threads N] [--json]
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/benchmark_arguments.hpp"
#include "common/runs_over_alpha.hpp"
#include "common/shared_spaces.hpp"
#include "common/shared_data_dir.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;

namespace {

struct Args {
  fs::path data = bench::shared_data_dir();
  std::vector<std::string> kernels, devices;
  std::size_t seeds = 20, budget = 200, first_seed = 1;
  double alpha = 0.1, delta = 0.1;
  double calibration_fraction = 0.2;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool json = false;
};

Args parse(int argc, char** argv) {
  Args a;
  bench::BenchmarkArguments args(
      "usage: screening [--data DIR] [--kernels k1,k2] [--devices d1,d2] [--seeds 20] [--first-seed 1]\n"
      "                 [--budget 200] [--alpha 0.1] [--delta 0.1] [--calibration-fraction 0.2] [--threads N] [--json]\n");
  args.text("--data", a.data)
      .list("--kernels", a.kernels)
      .list("--devices", a.devices)
      .number("--seeds", a.seeds)
      .number("--first-seed", a.first_seed)
      .number("--budget", a.budget)
      .number("--alpha", a.alpha)
      .number("--delta", a.delta)
      .number("--calibration-fraction", a.calibration_fraction)
      .number("--threads", a.threads)
      .flag("--json", [&] { a.json = true; });
  if (!args.parse(argc, argv)) std::exit(0);  // --help was shown
  if (a.seeds == 0) throw invalid_argument_error("--seeds must be at least 1");
  if (!(a.calibration_fraction > 0 && a.calibration_fraction < 1))
    throw invalid_argument_error("--calibration-fraction must lie in (0, 1)");
  return a;
}

struct Space {
  std::string kernel, device;
  std::shared_ptr<const SpaceData> data;
  std::shared_ptr<const std::vector<Observation>> calibration;  // the offline sample
};

// A seeded random sample of the space's successful measurements.
std::shared_ptr<const std::vector<Observation>> calibration_sample(const SpaceData& data, double fraction) {
  std::vector<Observation> ok;
  for (const auto& o : data.observations)
    if (o.measurement.ok() && o.measurement.median_ms > 0) ok.push_back(o);
  std::mt19937_64 rng(20261203);
  std::shuffle(ok.begin(), ok.end(), rng);
  ok.resize(static_cast<std::size_t>(fraction * static_cast<double>(ok.size())));
  return std::make_shared<const std::vector<Observation>>(std::move(ok));
}

// Every shared space the filters want.
std::vector<Space> load_spaces(const Args& a) {
  std::vector<Space> spaces;
  for (const auto& f : bench::shared_space_files(a.data)) {
    if (!bench::wanted(a.kernels, f.kernel) || !bench::wanted(a.devices, f.device)) continue;
    auto data = std::make_shared<const SpaceData>(load_replay_space(f.path.string()));
    auto sample = calibration_sample(*data, a.calibration_fraction);
    spaces.push_back({f.kernel, f.device, std::move(data), std::move(sample)});
  }
  if (spaces.empty()) throw error("no space matches --kernels / --devices");
  return spaces;
}

enum Mode { plain, prequential, offline, modes };
constexpr const char* mode_names[] = {"plain", "prequential", "offline"};

struct Outcome {
  Result result[modes];
};

Plan experiment(const Args& a, const Space& s, Mode mode) {
  Plan e;
  e.replay().data = s.data;
  e.strategy = "surrogate";
  e.budget = a.budget;
  e.seeds = a.seeds;
  e.first_seed = a.first_seed;
  e.threads = 1;  // spaces run side by side instead
  if (mode != plain)
    e.settings.options = {{"screen", "true"},
                          {"screen_alpha", fmt::format("{}", a.alpha)},
                          {"screen_delta", fmt::format("{}", a.delta)}};
  if (mode == offline) e.settings.screening_calibration = s.calibration;
  return e;
}

constexpr std::size_t budgets[] = {25, 50, 100, 200};

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  const auto spaces = load_spaces(a);
  std::vector<Outcome> outcomes(spaces.size());
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::string first_error;
  const auto worker = [&] {
    for (std::size_t i = next++; i < spaces.size() * modes; i = next++) {
      const auto& s = spaces[i / modes];
      const auto mode = static_cast<Mode>(i % modes);
      try {
        outcomes[i / modes].result[mode] = gpuforecast::run(experiment(a, s, mode));
        fmt::print(stderr, "  {}/{} {} done\n", s.kernel, s.device, mode_names[mode]);
      } catch (const std::exception& ex) {
        std::lock_guard lock(mutex);
        if (first_error.empty()) first_error = fmt::format("{}/{}: {}", s.kernel, s.device, ex.what());
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<unsigned>(a.threads, static_cast<unsigned>(spaces.size() * modes)); ++t)
    pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (!first_error.empty()) throw error(first_error);

  std::vector<std::size_t> shown;
  for (std::size_t b : budgets)
    if (b <= a.budget) shown.push_back(b);
  const auto at_50 = std::find(shown.begin(), shown.end(), std::size_t{50}) - shown.begin();
  nlohmann::json j{{"alpha", a.alpha}, {"delta", a.delta}, {"seeds", a.seeds}, {"first_seed", a.first_seed},
                   {"budget", a.budget}, {"calibration_fraction", a.calibration_fraction}};
  const std::size_t allowed = bench::allowed_violations(a.seeds, a.delta);
  if (!a.json) {
    fmt::print("certified screening, alpha {} delta {}, surrogate from scratch, seeds {}-{}, budget {}; offline: a "
               "random {:.0f}% of each space calibrates\n",
               a.alpha, a.delta, a.first_seed, a.first_seed + a.seeds - 1, a.budget, 100 * a.calibration_fraction);
    fmt::print("miss: screened-out proposals that beat their round's incumbent / all such proposals (stored times), "
               "over the rounds whose rule certified a margin (all rounds: in the JSON); over a: runs whose miss "
               "exceeded alpha, {} of {} allowed (delta * runs + 2 binomial sd)\n",
               allowed, a.seeds);
    fmt::print("q50 ok: quality at 50 not below plain by more than one standard error of the difference\n\n");
    fmt::print("{:<30} {:<12} {:>9} {:>9} {:>9} {:>7} {:>7} {:>6}   fraction of optimum at {}\n", "space", "mode",
               "consid/m", "skipped", "certified", "miss", "over a", "q50 ok", fmt::join(shown, "/"));
  }
  std::map<std::string, std::vector<std::size_t>> families;
  for (std::size_t i = 0; i < spaces.size(); ++i) families[spaces[i].kernel].push_back(i);
  for (const auto& [kernel, members] : families) {
    for (const std::size_t i : members) {
      const auto& s = spaces[i];
      const auto plain_q = outcomes[i].result[plain].summary(shown);
      nlohmann::json js{{"kernel", s.kernel}, {"device", s.device}, {"allowed_runs_over_alpha", allowed},
                        {"calibration_size", s.calibration->size()}};
      const auto quality_text = [&](const std::vector<BudgetSummary>& q) {
        std::string t;
        for (const auto& b : q) t += fmt::format(" {:.3f}±{:.3f}", b.mean, b.standard_error);
        return t;
      };
      for (const auto& b : plain_q)
        js["plain"]["quality"].push_back({{"measurements", b.budget}, {"mean", b.mean}, {"standard_error", b.standard_error}});
      if (!a.json)
        fmt::print("{:<30} {:<12} {:>9} {:>9} {:>9} {:>7} {:>7} {:>6}  {}\n", s.kernel + "/" + s.device, "plain", "", "",
                   "", "", "", "", quality_text(plain_q));
      for (const Mode mode : {prequential, offline}) {
        const auto& r = outcomes[i].result[mode];
        const auto sc = r.screening_summary();
        const auto q = r.summary(shown);
        bool q50_ok = true;
        if (at_50 < static_cast<std::ptrdiff_t>(shown.size())) {
          const auto& p50 = plain_q[static_cast<std::size_t>(at_50)];
          const auto& s50 = q[static_cast<std::size_t>(at_50)];
          q50_ok = s50.mean >= p50.mean - std::hypot(p50.standard_error, s50.standard_error);
        }
        nlohmann::json jm{{"considered_per_measurement", sc.considered_per_measurement},
                          {"screened_out_per_run", sc.skipped},
                          {"measured_per_run", sc.measured},
                          {"certified_rounds", sc.certified_rounds},
                          {"miss_rate_certified_rounds", sc.miss_rate_certified},
                          {"miss_rate_all_rounds", sc.miss_rate},
                          {"runs_over_alpha", sc.runs_over_alpha},
                          {"runs", sc.runs},
                          {"quality_at_50_within_se", q50_ok}};
        for (const auto& b : q)
          jm["quality"].push_back({{"measurements", b.budget}, {"mean", b.mean}, {"standard_error", b.standard_error}});
        js[mode_names[mode]] = jm;
        if (!a.json)
          fmt::print("{:<30} {:<12} {:>9.1f} {:>9.0f} {:>8.0f}% {:>7.3f} {:>4}/{:<2} {:>6}  {}\n", "", mode_names[mode],
                     sc.considered_per_measurement, sc.skipped, 100 * sc.certified_rounds, sc.miss_rate_certified,
                     sc.runs_over_alpha, sc.runs, q50_ok ? "yes" : "NO", quality_text(q));
      }
      j["spaces"].push_back(js);
    }
    if (!a.json) fmt::print("\n");
  }
  if (a.json) fmt::print("{}\n", j.dump(2));
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "screening: {}\n", e.what());
  return 1;
}
