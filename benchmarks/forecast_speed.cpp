// Forecast speed of every surrogate: forecasts per second when scoring the whole
// convolution_milo A100 space in batches, single-candidate latency (p50, p99), and training time
// on 10% of dedispersion_milo A100. Issue 4's targets: >= 20,000 forecasts/s for the default
// model on this 2-core machine; training on 10% of dedispersion_milo A100 in <= 60 s.
//
//   forecast_speed [--data DIR] [--quick] [--surrogates a,b] [--batch 4096] [--seconds 2] [--no-train]
// --no-train skips the timed fit on dedispersion (for profiling the scoring loop).
// --module-path runs the transformer through torch::nn's own encoder and optimiser (the reference
// implementation its faster paths are checked against: the "before" of docs/transformer.md).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/evaluation.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/openmp_environment.hpp"
#include "common/parse_number.hpp"
#include "common/split_list.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;
using Clock = std::chrono::steady_clock;

namespace {
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

using gpuforecast::detail::split_list;
}  // namespace

int main(int argc, char** argv) try {
  detail::ensure_passive_openmp_wait();
  const char* env = std::getenv("GPUFORECAST_DATA");
  fs::path data = env && *env ? fs::path(env) : fs::path(GPUFORECAST_SOURCE_DIR) / ".." / "shared" / "datasets";
  std::vector<std::string> surrogates = surrogate_names();
  std::size_t batch = 4096;
  double seconds = 2.0;
  std::size_t singles = 300;
  bool time_training = true;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw invalid_argument_error(k + " needs a value");
      return argv[++i];
    };
    if (k == "--data") data = value();
    else if (k == "--surrogates") surrogates = split_list(value());
    else if (k == "--batch") batch = detail::parse_number<std::size_t>(k, value());
    else if (k == "--seconds") seconds = detail::parse_number<double>(k, value());
    else if (k == "--no-train") time_training = false;
    else if (k == "--module-path") setenv("GPUFORECAST_TRANSFORMER_MODULE_PATH", "1", 1);
    else if (k == "--quick") {
      seconds = 0.5;
      singles = 100;
    } else if (k == "--help" || k == "-h") {
      fmt::print("usage: forecast_speed [--data DIR] [--quick] [--surrogates a,b] [--batch N] [--seconds S] [--no-train] [--module-path]\n");
      return 0;
    } else throw invalid_argument_error("unknown option " + k);
  }
  const auto dir = data / "benchmark_hub" / "cachefiles";
  const SpaceData conv = load_space((dir / "convolution_milo" / "A100.json.gz").string());
  const SpaceData dedisp = load_space((dir / "dedispersion_milo" / "A100.json.gz").string());
  std::vector<Candidate> space;
  for (const auto& o : conv.observations) space.push_back(o.candidate);
  const auto conv_train = interpolation_split(conv, 0.10, 0).train;
  const auto dedisp_train = interpolation_split(dedisp, 0.10, 0).train;

  fmt::print("forecast_speed: scoring convolution_milo A100 ({} candidates) in batches of {}; default = {}\n",
             space.size(), batch, default_surrogate_name());
  fmt::print("{:<12} {:>14} {:>12} {:>12} {:>22}\n", "surrogate", "forecasts/s", "single p50", "single p99",
             "train 10% dedisp A100");
  for (const auto& name : surrogates) {
    // Training time on 10% of dedispersion_milo A100 (1,113 observations).
    auto t0 = Clock::now();
    double train_s = 0;
    if (time_training) {
      auto timed = make_surrogate(name, 0);
      timed.fit(dedisp_train);
      train_s = since(t0);
    }

    auto model = make_surrogate(name, 0);
    model.fit(conv_train);
    std::size_t scored = 0;
    (void)model.predict(std::span<const Candidate>(space).first(std::min(batch, space.size())));  // warm-up
    t0 = Clock::now();
    do {
      for (std::size_t b = 0; b < space.size(); b += batch) {
        const auto n = std::min(batch, space.size() - b);
        scored += model.predict(std::span<const Candidate>(space).subspan(b, n)).size();
      }
    } while (since(t0) < seconds);
    const double rate = static_cast<double>(scored) / since(t0);

    std::vector<double> lat;
    for (std::size_t i = 0; i < singles; ++i) {
      const auto c = std::span<const Candidate>(space).subspan((i * 7919) % space.size(), 1);
      const auto t1 = Clock::now();
      (void)model.predict(c);
      lat.push_back(since(t1) * 1e3);
    }
    std::sort(lat.begin(), lat.end());
    const double p50 = lat[lat.size() / 2];
    const double p99 = lat[std::min(lat.size() - 1, static_cast<std::size_t>(0.99 * static_cast<double>(lat.size())))];
    fmt::print("{:<12} {:>14.0f} {:>9.3f} ms {:>9.3f} ms {:>20.2f} s\n", name, rate, p50, p99, train_s);
    std::fflush(stdout);
  }
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "forecast_speed: error: {}\n", e.what());
  return 1;
}
