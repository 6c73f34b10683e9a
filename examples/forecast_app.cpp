// Plain application code: load a calibrated model once, then ask for decisions. No GPU needed.
//
//   example_forecast_app MODEL.gfm [KERNEL DEVICE name=value,name=value,...]
//
// Without a configuration it asks about a few configurations of convolution_milo on an A100
// (the model must have been trained and calibrated on such data: see docs/calibration.md).
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <gpuforecast/core/device.hpp>
#include <gpuforecast/core/error.hpp>
#include <gpuforecast/forecast.hpp>

namespace {

// "block_size_x=16,tile_size_x=2" -> a Config; integers stay integers.
gpuforecast::Config parse_config(const std::string& text) {
  auto names = std::make_shared<std::vector<std::string>>();
  std::vector<gpuforecast::Value> values;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw gpuforecast::invalid_argument_error("expected name=value, got \"" + item + "\"");
    names->push_back(item.substr(0, eq));
    const std::string v = item.substr(eq + 1);
    try {
      std::size_t used = 0;
      const long long i = std::stoll(v, &used);
      if (used == v.size()) {
        values.emplace_back(static_cast<std::int64_t>(i));
      } else {
        values.emplace_back(std::stod(v));
      }
    } catch (const std::exception&) {
      values.emplace_back(v);
    }
    start = end + 1;
  }
  return gpuforecast::Config(std::move(names), std::move(values));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 5) {
    std::fprintf(stderr, "usage: %s MODEL.gfm [KERNEL DEVICE name=value,...]\n", argv[0]);
    return 2;
  }
  try {
    const gpuforecast::Model model = gpuforecast::load(argv[1]);
    std::printf("model: %s surrogate; %s\n", model.info().surrogate_kind.c_str(), model.info().calibration.c_str());

    std::vector<gpuforecast::Candidate> candidates;
    const std::string kernel = argc == 5 ? argv[2] : "convolution_milo";
    const auto device = gpuforecast::find_device(argc == 5 ? argv[3] : "A100");
    std::vector<std::string> configs;
    if (argc == 5) {
      configs.push_back(argv[4]);
    } else {
      const std::string rest = ",read_only=1,use_padding=1,use_shmem=1,use_cmem=1,filter_height=15,filter_width=15";
      configs = {"block_size_x=16,block_size_y=1,tile_size_x=1,tile_size_y=1" + rest,
                 "block_size_x=32,block_size_y=8,tile_size_x=2,tile_size_y=2" + rest,
                 "block_size_x=64,block_size_y=4,tile_size_x=4,tile_size_y=1" + rest};
    }
    for (const auto& c : configs) {
      gpuforecast::Candidate cand;
      cand.kernel = kernel;
      cand.device = device;
      cand.config = parse_config(c);
      candidates.push_back(cand);
    }

    // One call per candidate; forecast() is const and may be called from many threads.
    for (const auto& cand : candidates) {
      const gpuforecast::Decision d = gpuforecast::forecast(model, cand);
      std::printf("\n%s\n  forecast %.4f ms, %.0f%% interval [%.4f, %.4f] ms, p_fail %.2f\n  %s: %s\n",
                  cand.describe().c_str(), d.forecast.median_ms, 100 * (1 - model.info().alpha), d.interval_low_ms,
                  d.interval_high_ms, d.forecast.p_fail, d.defer ? "MEASURE" : "TRUST", d.reason.c_str());
    }
    // Against a reference runtime (e.g. the current best, measured): speedup-bin probabilities.
    const gpuforecast::Decision vs = gpuforecast::forecast(model, candidates.front(), 2.0);
    if (vs.forecast.bin_probabilities) {
      std::printf("\nspeedup over a 2.0 ms reference, P(bin 1..8):");
      for (double p : *vs.forecast.bin_probabilities) std::printf(" %.3f", p);
      std::printf("\n");
    }
  } catch (const gpuforecast::error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
