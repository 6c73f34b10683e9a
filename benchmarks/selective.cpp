// Calibrated selective forecasting on the NVIDIA spaces of convolution_milo and
// dedispersion_milo (issue 5 acceptance), with the default forecaster (make_surrogate("default")).
//
// Protocol, per space and seed: the valid configurations are shuffled (seeded); the surrogate is
// trained on the first 10%, calibrated on the next 10% (the calibration budget: conformal
// intervals at alpha = 0.1 and the Learn-then-Test deferral rule at alpha = 0.1, delta = 0.1,
// loss = relative error > 10%, confidence = calibrated interval width), and evaluated on the
// remaining 80%. Columns: coverage of the 90% interval (split conformal on normalised residuals;
// CQR beside it), its mean width in ms and as a factor exp(mean log(high/low)), the fraction
// accepted by the deferral rule and the measured risk among accepted (and among all), averaged
// over seeds; "viol" counts seeds where the measured risk among accepted exceeded alpha.
//
//   selective [--seeds N] [--surrogate NAME] [--train F] [--calibrate F] [--plots DIR]
//
// --plots DIR writes, per space, the reliability diagram of the speedup-bin probabilities and the
// risk-coverage curve of the first seed as SVG.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/parse_number.hpp"
#include "report/calibration_plots.hpp"
#include "calibration/selective_calibrator.hpp"
#include "calibration/selective_evaluation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("GPUFORECAST_DATA"); env && *env) return env;
  return std::filesystem::path(GPUFORECAST_SOURCE_DIR) / ".." / "shared" / "datasets";
}

struct Row {
  double cov = 0, cov_cqr = 0, width = 0, factor = 0, accepted = 0, risk = 0, risk_all = 0, fit_s = 0;
  int violations = 0, certified = 0;
  std::size_t train = 0, cal = 0, test = 0;
};

}  // namespace

int main(int argc, char** argv) try {
  using namespace gpuforecast;
  int seeds = 3;
  std::string surrogate = "default";
  double train_fraction = 0.1, cal_fraction = 0.1;
  std::string plots;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seeds")) detail::parse_number_into(seeds, argv[i], argv[i + 1]);
    else if (!std::strcmp(argv[i], "--surrogate")) surrogate = argv[i + 1];
    else if (!std::strcmp(argv[i], "--train")) detail::parse_number_into(train_fraction, argv[i], argv[i + 1]);
    else if (!std::strcmp(argv[i], "--calibrate")) detail::parse_number_into(cal_fraction, argv[i], argv[i + 1]);
    else if (!std::strcmp(argv[i], "--plots")) plots = argv[i + 1];
    else {
      fmt::print(stderr, "usage: selective [--seeds N] [--surrogate NAME] [--train F] [--calibrate F] [--plots DIR]\n");
      return 2;
    }
  }
  const std::string name = surrogate == "default" ? default_surrogate_name() : surrogate;
  fmt::print("selective forecasting, surrogate {} ({}), train {:.0f}% / calibrate {:.0f}% / evaluate the rest, "
             "{} seeds\nintervals alpha 0.1 (split conformal); deferral: Learn-then-Test, risk alpha 0.1, delta 0.1, "
             "loss |t_hat - t|/t > 10%\n\n",
             surrogate, name, 100 * train_fraction, 100 * cal_fraction, seeds);
  fmt::print("| {:<26} | {:>5} | {:>5} | {:>5} | {:>6} | {:>6} | {:>9} | {:>6} | {:>8} | {:>8} | {:>8} | {:>4} | {:>6} |\n",
             "space", "train", "cal", "test", "cov90", "cqr90", "width ms", "factor", "accepted", "risk acc",
             "risk all", "viol", "fit s");
  fmt::print("|{:-<28}|{:-<7}|{:-<7}|{:-<7}|{:-<8}|{:-<8}|{:-<11}|{:-<8}|{:-<10}|{:-<10}|{:-<10}|{:-<6}|{:-<8}|\n", "", "",
             "", "", "", "", "", "", "", "", "", "", "");
  Row total;
  int spaces = 0;
  for (const std::string kernel : {"convolution_milo", "dedispersion_milo"})
    for (const std::string device : {"A100", "A4000", "A6000"}) {
      const auto path = data_dir() / "benchmark_hub" / "cachefiles" / kernel / (device + ".json.gz");
      const SpaceData space = load_space(path.string());
      std::vector<Observation> ok;
      for (const auto& o : space.observations)
        if (o.measurement.ok() && o.measurement.median_ms > 0) ok.push_back(o);
      Row r;
      for (int s = 0; s < seeds; ++s) {
        std::vector<Observation> obs = ok;
        std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(s));
        std::shuffle(obs.begin(), obs.end(), rng);
        const auto n_train = static_cast<std::size_t>(train_fraction * static_cast<double>(obs.size()));
        const auto n_cal = static_cast<std::size_t>(cal_fraction * static_cast<double>(obs.size()));
        auto model = make_surrogate(surrogate, static_cast<std::uint64_t>(s));
        const auto t0 = std::chrono::steady_clock::now();
        model.fit(std::span<const Observation>(obs.data(), n_train));
        r.fit_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<Candidate> cc, tc;
        std::vector<double> ct, tt;
        for (std::size_t i = n_train; i < obs.size(); ++i) {
          (i < n_train + n_cal ? cc : tc).push_back(obs[i].candidate);
          (i < n_train + n_cal ? ct : tt).push_back(obs[i].measurement.median_ms);
        }
        const auto cf = model.predict(cc);
        const auto tf = model.predict(tc);
        CalibrationOptions o;
        o.seed = static_cast<std::uint64_t>(s);
        const auto cal = SelectiveCalibrator::fit(cc, cf, ct, o);
        const auto e = evaluate_selective(cal, tc, tf, tt, static_cast<std::uint64_t>(s));
        if (!plots.empty() && s == 0) {
          std::filesystem::create_directories(plots);
          const std::string stem = (std::filesystem::path(plots) / (kernel + "_" + device)).string();
          reliability_diagram(e.reliability, e.ece, fmt::format("Speedup bins, {} {}", kernel, device))
              .save(stem + "_reliability.svg");
          risk_coverage_plot(e.risk_coverage, 0.1, e.accepted_fraction, e.risk_accepted, e.aurc,
                             fmt::format("Risk-coverage, {} {}", kernel, device))
              .save(stem + "_risk_coverage.svg");
        }
        o.score = ConformalScore::cqr;
        const auto e_cqr = evaluate_selective(SelectiveCalibrator::fit(cc, cf, ct, o), tc, tf, tt, 0);
        r.cov += e.coverage;
        r.cov_cqr += e_cqr.coverage;
        r.width += e.mean_width_ms;
        r.factor += std::exp(e.mean_log_width);
        r.accepted += e.accepted_fraction;
        r.risk += e.risk_accepted;
        r.risk_all += e.risk_all;
        r.violations += (e.accepted > 0 && e.risk_accepted > 0.1) ? 1 : 0;
        r.certified += cal.deferral().any_valid ? 1 : 0;
        r.train = n_train;
        r.cal = n_cal;
        r.test = tc.size();
      }
      const double k = seeds;
      fmt::print("| {:<26} | {:>5} | {:>5} | {:>5} | {:>6.3f} | {:>6.3f} | {:>9.4f} | {:>6.3f} | {:>7.1f}% | {:>8.3f} | "
                 "{:>8.3f} | {:>4} | {:>6.1f} |\n",
                 kernel + "@" + device, r.train, r.cal, r.test, r.cov / k, r.cov_cqr / k, r.width / k, r.factor / k,
                 100 * r.accepted / k, r.risk / k, r.risk_all / k, r.violations, r.fit_s / k);
      std::fflush(stdout);
      total.cov += r.cov / k;
      total.cov_cqr += r.cov_cqr / k;
      total.factor += r.factor / k;
      total.accepted += r.accepted / k;
      total.risk += r.risk / k;
      total.risk_all += r.risk_all / k;
      total.violations += r.violations;
      ++spaces;
    }
  const double n = spaces;
  fmt::print("| {:<26} | {:>5} | {:>5} | {:>5} | {:>6.3f} | {:>6.3f} | {:>9} | {:>6.3f} | {:>7.1f}% | {:>8.3f} | {:>8.3f} | "
             "{:>4} | {:>6} |\n",
             "mean", "", "", "", total.cov / n, total.cov_cqr / n, "", total.factor / n, 100 * total.accepted / n,
             total.risk / n, total.risk_all / n, total.violations, "");
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "selective: error: {}\n", e.what());
  return 1;
}
