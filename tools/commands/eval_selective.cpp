// gpuforecast eval --selective: calibrates a trained model on part of held-out measurements
// and scores the calibrated selective predictor on the rest: interval coverage and width, the
// deferral rule's acceptance and measured risk, AURC, and the calibration of the speedup-bin
// probabilities (ECE, Brier, CRPS, NLL). Writes a reliability diagram and a risk-coverage curve
// as SVG when asked.
#include "commands/eval_selective.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

#include "gpuforecast/calibration/model_bundle.hpp"
#include "gpuforecast/calibration/plots.hpp"
#include "gpuforecast/calibration/selective_calibrator.hpp"
#include "gpuforecast/calibration/selective_evaluation.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/model_file.hpp"

namespace gpuforecast::cli {

void run_selective_eval(const SelectiveEvalArgs& a) {
  ModelFile file = read_model_file(a.model);
  const AnySurrogate surrogate = surrogate_from(file, a.model);
  const auto stored = calibration_from(file, a.model);
  const Dataset data = Dataset::load(a.data);
  const auto [cands, times] = successful_runs(data.observations(true));
  if (cands.empty()) throw invalid_argument_error("eval --selective: no successful measurements in the data files");
  const std::vector<Forecast> forecasts = surrogate.predict(cands);

  const bool use_stored = a.calibration_fraction <= 0;
  if (use_stored && !stored)
    throw invalid_argument_error(fmt::format(
        "{} has no calibration section: give --calibration-fraction F > 0 to calibrate on part of the data", a.model));
  if (!(a.calibration_fraction < 1))
    throw invalid_argument_error(fmt::format("--calibration-fraction must be below 1, got {}", a.calibration_fraction));

  nlohmann::json runs = nlohmann::json::array();
  SelectiveEvaluation last;
  if (!a.json)
    fmt::print("| seed | calibration | test | coverage {:.0f}% | mean width ms | accepted | risk accepted | risk all | "
               "AURC | ECE | Brier | CRPS | NLL |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
               100 * (1 - (use_stored ? stored->options().alpha : a.alpha)));
  for (std::size_t s = 0; s < std::max<std::size_t>(1, a.seeds); ++s) {
    const std::uint64_t seed = a.seed + s;
    std::vector<std::size_t> idx(cands.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(idx.begin(), idx.end(), rng);
    const std::size_t n_cal =
        use_stored ? 0 : static_cast<std::size_t>(std::round(a.calibration_fraction * static_cast<double>(idx.size())));
    if (!use_stored && (n_cal == 0 || n_cal >= idx.size()))
      throw invalid_argument_error(fmt::format("--calibration-fraction {} of {} points leaves no calibration or no test set",
                                               a.calibration_fraction, idx.size()));
    auto part = [&](std::size_t from, std::size_t to, const auto& v) {
      std::vector<std::decay_t<decltype(v[0])>> out;
      for (std::size_t i = from; i < to; ++i) out.push_back(v[idx[i]]);
      return out;
    };
    SelectiveCalibrator cal;
    if (use_stored) {
      cal = *stored;
    } else {
      CalibrationOptions o;
      o.alpha = a.alpha;
      o.risk_alpha = a.alpha;
      o.delta = a.delta;
      o.seed = seed;
      cal = SelectiveCalibrator::fit(part(0, n_cal, cands), part(0, n_cal, forecasts), part(0, n_cal, times), o);
    }
    const auto tc = part(n_cal, idx.size(), cands);
    const auto e = evaluate_selective(cal, tc, part(n_cal, idx.size(), forecasts), part(n_cal, idx.size(), times), seed);
    last = e;
    if (a.json) {
      runs.push_back({{"seed", seed},
                      {"calibration", n_cal},
                      {"test", e.test_size},
                      {"coverage", e.coverage},
                      {"mean_width_ms", e.mean_width_ms},
                      {"mean_log_width", e.mean_log_width},
                      {"accepted_fraction", e.accepted_fraction},
                      {"risk_accepted", e.risk_accepted},
                      {"risk_all", e.risk_all},
                      {"aurc", e.aurc},
                      {"ece", e.ece},
                      {"brier", e.brier},
                      {"crps", e.crps},
                      {"nll", e.nll},
                      {"threshold", cal.deferral().any_valid ? nlohmann::json(cal.deferral().threshold) : nlohmann::json()},
                      {"calibration_description", cal.describe()}});
    } else {
      fmt::print("| {} | {} | {} | {:.4f} | {:.5g} | {:.1f}% | {:.4f} | {:.4f} | {:.4f} | {:.4f} | {:.4f} | {:.4f} | {:.4f} |\n",
                 seed, n_cal, e.test_size, e.coverage, e.mean_width_ms, 100 * e.accepted_fraction, e.risk_accepted,
                 e.risk_all, e.aurc, e.ece, e.brier, e.crps, e.nll);
    }
    if (!a.plots.empty() && s == 0) {
      std::filesystem::create_directories(a.plots);
      const auto rel = (std::filesystem::path(a.plots) / "reliability.svg").string();
      const auto rc = (std::filesystem::path(a.plots) / "risk_coverage.svg").string();
      reliability_diagram(e.reliability, e.ece, "Speedup-bin reliability").save(rel);
      risk_coverage_plot(e.risk_coverage, cal.deferral().alpha, e.accepted_fraction, e.risk_accepted, e.aurc,
                         "Risk-coverage of the deferral score")
          .save(rc);
      if (!a.json) fmt::print("wrote {} and {}\n", rel, rc);
    }
  }
  if (a.json) fmt::print("{}\n", nlohmann::json{{"model", a.model}, {"runs", runs}}.dump(2));
}

}  // namespace gpuforecast::cli
