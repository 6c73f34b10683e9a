// What application code pays to start forecasting: gpuforecast::load() of a model file plus one
// forecast(), timed in a fresh process that links only gpuforecast::gpuforecast, with its peak
// resident memory and whether libtorch was mapped. benchmarks/forecast_speed runs it once per
// model (a child process each, so no model's memory or caches count against another).
//
//   forecast_first_call MODEL.gfm CANDIDATE_CACHE.json
// CANDIDATE_CACHE: a Kernel Tuner cache whose first entry is the candidate to forecast.
// Prints one JSON object.
#include <gpuforecast/data/dataset.hpp>
#include <gpuforecast/forecast.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

// kB in /proc/self/status's `field` (VmRSS, VmHWM), as MiB.
double status_mib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) / 1024.0;
  return -1;
}

bool maps_libtorch() {
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line))
    if (line.find("libtorch") != std::string::npos) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 3) {
    std::fprintf(stderr, "usage: forecast_first_call MODEL.gfm CANDIDATE_CACHE.json\n");
    return 2;
  }
  const auto space = gpuforecast::load_space(argv[2]);
  if (space.observations.empty()) throw std::runtime_error(std::string(argv[2]) + " holds no candidate");
  const gpuforecast::Candidate candidate = space.observations.front().candidate;
  const double rss_before = status_mib("VmRSS");

  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const gpuforecast::Model model = gpuforecast::load(argv[1]);
  const auto t1 = Clock::now();
  const gpuforecast::Decision d = gpuforecast::forecast(model, candidate);
  const auto t2 = Clock::now();
  const double peak = status_mib("VmHWM");
  const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf(
      "{\"load_ms\": %.3f, \"first_forecast_ms\": %.3f, \"load_and_first_ms\": %.3f, \"rss_before_mib\": %.1f, "
      "\"peak_rss_mib\": %.1f, \"maps_libtorch\": %s, \"median_ms\": %.6g}\n",
      ms(t0, t1), ms(t1, t2), ms(t0, t2), rss_before, peak, maps_libtorch() ? "true" : "false",
      d.forecast.median_ms);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "forecast_first_call: error: %s\n", e.what());
  return 1;
}
