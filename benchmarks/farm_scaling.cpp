// Throughput of the MPI measurement farm on one machine: `gpuforecast search --mpi` over replay
// ranks, each measurement held for its stored compile + benchmark time x --time-scale, with
// 1, 2, 4 and 8 worker ranks. Prints measurements per second and the speed-up over one worker
// (the target: >= 0.9 x N when a measurement takes 50 ms or more). It starts mpirun
// itself (with --oversubscribe: replay ranks sleep, they do not need a core each).
//
//   farm_scaling [--replay FILE] [--strategy random] [--budget 96] [--time-scale 0.02]
//                [--workers 1,2,4,8] [--first-seed 1] [--json]
//
// The wall time counts from the first candidate handed out to the last result (MPI start-up
// is not in it). With two or more workers every strategy submits a candidate whenever a rank
// frees up (core/concepts.hpp); what is left is rank 0's own time per decision (the
// surrogate-filtered search refits and ranks proposals every few results).
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/parse_number.hpp"
#include "common/split_list.hpp"
#include "gpuforecast/core/error.hpp"

namespace {

std::string data_root() {
  const char* env = std::getenv("GPUFORECAST_DATA");
  return env && *env ? env : std::string(GPUFORECAST_SOURCE_DIR) + "/../shared/datasets";
}

struct Args {
  std::string replay = data_root() + "/benchmark_hub/cachefiles/convolution_milo/A4000.json.gz";
  std::string strategy = "random";
  std::size_t budget = 96;
  double time_scale = 0.02;
  std::vector<std::size_t> workers{1, 2, 4, 8};
  std::uint64_t first_seed = 1;
  bool json = false;
};

nlohmann::json run_farm(const Args& a, std::size_t workers) {
  std::string cmd = fmt::format("'{}' -np {} --oversubscribe {}'{}' search --replay '{}' --strategy {} --budget {} "
                                "--time-scale {} --first-seed {} --mpi --json 2>/dev/null",
                                GPUFORECAST_MPIEXEC, workers + 1, ::geteuid() == 0 ? "--allow-run-as-root " : "",
                                GPUFORECAST_CLI_PATH, a.replay, a.strategy, a.budget, a.time_scale, a.first_seed);
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) throw gpuforecast::invalid_argument_error("cannot start: " + cmd);
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status != 0) throw gpuforecast::invalid_argument_error(fmt::format("{} failed (status {}):\n{}", cmd, status, out));
  return nlohmann::json::parse(out);
}

}  // namespace

int main(int argc, char** argv) try {
  using gpuforecast::detail::parse_number;
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw gpuforecast::invalid_argument_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--replay") a.replay = value();
    else if (arg == "--strategy") a.strategy = value();
    else if (arg == "--budget") a.budget = parse_number<std::size_t>("--budget", value());
    else if (arg == "--time-scale") a.time_scale = parse_number<double>("--time-scale", value());
    else if (arg == "--first-seed") a.first_seed = parse_number<std::uint64_t>("--first-seed", value());
    else if (arg == "--workers") {
      a.workers.clear();
      for (const auto& w : gpuforecast::detail::split_list(value()))
        a.workers.push_back(parse_number<std::size_t>("--workers", w));
    } else if (arg == "--json") a.json = true;
    else throw gpuforecast::invalid_argument_error("unknown option " + arg);
  }
  nlohmann::json report{{"replay", a.replay}, {"strategy", a.strategy}, {"budget", a.budget},
                        {"time_scale", a.time_scale}};
  double one = 0;
  if (!a.json)
    fmt::print("{} over replay ranks, {} measurements, time scale {}\n{:>8} {:>14} {:>16} {:>9} {:>12} {:>6}\n",
               a.strategy, a.budget, a.time_scale, "workers", "measurements/s", "ms per measurement", "speed-up",
               "speed-up / N", "busy");
  for (const std::size_t n : a.workers) {
    const auto r = run_farm(a, n);
    const double rate = r.at("measurements_per_second").get<double>();
    if (one == 0) one = n == 1 ? rate : 0;
    const double speedup = one > 0 ? rate / one : 0;
    // What one worker spends on a measurement (the farm's wall time x workers / measurements).
    const double ms_each = 1e3 * static_cast<double>(n) / rate;
    // The ranks' share of the wall time spent holding a measurement. Strategies that choose
    // with what has landed measure other configurations on 8 ranks than on 1, some slower, so
    // the speed-up in measurements/s mixes the farm's efficiency with that; this does not.
    const double wall = r.at("wall_seconds").get<double>();
    const double busy = wall > 0 ? r.at("charged_seconds").get<double>() * a.time_scale / (static_cast<double>(n) * wall) : 0;
    report["runs"].push_back({{"workers", n}, {"measurements", r.at("measurements")}, {"wall_seconds", r.at("wall_seconds")},
                              {"measurements_per_second", rate}, {"ms_per_measurement_per_worker", ms_each},
                              {"speedup", speedup}, {"efficiency", n > 0 ? speedup / static_cast<double>(n) : 0},
                              {"busy", busy}});
    if (!a.json)
      fmt::print("{:>8} {:>14.2f} {:>16.1f} {:>9.2f} {:>12.2f} {:>5.0f}%\n", n, rate, ms_each, speedup,
                 speedup / static_cast<double>(n), 100 * busy);
  }
  if (a.json) fmt::print("{}\n", report.dump(2));
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "farm_scaling: {}\n", e.what());
  return 1;
}
