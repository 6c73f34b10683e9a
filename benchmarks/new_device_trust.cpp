// Trust on a new GPU after K measurements (adapt_to_device), leave one GPU out: for each kernel
// and each of its devices, the default forecaster is trained on the kernel's other devices, K
// random measurements of the held-out one adapt and certify a calibration (a share adapts the
// forecast correction, the rest certifies), and every other configuration of that device is
// decided with it. Per split, K and loss: the share of the remaining configurations answered
// without measuring, the realised risk among them (pooled over seeds, and the runs whose own
// risk exceeded alpha against the allowance delta * runs plus two binomial standard
// deviations), and the same without the correction (the K points calibrate the raw forecasts),
// which is what the correction buys.
//
// Losses: relative_error (|t_hat - t| / t > 10%, confidence = interval width) and wrong_bin (the
// half-octave speedup bin against the fastest adapt point, the incumbent a search has after
// measuring it; confidence = top-bin probability).
//
//   new_device_trust [--data DIR] [--kernels convolution_milo,dedispersion_milo] [--devices d1,d2]
//                    [--k 20,50] [--seeds 20] [--surrogate default] [--adapt-fraction 0.3]
//                    [--alpha 0.1] [--delta 0.1] [--json]
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/benchmark_arguments.hpp"
#include "common/shared_data_dir.hpp"
#include "gpuforecast/calibration/device_adaptation.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;

namespace {

struct Args {
  fs::path data = bench::shared_data_dir();
  std::vector<std::string> kernels = {"convolution_milo", "dedispersion_milo"};
  std::vector<std::string> devices;  // held-out devices; empty: every device of the kernel
  std::vector<std::size_t> ks = {20, 50};
  std::vector<std::string> losses = {"relative_error", "wrong_bin"};
  std::size_t seeds = 20;
  std::string surrogate = "default";
  double adapt_fraction = 0.3, alpha = 0.1, delta = 0.1;
  bool same_vendor = true;  // AMD and NVIDIA rank these kernels differently (datasets README)
  bool json = false;
};

Args parse(int argc, char** argv) {
  Args a;
  bench::BenchmarkArguments args(
      "usage: new_device_trust [--data DIR] [--kernels k1,k2] [--devices d1,d2] [--k 20,50] [--seeds 20]\n"
      "                        [--losses relative_error,wrong_bin] [--surrogate default] [--adapt-fraction 0.3]\n"
      "                        [--alpha 0.1] [--delta 0.1] [--json]\n");
  args.text("--data", a.data)
      .list("--kernels", a.kernels)
      .list("--devices", a.devices)
      .number_list("--k", a.ks)
      .list("--losses", a.losses)
      .number("--seeds", a.seeds)
      .text("--surrogate", a.surrogate)
      .number("--adapt-fraction", a.adapt_fraction)
      .number("--alpha", a.alpha)
      .number("--delta", a.delta)
      .flag("--all-vendors", [&] { a.same_vendor = false; })
      .flag("--json", [&] { a.json = true; });
  if (!args.parse(argc, argv)) std::exit(0);
  if (a.seeds == 0) throw invalid_argument_error("--seeds must be at least 1");
  for (const auto& l : a.losses) (void)parse_deferral_loss(l);
  return a;
}

// One held-out device: its successful runs and the forecasts of a model that never saw it.
struct HeldOut {
  std::string kernel, device;
  std::vector<Candidate> candidates;
  std::vector<double> times;
  std::vector<Forecast> forecasts;
  std::size_t training_points = 0, training_devices = 0;
};

std::vector<fs::path> space_files(const Args& a, const std::string& kernel) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(a.data / "benchmark_hub" / "cachefiles" / kernel)) {
    const std::string name = e.path().filename().string();
    // A100_T4 holds A100's measurements again, in the T4 format.
    if (name.ends_with(".json.gz") && name.find("_T4") == std::string::npos) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw invalid_argument_error(fmt::format("no cache files of {} under {}", kernel, a.data.string()));
  return files;
}

std::string device_of(const fs::path& p) {
  std::string s = p.filename().string();
  return s.substr(0, s.size() - std::string(".json.gz").size());
}

HeldOut forecast_held_out(const Args& a, const std::string& kernel, const fs::path& target,
                          const std::vector<fs::path>& files) {
  const std::vector<std::string> one{target.string()};
  const Dataset held_out = Dataset::load(one);
  const std::string vendor = held_out.spaces().front().device->vendor;
  std::vector<Observation> train;
  std::size_t devices = 0;
  for (const auto& f : files)
    if (f != target) {
      const std::vector<std::string> other{f.string()};
      const Dataset d = Dataset::load(other);
      if (a.same_vendor && d.spaces().front().device->vendor != vendor) continue;
      const auto obs = d.observations(true);
      train.insert(train.end(), obs.begin(), obs.end());
      ++devices;
    }
  if (train.empty())
    throw invalid_argument_error(fmt::format("{} / {}: no other device of vendor {} to train on", kernel,
                                             device_of(target), vendor));
  AnySurrogate s = make_surrogate(a.surrogate, 1);
  s.fit(train);
  auto [c, t] = successful_runs(held_out.observations(true));
  HeldOut h{kernel, device_of(target), std::move(c), std::move(t), {}, train.size(), devices};
  h.forecasts = s.predict(h.candidates);
  return h;
}

struct Cell {  // one (split, K, loss, adapted or not) over seeds
  std::size_t runs = 0, certified = 0, over_alpha = 0;
  double answered_share_sum = 0, answered_share_sq = 0;
  std::size_t answered = 0, losses = 0;  // pooled
  [[nodiscard]] double share() const { return runs ? answered_share_sum / static_cast<double>(runs) : 0; }
  [[nodiscard]] double share_se() const {
    if (runs < 2) return 0;
    const double m = share(), n = static_cast<double>(runs);
    return std::sqrt(std::max(0.0, (answered_share_sq / n - m * m) * n / (n - 1)) / n);
  }
  [[nodiscard]] double risk() const { return answered ? static_cast<double>(losses) / static_cast<double>(answered) : 0; }
};

CalibrationOptions certify_options(const Args& a, DeferralLoss loss, std::uint64_t seed) {
  CalibrationOptions o;
  o.alpha = a.alpha;
  o.risk_alpha = a.alpha;
  o.delta = a.delta;
  o.loss = loss;
  o.confidence = loss == DeferralLoss::wrong_bin ? ConfidenceScore::top_bin_probability : ConfidenceScore::interval_width;
  o.seed = seed;
  return o;
}

// One seed: K random points adapt (or, unadapted, calibrate the raw forecasts); the device's
// other points are decided and judged.
void run_seed(const Args& a, const HeldOut& h, std::size_t k, DeferralLoss loss, std::uint64_t seed, bool adapt,
              Cell& cell) {
  std::vector<std::size_t> order(h.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 7919 + k);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<Candidate> kc;
  std::vector<Forecast> kf;
  std::vector<double> kt;
  for (std::size_t i = 0; i < k; ++i) {
    kc.push_back(h.candidates[order[i]]);
    kf.push_back(h.forecasts[order[i]]);
    kt.push_back(h.times[order[i]]);
  }
  SelectiveCalibrator cal;
  CalibrationOptions o = certify_options(a, loss, seed);
  if (adapt) {
    DeviceAdaptationOptions d;
    d.adapt_fraction = a.adapt_fraction;
    d.calibration = o;
    cal = adapt_to_device(h.candidates[0].device->name, kc, kf, kt, d);
  } else {
    // The same K points calibrate raw forecasts; the wrong-bin reference is the fastest of them.
    o.reference_ms = *std::min_element(kt.begin(), kt.end());
    cal = SelectiveCalibrator::fit(kc, kf, kt, o);
  }
  std::size_t answered = 0, losses = 0;
  const CalibrationOptions& used = cal.options();
  for (std::size_t j = k; j < order.size(); ++j) {
    const std::size_t i = order[j];
    const Decision d = cal.decide(h.candidates[i], h.forecasts[i]);
    if (d.defer) continue;
    ++answered;
    losses += deferral_loss(used, d.forecast, h.times[i], used.reference_ms > 0 ? std::optional(used.reference_ms)
                                                                                : std::nullopt) > 0.5;
  }
  const double share = static_cast<double>(answered) / static_cast<double>(order.size() - k);
  ++cell.runs;
  cell.certified += cal.deferral().any_valid;
  cell.answered_share_sum += share;
  cell.answered_share_sq += share * share;
  cell.answered += answered;
  cell.losses += losses;
  if (answered && static_cast<double>(losses) > a.alpha * static_cast<double>(answered)) ++cell.over_alpha;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  nlohmann::json rows = nlohmann::json::array();
  const double allowed_mean = a.delta * static_cast<double>(a.seeds);
  const double allowed = allowed_mean + 2 * std::sqrt(allowed_mean * (1 - a.delta));
  if (!a.json)
    fmt::print("New GPU after K random measurements, leave one GPU out; {} seeds; alpha = delta = {}; adapt share {}\n"
               "answered = share of the device's other configurations answered without measuring (+- se);\n"
               "risk = pooled realised risk among them; >alpha = runs whose own risk exceeded alpha (allowed {:.1f})\n\n",
               a.seeds, a.alpha, a.adapt_fraction, allowed);
  for (const auto& kernel : a.kernels) {
    const auto files = space_files(a, kernel);
    for (const auto& target : files) {
      const std::string device = device_of(target);
      if (!a.devices.empty() && std::find(a.devices.begin(), a.devices.end(), device) == a.devices.end()) continue;
      const auto t0 = std::chrono::steady_clock::now();
      const HeldOut h = forecast_held_out(a, kernel, target, files);
      const double fit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!a.json)
        fmt::print("{} / {} held out: trained on {} points of {} other device(s) in {:.0f} s, {} configurations\n",
                   kernel, device, h.training_points, h.training_devices, fit_s, h.candidates.size());
      for (const auto& loss_name : a.losses) {
        const DeferralLoss loss = parse_deferral_loss(loss_name);
        for (const std::size_t k : a.ks) {
          Cell adapted, raw;
          for (std::size_t s = 1; s <= a.seeds; ++s) {
            run_seed(a, h, k, loss, s, true, adapted);
            run_seed(a, h, k, loss, s, false, raw);
          }
          if (!a.json)
            fmt::print("  {:<15} K={:<3} adapted: answered {:5.1f}% +- {:4.1f}, risk {:.3f}, >alpha {:2}/{}, certified "
                       "{:2}/{}   raw: answered {:5.1f}%, risk {:.3f}, >alpha {:2}\n",
                       loss_name, k, 100 * adapted.share(), 100 * adapted.share_se(), adapted.risk(), adapted.over_alpha,
                       adapted.runs, adapted.certified, adapted.runs, 100 * raw.share(), raw.risk(), raw.over_alpha);
          auto cell_json = [](const Cell& c) {
            return nlohmann::json{{"runs", c.runs},         {"certified", c.certified}, {"answered_share", c.share()},
                                  {"answered_share_se", c.share_se()}, {"answered", c.answered},
                                  {"losses", c.losses},     {"risk", c.risk()},         {"runs_over_alpha", c.over_alpha}};
          };
          rows.push_back({{"kernel", kernel},
                          {"device", device},
                          {"loss", loss_name},
                          {"k", k},
                          {"adapted", cell_json(adapted)},
                          {"raw", cell_json(raw)}});
        }
      }
    }
  }
  if (a.json)
    fmt::print("{}\n", nlohmann::json{{"alpha", a.alpha},
                                      {"delta", a.delta},
                                      {"seeds", a.seeds},
                                      {"adapt_fraction", a.adapt_fraction},
                                      {"allowed_runs_over_alpha", allowed},
                                      {"rows", rows}}
                           .dump(1));
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "new_device_trust: {}\n", e.what());
  return 1;
}
