// The price of parallel search: fraction of the optimum at equal measurements when 1, 4 or 8
// workers measure at once, per strategy, on replayed data. No MPI: the workers are simulated
// (runtime/simulated_farm.hpp), each replayed measurement holding one for its stored compile +
// benchmark time on a virtual clock, so a strategy sees results land exactly as N real workers
// measuring that fast would hand them back, and every number is deterministic per seed.
// Also prints the virtual time of a run and its speed-up over one worker.
//
//   parallel_search [--data DIR] [--kernels convolution_milo,dedispersion_milo] [--devices A100,A4000,A6000]
//                   [--strategies random,genetic,surrogate] [--workers 1,4,8] [--seeds 10] [--first-seed 1]
//                   [--budget 200] [--threads N] [--json]
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;

namespace {

struct Args {
  fs::path data;
  std::vector<std::string> kernels{"convolution_milo", "dedispersion_milo"};
  std::vector<std::string> devices{"A100", "A4000", "A6000"};
  std::vector<std::string> strategies{"random", "genetic", "surrogate"};
  std::vector<std::size_t> workers{1, 4, 8};
  std::size_t seeds = 10, first_seed = 1, budget = 200;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool json = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t from = 0; from <= s.size();) {
    const auto comma = std::min(s.find(',', from), s.size());
    if (comma > from) out.push_back(s.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

std::size_t count(const std::string& option, const std::string& text) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v == 0)
    throw invalid_argument_error(fmt::format("{} {}: expected a whole number >= 1", option, text));
  return v;
}

Args parse(int argc, char** argv) {
  Args a;
  const char* env = std::getenv("GPUFORECAST_DATA");
  a.data = env && *env ? fs::path(env) : fs::path(GPUFORECAST_SOURCE_DIR) / ".." / "shared" / "datasets";
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw invalid_argument_error(fmt::format("{} needs a value", k));
      return argv[++i];
    };
    if (k == "--data") a.data = value();
    else if (k == "--kernels") a.kernels = split(value());
    else if (k == "--devices") a.devices = split(value());
    else if (k == "--strategies") a.strategies = split(value());
    else if (k == "--workers") {
      a.workers.clear();
      for (const auto& w : split(value())) a.workers.push_back(count(k, w));
    } else if (k == "--seeds") a.seeds = count(k, value());
    else if (k == "--first-seed") a.first_seed = count(k, value());
    else if (k == "--budget") a.budget = count(k, value());
    else if (k == "--threads") a.threads = static_cast<unsigned>(count(k, value()));
    else if (k == "--json") a.json = true;
    else throw invalid_argument_error(fmt::format("unknown argument {}", k));
  }
  if (a.workers.empty()) throw invalid_argument_error("--workers: give at least one count");
  return a;
}

struct Cell {
  std::vector<BudgetSummary> fraction;  // at each reported budget
  double virtual_seconds = 0;           // mean over seeds
  double utilisation = 0;
};

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  std::vector<std::size_t> budgets;
  for (std::size_t b : {50, 100, 200})
    if (b <= a.budget) budgets.push_back(b);
  if (budgets.empty() || budgets.back() != a.budget) budgets.push_back(a.budget);

  struct Row {
    std::string kernel, device, strategy;
    std::map<std::size_t, Cell> by_workers;
  };
  std::vector<Row> rows;
  for (const auto& kernel : a.kernels)
    for (const auto& device : a.devices) {
      const fs::path file = a.data / "benchmark_hub" / "cachefiles" / kernel / (device + ".json.gz");
      auto data = std::make_shared<const SpaceData>(load_replay_space(file.string()));
      for (const auto& strategy : a.strategies) {
        Row row{kernel, device, strategy, {}};
        for (std::size_t w : a.workers) {
          Plan e;
          e.replay().data = data;
          e.strategy = strategy;
          e.budget = a.budget;
          e.seeds = a.seeds;
          e.first_seed = a.first_seed;
          e.threads = a.threads;
          e.replay().workers = w;
          const auto result = gpuforecast::run(e);
          Cell cell;
          cell.fraction = result.summary(budgets);
          for (const auto& r : result.runs) {
            // One worker: the virtual time is the sum of the charges.
            cell.virtual_seconds += w > 1 ? r.virtual_seconds : r.trace.total_cost_s();
            cell.utilisation += w > 1 ? r.utilisation : 1.0;
          }
          cell.virtual_seconds /= static_cast<double>(result.runs.size());
          cell.utilisation /= static_cast<double>(result.runs.size());
          row.by_workers[w] = std::move(cell);
        }
        rows.push_back(std::move(row));
      }
    }

  if (a.json) {
    nlohmann::json j;
    j["seeds"] = a.seeds;
    j["first_seed"] = a.first_seed;
    j["budget"] = a.budget;
    for (const auto& r : rows)
      for (const auto& [w, cell] : r.by_workers) {
        nlohmann::json c{{"kernel", r.kernel}, {"device", r.device}, {"strategy", r.strategy}, {"workers", w},
                         {"mean_virtual_seconds", cell.virtual_seconds}, {"mean_utilisation", cell.utilisation}};
        for (const auto& s : cell.fraction)
          c["fraction_of_optimum"].push_back(
              {{"measurements", s.budget}, {"mean", s.mean}, {"p10", s.p10}, {"standard_error", s.standard_error}});
        j["results"].push_back(std::move(c));
      }
    fmt::print("{}\n", j.dump(2));
    return 0;
  }

  fmt::print("fraction of optimum at equal measurements, mean over {} seeds (from {}), by simulated workers\n", a.seeds,
             a.first_seed);
  std::string header = fmt::format("{:<18} {:<6} {:<10}", "kernel", "device", "strategy");
  for (std::size_t b : budgets)
    for (std::size_t w : a.workers) header += fmt::format(" {:>7}", fmt::format("{}@{}w", b, w));
  fmt::print("{}\n", header);
  for (const auto& r : rows) {
    std::string line = fmt::format("{:<18} {:<6} {:<10}", r.kernel, r.device, r.strategy);
    for (std::size_t i = 0; i < budgets.size(); ++i)
      for (std::size_t w : a.workers) line += fmt::format(" {:>7.3f}", r.by_workers.at(w).fraction[i].mean);
    fmt::print("{}\n", line);
  }
  // Over every space: the price of parallelism (quality lost at equal measurements) against what
  // it buys (virtual time to the budget, and how busy the workers were).
  fmt::print("\nmean over the {} spaces\n", a.kernels.size() * a.devices.size());
  std::string h2 = fmt::format("{:<10} {:>7}", "strategy", "workers");
  for (std::size_t b : budgets) h2 += fmt::format(" {:>9}", fmt::format("at {}", b));
  h2 += fmt::format(" {:>10} {:>8} {:>6}", "virtual s", "speed-up", "busy");
  fmt::print("{}\n", h2);
  for (const auto& strategy : a.strategies)
    for (std::size_t w : a.workers) {
      std::vector<double> mean(budgets.size(), 0.0);
      double seconds = 0, seconds_one = 0, busy = 0, n = 0;
      for (const auto& r : rows) {
        if (r.strategy != strategy) continue;
        const Cell& c = r.by_workers.at(w);
        for (std::size_t i = 0; i < budgets.size(); ++i) mean[i] += c.fraction[i].mean;
        seconds += c.virtual_seconds;
        seconds_one += r.by_workers.at(a.workers.front()).virtual_seconds;
        busy += c.utilisation;
        n += 1;
      }
      std::string line = fmt::format("{:<10} {:>7}", strategy, w);
      for (double m : mean) line += fmt::format(" {:>9.3f}", m / n);
      line += fmt::format(" {:>10.0f} {:>7.2f}x {:>5.0f}%", seconds / n, seconds > 0 ? seconds_one / seconds : 0.0,
                          100 * busy / n);
      fmt::print("{}\n", line);
    }
  fmt::print("\nspeed-up: virtual time to the budget with {} worker(s) over that with this many; busy: the workers' "
             "share of it spent measuring\n",
             a.workers.front());
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "parallel_search: {}\n", e.what());
  return 1;
}
