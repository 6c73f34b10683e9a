// What forecasting costs, per surrogate, side by side with XGBoost in one run:
//   - forecasts per second: the whole convolution_milo A100 space (4,362 candidates) through
//     gpuforecast::forecast() of the loaded model file, in batches;
//   - single-candidate latency (p50, p99) of forecast(), one candidate per call;
//   - the model file's size;
//   - load() plus a first forecast, and the peak resident memory, in a fresh child process that
//     links only gpuforecast::gpuforecast (forecast_first_call), and whether it mapped libtorch;
//   - training time on 10% of dedispersion_milo A100.
// Models are trained on 10% of convolution_milo A100. Issue 20's targets for the default are
// checked at the end (>= 200,000 forecasts/s and at least XGBoost's; p50 <= 0.1 ms, p99 <= 0.5 ms;
// file <= 10 MB; load + first forecast <= 100 ms and <= 100 MB; training <= 30 s).
//
//   forecast_speed [--data DIR] [--quick] [--surrogates default,xgboost] [--batch 4096] [--seconds 2]
//                  [--no-train] [--json FILE] [--keep-models DIR] [--module-path]
// --no-train skips the timed fit on dedispersion (for profiling the scoring loop).
// --module-path runs the transformer through torch::nn's own encoder and optimiser (the reference
// implementation its faster paths are checked against: the "before" of docs/transformer.md).
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/parse_number.hpp"
#include "common/shared_data_dir.hpp"
#include "common/split_list.hpp"
#include "common/write_text_file.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/forecast.hpp"
#include "surrogate/evaluation.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/openmp_environment.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;
using Clock = std::chrono::steady_clock;
using gpuforecast::detail::split_list;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Args {
  fs::path data;
  std::vector<std::string> surrogates{"default", "xgboost"};
  std::size_t batch = 4096;
  double seconds = 2.0;
  std::size_t singles = 1000;
  bool time_training = true;
  std::string json;
  fs::path keep;
};

// What one surrogate costs.
struct Row {
  std::string name, kind;
  double rate = 0, p50_ms = 0, p99_ms = 0, file_mb = 0, train_s = 0;
  nlohmann::json first_call;  // forecast_first_call's answer
};

// Runs the child and parses its JSON line; throws with its output when it fails.
nlohmann::json first_call(const fs::path& model, const fs::path& candidate) {
  const std::string command = fmt::format("'{}' '{}' '{}' 2>&1", GPUFORECAST_FIRST_CALL_PATH, model.string(), candidate.string());
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw error("forecast_speed: cannot start " + command);
  std::string out;
  std::array<char, 4096> buf{};
  while (const auto n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  if (status != 0) throw error(fmt::format("forecast_speed: {} failed (status {}): {}", command, status, out));
  try {
    return nlohmann::json::parse(out);
  } catch (const nlohmann::json::exception& e) {
    throw error(fmt::format("forecast_speed: {} printed no JSON ({}): {}", command, e.what(), out));
  }
}

Row measure(const std::string& name, const Args& a, const SpaceData& conv, const SpaceData& dedisp,
            const fs::path& dir, const fs::path& candidate_file) {
  Row row;
  row.name = name;
  if (a.time_training) {
    const auto train = interpolation_split(dedisp, 0.10, 0).train;
    auto timed = make_surrogate(name, 0);
    const auto t0 = Clock::now();
    timed.fit(train);
    row.train_s = since(t0);
  }
  const auto conv_train = interpolation_split(conv, 0.10, 0).train;
  auto surrogate = make_surrogate(name, 0);
  surrogate.fit(conv_train);
  row.kind = surrogate.kind();
  std::string file_name = name;
  std::replace_if(file_name.begin(), file_name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  const fs::path path = dir / (file_name + ".gfm");
  save_surrogate(path.string(), surrogate, TrainingSummary::of(conv_train));
  row.file_mb = static_cast<double>(fs::file_size(path)) / 1e6;
  row.first_call = first_call(path, candidate_file);

  // Application code's path: the model file, loaded, through forecast().
  const Model model = load(path.string());
  std::vector<Candidate> space;
  for (const auto& o : conv.observations) space.push_back(o.candidate);
  const auto span = std::span<const Candidate>(space);
  (void)forecast(model, span.first(std::min(a.batch, space.size())));  // warm-up
  std::size_t scored = 0;
  const auto t0 = Clock::now();
  do {
    for (std::size_t b = 0; b < space.size(); b += a.batch) scored += forecast(model, span.subspan(b, std::min(a.batch, space.size() - b))).size();
  } while (since(t0) < a.seconds);
  row.rate = static_cast<double>(scored) / since(t0);

  std::vector<double> latency;
  for (std::size_t i = 0; i < a.singles; ++i) {
    const Candidate& c = space[(i * 7919) % space.size()];
    const auto t1 = Clock::now();
    (void)forecast(model, c);
    latency.push_back(since(t1) * 1e3);
  }
  std::sort(latency.begin(), latency.end());
  row.p50_ms = latency[latency.size() / 2];
  row.p99_ms = latency[std::min(latency.size() - 1, static_cast<std::size_t>(0.99 * static_cast<double>(latency.size())))];
  return row;
}

nlohmann::json to_json(const Row& r) {
  return {{"surrogate", r.name},       {"kind", r.kind},         {"forecasts_per_s", r.rate},
          {"single_p50_ms", r.p50_ms}, {"single_p99_ms", r.p99_ms}, {"model_mb", r.file_mb},
          {"train_10pct_dedispersion_a100_s", r.train_s}, {"first_call", r.first_call}};
}

// The targets of issue 20 for the default, against XGBoost measured in the same run.
std::vector<std::pair<std::string, bool>> verdict(const Row& d, const Row* xgboost, bool timed) {
  const double peak = d.first_call.at("peak_rss_mib").get<double>() * 1.048576;  // MiB -> MB
  std::vector<std::pair<std::string, bool>> v{
      {fmt::format("forecasts/s {:.0f} >= 200,000", d.rate), d.rate >= 200000},
      {fmt::format("single p50 {:.4f} ms <= 0.1 ms", d.p50_ms), d.p50_ms <= 0.1},
      {fmt::format("single p99 {:.4f} ms <= 0.5 ms", d.p99_ms), d.p99_ms <= 0.5},
      {fmt::format("model file {:.2f} MB <= 10 MB", d.file_mb), d.file_mb <= 10},
      {fmt::format("load + first forecast {:.1f} ms <= 100 ms", d.first_call.at("load_and_first_ms").get<double>()),
       d.first_call.at("load_and_first_ms").get<double>() <= 100},
      {fmt::format("peak resident memory {:.1f} MB <= 100 MB", peak), peak <= 100},
      {"no libtorch mapped", !d.first_call.at("maps_libtorch").get<bool>()},
  };
  if (xgboost) v.emplace_back(fmt::format("forecasts/s {:.0f} >= XGBoost's {:.0f}", d.rate, xgboost->rate), d.rate >= xgboost->rate);
  if (timed) v.emplace_back(fmt::format("training {:.2f} s <= 30 s", d.train_s), d.train_s <= 30);
  return v;
}

}  // namespace

int main(int argc, char** argv) try {
  detail::ensure_passive_openmp_wait();
  Args a;
  a.data = bench::shared_data_dir();
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw invalid_argument_error(k + " needs a value");
      return argv[++i];
    };
    if (k == "--data") a.data = value();
    else if (k == "--surrogates") a.surrogates = split_list(value());
    else if (k == "--batch") a.batch = std::max<std::size_t>(1, detail::parse_number<std::size_t>(k, value()));
    else if (k == "--seconds") a.seconds = detail::parse_number<double>(k, value());
    else if (k == "--no-train") a.time_training = false;
    else if (k == "--json") a.json = value();
    else if (k == "--keep-models") a.keep = value();
    else if (k == "--module-path") setenv("GPUFORECAST_TRANSFORMER_MODULE_PATH", "1", 1);
    else if (k == "--quick") {
      a.seconds = 0.5;
      a.singles = 200;
    } else if (k == "--help" || k == "-h") {
      fmt::print("usage: forecast_speed [--data DIR] [--quick] [--surrogates default,xgboost] [--batch N] [--seconds S] "
                 "[--no-train] [--json FILE] [--keep-models DIR] [--module-path]\n");
      return 0;
    } else throw invalid_argument_error("unknown option " + k);
  }
  const auto hub = a.data / "benchmark_hub" / "cachefiles";
  const auto conv_path = hub / "convolution_milo" / "A100.json.gz";
  const SpaceData conv = load_space(conv_path.string());
  const SpaceData dedisp = load_space((hub / "dedispersion_milo" / "A100.json.gz").string());

  // Models and the one-candidate cache the child forecasts live in a scratch folder (or --keep-models).
  const fs::path dir = a.keep.empty() ? fs::temp_directory_path() / fmt::format("forecast_speed_{}", ::getpid()) : a.keep;
  fs::create_directories(dir / "convolution_milo");
  CacheFile one = read_kernel_tuner_cache(conv_path.string());
  one.entries.resize(1);
  const fs::path candidate_file = dir / "convolution_milo" / "A100.json";
  write_kernel_tuner_cache(one, candidate_file.string());

  fmt::print("forecast_speed: forecast() of models trained on 10% of convolution_milo A100, scoring its {} candidates "
             "in batches of {}; default = {}; {} threads\n",
             conv.observations.size(), a.batch, default_surrogate_name(), std::thread::hardware_concurrency());
  fmt::print("{:<10} {:>12} {:>11} {:>11} {:>9} {:>13} {:>10} {:>9} {:>10}\n", "surrogate", "forecasts/s", "single p50",
             "single p99", "file MB", "load+first ms", "peak MB", "libtorch", "train s");
  std::vector<Row> rows;
  for (const auto& name : a.surrogates) {
    rows.push_back(measure(name, a, conv, dedisp, dir, candidate_file));
    const Row& r = rows.back();
    fmt::print("{:<10} {:>12.0f} {:>8.4f} ms {:>8.4f} ms {:>9.2f} {:>13.1f} {:>10.1f} {:>9} {:>10.2f}\n", r.name, r.rate,
               r.p50_ms, r.p99_ms, r.file_mb, r.first_call.at("load_and_first_ms").get<double>(),
               r.first_call.at("peak_rss_mib").get<double>() * 1.048576,
               r.first_call.at("maps_libtorch").get<bool>() ? "mapped" : "no", r.train_s);
    std::fflush(stdout);
  }
  if (a.keep.empty()) fs::remove_all(dir);

  nlohmann::json out;
  out["surrogates"] = nlohmann::json::array();
  for (const auto& r : rows) out["surrogates"].push_back(to_json(r));
  const auto find = [&](const std::string& n) -> const Row* {
    for (const auto& r : rows)
      if (r.name == n) return &r;
    return nullptr;
  };
  if (const Row* d = find("default")) {
    fmt::print("\nthe default ({}) against issue 20's targets:\n", d->kind);
    bool all = true;
    for (const auto& [what, ok] : verdict(*d, find("xgboost"), a.time_training)) {
      fmt::print("  {:<4} {}\n", ok ? "yes" : "NO", what);
      out["targets"][what] = ok;
      all = all && ok;
    }
    out["all_targets_met"] = all;
  }
  if (!a.json.empty()) detail::write_text_file(a.json, out.dump(2) + "\n");
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "forecast_speed: error: {}\n", e.what());
  return 1;
}
