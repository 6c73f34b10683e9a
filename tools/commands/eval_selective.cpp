// gpuforecast eval --selective: calibrates a trained model on part of held-out measurements
// and scores the calibrated selective predictor on the rest: interval coverage and width, the
// deferral rule's acceptance and measured risk, AURC, and the calibration of the speedup-bin
// probabilities (ECE, Brier, CRPS, NLL). Writes a reliability diagram and a risk-coverage curve
// as SVG when asked.
#include "commands/eval_selective.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <filesystem>
#include <numeric>
#include <random>

#include "calibration/model_bundle.hpp"
#include "report/calibration_plots.hpp"
#include "calibration/selective_calibrator.hpp"
#include "calibration/selective_evaluation.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "search/event_log.hpp"
#include "gpuforecast/surrogate/model_file.hpp"

namespace gpuforecast::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json number(double x) { return std::isfinite(x) ? ordered_json(x) : ordered_json(nullptr); }

// The event log of an evaluation, in the search's schema (docs/events.md, version 1): each
// line written whole and flushed, so an interrupted evaluation keeps what it decided.
class EvalEventLog {
 public:
  explicit EvalEventLog(const std::string& path) : m_path(path) {
    if (path.empty()) return;
    m_file = std::fopen(path.c_str(), "wb");
    if (!m_file) throw error(fmt::format("{}: cannot open the event log for writing: {}", path, std::strerror(errno)));
  }
  EvalEventLog(const EvalEventLog&) = delete;
  EvalEventLog& operator=(const EvalEventLog&) = delete;
  ~EvalEventLog() {
    if (m_file) std::fclose(m_file);
  }
  [[nodiscard]] bool active() const noexcept { return m_file != nullptr; }

  void write(const std::string& run, const char* event, ordered_json fields) {
    if (!m_file) return;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    ordered_json line{{"v", event_log_version}, {"seq", m_seq++}, {"t", t}, {"run", run}, {"event", event}};
    line.update(fields);
    const std::string text = line.dump() + "\n";
    if (std::fwrite(text.data(), 1, text.size(), m_file) != text.size() || std::fflush(m_file) != 0)
      throw error(fmt::format("{}: writing the event log failed: {}", m_path, std::strerror(errno)));
  }

 private:
  std::string m_path;
  std::FILE* m_file = nullptr;
  std::uint64_t m_seq = 0;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

// With several seeds, one log each, as `search` names its per-seed files: run.jsonl -> run.seed3.jsonl.
std::string path_for_seed(const std::string& base, std::uint64_t seed) {
  const auto dot = base.find(".json");
  if (dot == std::string::npos) return fmt::format("{}.seed{}", base, seed);
  return fmt::format("{}.seed{}{}", base.substr(0, dot), seed, base.substr(dot));
}

ordered_json config_json(const Config& c) {
  ordered_json j = ordered_json::object();
  for (std::size_t i = 0; i < c.size(); ++i) {
    const Value& v = c[i];
    if (v.is_int()) j[c.names()[i]] = v.as_int();
    else if (v.is_float()) j[c.names()[i]] = v.as_double();
    else j[c.names()[i]] = v.as_string();
  }
  return j;
}

// One seed's test points: a begin line, a decision line each (the decision, its measured time,
// relative error, interval hit and loss under the calibration's options), an end line.
void log_decisions(EvalEventLog& log, std::uint64_t seed, const SelectiveCalibrator& cal, std::span<const Candidate> test,
                   std::span<const Forecast> forecasts, std::span<const double> measured_ms) {
  if (!log.active() || test.empty()) return;
  const std::string run = fmt::format("eval seed {}", seed);
  const Candidate& first = test.front();
  ordered_json parameters = ordered_json::array();
  for (const auto& n : first.config.names()) parameters.push_back(n);
  log.write(run, "begin",
            {{"kernel", first.kernel},
             {"device", first.device ? first.device->name : std::string()},
             {"problem_size", first.problem_size},
             {"parameters", parameters},
             {"budget", {{"measurements", test.size()}, {"seconds", 0.0}}}});
  const auto& o = cal.options();
  // The wrong-bin loss needs a reference: the calibration's own, or the fastest test point.
  const double reference = o.reference_ms > 0 ? o.reference_ms : *std::min_element(measured_ms.begin(), measured_ms.end());
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < test.size(); ++i) {
    const Decision d = cal.decide(test[i], forecasts[i]);
    const double t = measured_ms[i];
    best = std::min(best, t);
    log.write(run, "decision",
              {{"config", config_json(test[i].config)},
               {"forecast_ms", number(d.forecast.median_ms)},
               {"interval_ms", {number(d.interval_low_ms), number(d.interval_high_ms)}},
               {"confidence", number(d.confidence)},
               {"answered", !d.defer},
               {"p_fail", number(d.forecast.p_fail)},
               {"time_ms", number(t)},
               {"relative_error", number(std::abs(d.forecast.median_ms - t) / t)},
               {"inside_interval", t >= d.interval_low_ms && t <= d.interval_high_ms},
               {"loss", deferral_loss(o, d.forecast, t, reference) > 0.5},
               {"reason", d.reason}});
  }
  log.write(run, "end", {{"measurements", test.size()}, {"best_ms", number(best)}, {"stopped", false}});
}

}  // namespace

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
    if (!a.events.empty()) {
      EvalEventLog events(a.seeds > 1 ? path_for_seed(a.events, seed) : a.events);
      log_decisions(events, seed, cal, tc, part(n_cal, idx.size(), forecasts), part(n_cal, idx.size(), times));
    }
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
