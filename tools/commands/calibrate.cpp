// gpuforecast calibrate: adds (or replaces) the "calibration" section of a model file:
// conformal intervals and the Learn-then-Test deferral rule, fitted on measurements the
// surrogate did not train on.
#include <fmt/core.h>

#include <fmt/format.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "command_registry.hpp"
#include "numeric_options.hpp"
#include "calibration/rehearsal_file.hpp"
#include "calibration/calibrate_model_file.hpp"
#include "calibration/deferral.hpp"
#include "calibration/mondrian_conformal.hpp"
#include "calibration/nonconformity.hpp"
#include "gpuforecast/core/error.hpp"

namespace {

struct CalibrateArgs {
  std::string model;
  std::vector<std::string> data;
  std::string out;
  double alpha = 0.1;
  double risk_alpha = -1;  // default: alpha
  double delta = 0.1;
  std::string method = "split";
  std::string group_by = "none";
  std::string loss = "relative_error";
  double tolerance = 0.1;
  std::string confidence = "interval_width";
  double deferral_fraction = 0;
  double aci_gamma = 0;
  std::uint64_t seed = 0;
  std::size_t device_samples = 0;  // > 0: adapt to the one device of --data from this many runs
  double adapt_fraction = gpuforecast::DeviceAdaptationOptions{}.adapt_fraction;
  // Cross-device calibration: --rehearse stores the rehearsal, --cross-device uses it.
  bool rehearse = false;
  std::string rehearsal_surrogate;
  std::size_t rehearsal_max_configurations = gpuforecast::RehearsalFitOptions{}.max_configurations;
  bool cross_device = false;
  std::string rehearsal_vendors = "same";
  bool no_views = false;
  double check_max_loss = -1;  // < 0: the rehearsal chooses it (CrossDeviceOptions::choose_check)
};

// The file's other runs, which took no part, judging a device's calibration; `assuming` ends the
// guarantee's statement with what it assumes, when it assumes more than random draws.
void print_held_out(const gpuforecast::ModelFileDeviceAdaptation& r, const gpuforecast::CalibrationOptions& o,
                    std::string_view assuming = {}) {
  const double share = r.held_out ? static_cast<double>(r.answered) / static_cast<double>(r.held_out) : 0;
  const double risk = r.answered ? static_cast<double>(r.losses) / static_cast<double>(r.answered) : 0;
  fmt::print("  the file's other {} configurations (not used): {:.1f}% answered without measuring, realised risk {:.3f} "
             "({} of {} wrong; {} loss, guarantee P(risk <= {}) >= {}{})\n",
             r.held_out, 100 * share, risk, r.losses, r.answered, to_string(o.loss), o.risk_alpha, 1 - o.delta, assuming);
}

// --rehearse: each GPU of --data (the training data) left out in turn, the model refitted.
void run_rehearsal(const CalibrateArgs& a) {
  using namespace gpuforecast;
  RehearsalFitOptions o;
  o.surrogate = a.rehearsal_surrogate;
  o.seed = a.seed;
  o.max_configurations = a.rehearsal_max_configurations;
  const StoredRehearsal r = rehearse_model_file(a.model, a.data, a.out, o, [](const std::string& line) {
    fmt::print("  {}\n", line);
    std::fflush(stdout);
  });
  std::set<std::string> devices;
  std::size_t viewed = 0;
  for (const auto& s : r.spaces) {
    devices.insert(s.device);
    viewed += !s.view_devices.empty();
  }
  fmt::print("rehearsal: {} spaces of {} GPUs, each forecast by {} refitted without its GPU (seed {}), {} of them also "
             "as the other GPUs of their kernel and vendor see them (one {} per GPU); `calibrate --cross-device` "
             "adapts a new GPU with it\n",
             r.spaces.size(), devices.size(), r.surrogate, r.seed, viewed, r.surrogate);
  fmt::print("wrote {}\n", a.out);
}

// --cross-device: the stored rehearsal gives the rule, K runs of the new GPU adapt and check.
void run_cross_device(const CalibrateArgs& a, const gpuforecast::CalibrationOptions& calibration) {
  using namespace gpuforecast;
  if (a.data.size() != 1)
    throw invalid_argument_error(fmt::format("calibrate --cross-device takes one --data file (the new GPU), got {}",
                                             a.data.size()));
  if (a.rehearsal_vendors != "same" && a.rehearsal_vendors != "all")
    throw invalid_argument_error(fmt::format("--rehearsal-vendors is same or all, got {}", a.rehearsal_vendors));
  CrossDeviceOptions o;
  o.samples = a.device_samples;
  o.calibration = calibration;
  if (a.check_max_loss >= 0) {
    o.check_max_loss = a.check_max_loss;
    o.choose_check = false;
  }
  const ModelFileCrossDevice r =
      adapt_model_file_across_devices(a.model, a.data.front(), a.out, o, a.rehearsal_vendors == "all", !a.no_views);
  const auto& ad = r.adaptation;
  for (const auto& w : ad.calibration.warnings) fmt::print(stderr, "gpuforecast calibrate: warning: {}\n", w);
  fmt::print("cross-device calibration of {} for {}: {}\n", ad.calibration.surrogate_kind, ad.device, r.rule.describe());
  if (!r.left_out.empty()) fmt::print("  not rehearsing: {}\n", fmt::join(r.left_out, ", "));
  for (const auto& g : r.rule.outcomes) {
    const bool deferred = g.check_loss > r.rule.options.check_max_loss;
    const std::string failed = g.failed_at < r.rule.steps.size()
                                   ? fmt::format("above {} from share {:.2f}", o.calibration.risk_alpha,
                                                 r.rule.steps[g.failed_at].share)
                                   : fmt::format("never above {}", o.calibration.risk_alpha);
    fmt::print("  rehearsal GPU {}: check {:.0f}% of K lost{}, {}\n", g.name, 100 * g.check_loss,
               deferred ? " (fails it: answers nothing)" : "", failed);
  }
  if (o.samples >= o.check_min_samples)
    fmt::print("  check: {:.0f}% of the {} measurements are losses when forecast from the others (at most {:.0f}%): {}\n",
               100 * r.check.loss_share, o.samples, 100 * r.rule.options.check_max_loss,
               r.check.passed ? "passed" : "failed, every forecast of this GPU is deferred");
  const auto& scope = *ad.calibration.calibrator.device_scope();
  if (r.stacking) {
    fmt::print("  forecasts stacked from the views of {} other GPU(s): log t = {}\n", r.view_devices.size(),
               r.stacking->describe(r.view_devices));
  }
  fmt::print("  forecasts corrected by log t = {:.3f} + {:.3f} log t_hat (fitted on the {} measurements, seed {})\n",
             scope.correction.offset, scope.correction.slope, o.samples, a.seed);
  print_held_out(ad, calibration, " for a GPU drawn like the rehearsal GPUs");
  fmt::print("wrote {}\n", a.out);
}

// --device-samples K: K random runs of a new device adapt and certify; the file's other runs judge.
void run_device_adaptation(const CalibrateArgs& a, const gpuforecast::CalibrationOptions& o) {
  using namespace gpuforecast;
  if (a.data.size() != 1)
    throw invalid_argument_error(fmt::format("calibrate --device-samples takes one --data file (one device), got {}",
                                             a.data.size()));
  DeviceAdaptationOptions d;
  d.calibration = o;
  d.adapt_fraction = a.adapt_fraction;
  const ModelFileDeviceAdaptation r = adapt_model_file(a.model, a.data.front(), a.out, a.device_samples, d, !a.no_views);
  for (const auto& w : r.calibration.warnings) fmt::print(stderr, "gpuforecast calibrate: warning: {}\n", w);
  const auto& cal = r.calibration.calibrator;
  const auto& scope = *cal.device_scope();
  fmt::print("adapted the {} surrogate to {} from {} random measurements (seed {}): {} fit the {}correction "
             "log t = {:.3f} + {:.3f} log t_hat, {} certify\n",
             r.calibration.surrogate_kind, r.device, a.device_samples, a.seed, scope.adapt_points,
             scope.view_devices.empty() ? "" : "stacking and the ", scope.correction.offset, scope.correction.slope,
             a.device_samples - scope.adapt_points);
  fmt::print("  {}\n", cal.describe());
  print_held_out(r, o);
  fmt::print("wrote {}\n", a.out);
}

void run(const CalibrateArgs& a) {
  using namespace gpuforecast;
  CalibrationOptions o;
  o.alpha = a.alpha;
  o.risk_alpha = a.risk_alpha < 0 ? a.alpha : a.risk_alpha;
  o.delta = a.delta;
  o.score = parse_conformal_score(a.method);
  o.group_by = parse_group_by(a.group_by);
  o.loss = parse_deferral_loss(a.loss);
  o.tolerance = a.tolerance;
  o.confidence = parse_confidence_score(a.confidence);
  o.deferral_fraction = a.deferral_fraction;
  o.aci_gamma = a.aci_gamma;
  o.seed = a.seed;
  if (a.rehearse) return run_rehearsal(a);
  if (a.cross_device) return run_cross_device(a, o);
  if (a.device_samples > 0) return run_device_adaptation(a, o);
  const ModelFileCalibration result = calibrate_model_file(a.model, a.data, a.out, o);
  for (const auto& w : result.warnings) fmt::print(stderr, "gpuforecast calibrate: warning: {}\n", w);

  const auto& cal = result.calibrator;
  const auto& d = cal.deferral();
  fmt::print("calibrated {} surrogate on {} measurements from {} file(s)\n", result.surrogate_kind, result.measurements,
             result.files);
  fmt::print("  {}\n", cal.describe());
  fmt::print("  deferral threshold: {} ({}), calibration coverage {:.1f}% answered without measuring,\n"
             "  calibration risk {:.4f}, {:.0f}% upper bound {:.4f}; guarantee P(risk <= {}) >= {}\n",
             d.any_valid ? fmt::format("{:.6g}", d.threshold) : std::string("none certified (defer all)"),
             to_string(o.confidence), 100 * d.coverage, d.empirical_risk, 100 * (1 - o.delta), d.risk_upper_bound,
             o.risk_alpha, 1 - o.delta);
  fmt::print("wrote {}\n", a.out);
}

gpuforecast::cli::RegisterCommand reg{"calibrate", [](CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* c = app.add_subcommand("calibrate",
                               "Calibrate a trained model on held-out measurements: conformal intervals and a "
                               "deferral rule with a (alpha, delta) guarantee; writes the model with its "
                               "calibration section");
  c->add_option("--model", args->model, "trained model file (gpuforecast train)")->required();
  c->add_option("--data", args->data, "calibration measurements (cache or T4 files) not used in training")
      ->required();
  c->add_option("--out", args->out, "model file to write (may equal --model)")->required();
  c->add_option("--alpha", args->alpha, "interval miscoverage; also the deferral risk unless --risk-alpha")->capture_default_str()
      ->check(gpuforecast::cli::number_in(0, 1));
  c->add_option("--delta", args->delta, "probability that the deferral guarantee may fail")->capture_default_str()
      ->check(gpuforecast::cli::number_in(0, 1));
  c->add_option("--risk-alpha", args->risk_alpha, "risk level among accepted forecasts (default: --alpha)")
      ->check(gpuforecast::cli::number_in(0, 1));
  c->add_option("--method", args->method, "split (normalised residuals) or cqr (quantile head)")->capture_default_str();
  c->add_option("--group-by", args->group_by, "Mondrian groups: none, kernel, device, kernel_device")->capture_default_str();
  c->add_option("--loss", args->loss, "relative_error or wrong_bin")->capture_default_str();
  c->add_option("--tolerance", args->tolerance, "relative error counted as a loss")->capture_default_str();
  c->add_option("--confidence", args->confidence, "interval_width, top_bin_probability or ensemble_spread")->capture_default_str();
  c->add_option("--deferral-fraction", args->deferral_fraction,
                "fraction of the data held out for Learn-then-Test (0: reuse all)")->capture_default_str()
      ->check(gpuforecast::cli::number_in(0, 1));
  c->add_option("--aci-gamma", args->aci_gamma, "adaptive conformal step for online use (0: off)")->capture_default_str();
  c->add_option("--seed", args->seed, "seed for splits and references")->capture_default_str();
  c->add_option("--device-samples", args->device_samples,
                "adapt to a new device: K random runs of the one --data file fit a forecast correction and "
                "certify (the file's other runs are reported, not used); 0: plain calibration")
      ->capture_default_str();
  c->add_option("--adapt-fraction", args->adapt_fraction,
                "with --device-samples: share of the K runs that fit the correction, the rest certify")
      ->capture_default_str()->check(gpuforecast::cli::number_in(0, 1));
  c->add_flag("--rehearse", args->rehearse,
              "store a rehearsal for cross-device calibration: each GPU of --data (the training data) is left out "
              "in turn, the surrogate refitted without it forecasts it; one surrogate per GPU gives each GPU's views");
  c->add_option("--rehearsal-surrogate", args->rehearsal_surrogate,
                "with --rehearse: the surrogate kind refitted (default: the model's own, with default options)");
  c->add_option("--rehearsal-max-configurations", args->rehearsal_max_configurations,
                "with --rehearse: configurations kept per space (a seeded sample)")
      ->capture_default_str();
  c->add_flag("--cross-device", args->cross_device,
              "adapt to the new GPU of the one --data file from --device-samples K of its runs, trusting it as far "
              "as the stored rehearsal GPUs allow (guarantee for a GPU drawn like them)");
  c->add_flag("--no-views", args->no_views,
              "with --device-samples or --cross-device: correct the model's single forecasts of the new GPU instead "
              "of stacking the stored per-GPU views");
  c->add_option("--rehearsal-vendors", args->rehearsal_vendors,
                "with --cross-device: rehearse on GPUs of the new GPU's vendor (same) or of every vendor (all)")
      ->capture_default_str();
  c->add_option("--check-max-loss", args->check_max_loss,
                "with --cross-device: share of the K runs that may be losses when forecast from the others "
                "(default: the limit of 0.05-0.25 under which the rehearsal GPUs answer the most)")
      ->check(gpuforecast::cli::number_in(0, 1));
  c->callback([args] { run(*args); });
}};

}  // namespace
