// gpuforecast eval: one harness for every surrogate, side by side.
//   --protocol interpolate      --data FILE... --train-fraction F --seeds N
//   --protocol transfer-device  --target FILE --train FILE... --target-samples K
//   --protocol transfer-kernel  --target FILE --train FILE... --target-samples K
//   --selective --model MODEL --data FILE...   (calibrated selective predictor; eval_selective.cpp)
//   --protocol pairs --data FILE... --pairs N --pair-kind random,neighbour   (pairwise selective; eval_pairs.cpp)
// Metrics: Spearman, Kendall tau-b, MAPE, top-1% recall in the predicted top-5%, utility,
// eight-bin exact and within-one accuracy, Brier and ordinal CRPS on random pairs.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "numeric_options.hpp"
#include "static_features_option.hpp"
#include "commands/eval_pairs.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "surrogate/evaluation.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/openmp_environment.hpp"
#include "eval_selective.hpp"
#include "surrogate/evaluation_json.hpp"

namespace {

struct EvalArgs {
  std::string protocol = "interpolate";
  std::vector<std::string> data;
  double train_fraction = 0.1;
  std::size_t seeds = 5;
  std::uint64_t seed = 0;
  std::string target;
  std::vector<std::string> train;
  std::vector<std::size_t> target_samples{0};
  std::vector<std::string> surrogates;
  std::string features;
  bool json = false;
  // --selective
  bool selective = false;
  std::string model;
  double alpha = 0.1, delta = 0.1, calibration_fraction = 0.5;
  std::string plots;
  std::string events;
  // --protocol pairs: its own options (the shared ones are copied in by run)
  gpuforecast::cli::PairEvalArgs pairs;
};

nlohmann::json to_json(const gpuforecast::EvaluationRun& r) { return gpuforecast::detail::evaluation_run_json(r); }

void print_row(const std::string& label, const gpuforecast::EvaluationRun& m) {
  fmt::print("{:<44} {:>6.3f} {:>6.3f} {:>7.1f} {:>5.2f} {:>6.3f} {:>5.2f} {:>5.2f} {:>6.3f} {:>6.3f} {:>7.2f}\n", label,
             m.scores.spearman, m.scores.kendall, m.scores.mape, m.scores.top1_recall, m.scores.utility, m.scores.bins.exact,
             m.scores.bins.within_one, m.scores.bins.brier, m.scores.bins.crps, m.fit_seconds);
}

void run(const EvalArgs& a) {
  using namespace gpuforecast;
  if (!a.events.empty() && !a.selective)
    throw invalid_argument_error("eval --events records the decisions of --selective: add --selective --model M");
  if (!a.features.empty() && (a.selective || a.protocol == "pairs"))
    throw invalid_argument_error("eval --features applies to --protocol interpolate, transfer-device and transfer-kernel");
  if (a.selective) {
    if (a.model.empty()) throw invalid_argument_error("eval --selective needs --model");
    if (a.data.empty()) throw invalid_argument_error("eval --selective needs --data (held-out measurements)");
    cli::SelectiveEvalArgs s;
    s.model = a.model;
    s.data = a.data;
    s.calibration_fraction = a.calibration_fraction;
    s.alpha = a.alpha;
    s.delta = a.delta;
    s.seeds = a.seeds;
    s.seed = a.seed;
    s.plots = a.plots;
    s.events = a.events;
    s.json = a.json;
    cli::run_selective_eval(s);
    return;
  }
  if (a.protocol == "pairs") {
    cli::PairEvalArgs p = a.pairs;
    p.data = a.data;
    p.surrogates = a.surrogates;
    p.train_fraction = a.train_fraction;
    p.seeds = a.seeds;
    p.seed = a.seed;
    p.alpha = a.alpha;
    p.delta = a.delta;
    p.json = a.json;
    cli::run_pairs_eval(p);
    return;
  }
  detail::ensure_passive_openmp_wait();
  const std::vector<std::string> surrogates = a.surrogates.empty() ? surrogate_names() : a.surrogates;
  for (const auto& s : surrogates) (void)make_surrogate(s, 0);  // unknown names fail before any work
  std::vector<EvaluationRun> runs;
  // (surrogate, target, setting) -> runs over seeds, in first-seen order
  std::vector<std::string> keys;
  std::map<std::string, std::vector<EvaluationRun>> by_key;
  std::vector<StaticFeatureCoverage> coverage;  // with --features
  auto add = [&](const std::string& key, EvaluationRun r) {
    if (!by_key.count(key)) keys.push_back(key);
    by_key[key].push_back(r);
    runs.push_back(std::move(r));
  };
  if (a.protocol == "interpolate") {
    if (a.data.empty()) throw invalid_argument_error("eval --protocol interpolate needs --data FILE...");
    Dataset data = Dataset::load(a.data);
    coverage = cli::join_static_features(data.spaces(), a.features);
    for (const auto& space : data.spaces())
      for (const auto& s : surrogates) {
        const SurrogateFactory make = [&](std::uint64_t seed) { return make_surrogate(s, seed); };
        for (std::size_t i = 0; i < a.seeds; ++i)
          add(fmt::format("{} {} {:.0f}%", s, space_label(space), 100 * a.train_fraction),
              evaluate_interpolation(space, s, make, a.train_fraction, a.seed + i));
      }
  } else if (a.protocol == "transfer-device" || a.protocol == "transfer-kernel") {
    if (a.target.empty() || a.train.empty())
      throw invalid_argument_error(fmt::format("eval --protocol {} needs --target FILE and --train FILE...", a.protocol));
    Dataset train = Dataset::load(a.train);
    std::vector<SpaceData> targets{load_space(a.target)};
    coverage = cli::join_static_features(train.spaces(), a.features);
    const auto target_coverage = cli::join_static_features(targets, a.features);
    coverage.insert(coverage.end(), target_coverage.begin(), target_coverage.end());
    const SpaceData& target = targets.front();
    std::vector<const SpaceData*> spaces;
    for (const auto& s : train.spaces()) {
      if (a.protocol == "transfer-device" && s.kernel != target.kernel)
        fmt::print(stderr, "gpuforecast eval: warning: {} is kernel {}, the target is {} (transfer-device expects the "
                   "same kernel on other devices)\n", s.path, s.kernel, target.kernel);
      spaces.push_back(&s);
    }
    for (const auto& s : surrogates) {
      const SurrogateFactory make = [&](std::uint64_t seed) { return make_surrogate(s, seed); };
      for (std::size_t k : a.target_samples)
        for (std::size_t i = 0; i < a.seeds; ++i)
          add(fmt::format("{} {} K={}", s, space_label(target), k),
              evaluate_transfer(spaces, target, k, s, make, a.seed + i, a.protocol));
    }
  } else {
    throw invalid_argument_error(fmt::format(
        "unknown protocol \"{}\" (interpolate, transfer-device, transfer-kernel, pairs)", a.protocol));
  }

  if (a.json) {
    nlohmann::json out = {{"protocol", a.protocol}, {"runs", nlohmann::json::array()}, {"mean", nlohmann::json::array()}};
    for (const auto& r : runs) out["runs"].push_back(to_json(r));
    for (const auto& k : keys) out["mean"].push_back(to_json(mean_run(by_key[k])));
    if (!a.features.empty()) {
      out["static_features"] = nlohmann::json::array();
      for (const auto& c : coverage)
        out["static_features"].push_back({{"path", c.path}, {"architecture", c.architecture},
                                          {"observations", c.observations}, {"with_features", c.with_features},
                                          {"note", c.note}});
    }
    fmt::print("{}\n", out.dump(1));
    return;
  }
  fmt::print("protocol {}: mean over {} seed(s); top1 = true top-1% found in predicted top-5%; utility = best true time "
             "in predicted top-10% / best; bins on random pairs\n",
             a.protocol, a.seeds);
  fmt::print("{:<44} {:>6} {:>6} {:>7} {:>5} {:>6} {:>5} {:>5} {:>6} {:>6} {:>7}\n", "surrogate target setting", "rho",
             "tau", "MAPE%", "top1", "util", "bin", "bin±1", "Brier", "CRPS", "fit s");
  for (const auto& k : keys) print_row(k, mean_run(by_key[k]));
  if (!a.features.empty()) fmt::print("{}", describe(coverage));
}

gpuforecast::cli::RegisterCommand reg{"eval", [](CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* c = app.add_subcommand("eval", "Evaluate surrogates side by side (interpolation, transfer to an unseen device "
                                       "or kernel), or a calibrated selective model (--selective)");
  c->add_option("--protocol", args->protocol, "interpolate, transfer-device, transfer-kernel or pairs")->capture_default_str();
  c->add_option("--data", args->data, "interpolate: the spaces (each evaluated on its own); --selective: held-out data")
      ->check(CLI::ExistingFile);
  c->add_option("--train-fraction", args->train_fraction, "interpolate: fraction of each space to train on")
      ->capture_default_str()
      ->check(gpuforecast::cli::number_in(0, 1));
  c->add_option("--seeds", args->seeds, "random splits per setting (seeds --seed, --seed+1, ...)")->capture_default_str();
  c->add_option("--seed", args->seed, "first seed")->capture_default_str();
  c->add_option("--target", args->target, "transfer: the unseen space")->check(CLI::ExistingFile);
  c->add_option("--train", args->train, "transfer: spaces to train on")->check(CLI::ExistingFile);
  c->add_option("--target-samples", args->target_samples, "transfer: target points added to training (several allowed)")
      ->capture_default_str();
  c->add_option("--surrogate", args->surrogates, "surrogates to compare (several allowed; default: all in this build)");
  gpuforecast::cli::add_static_features_option(*c, args->features);
  c->add_flag("--json", args->json, "JSON instead of a table");
  c->add_flag("--selective", args->selective, "evaluate a calibrated selective model instead (needs --model, --data)");
  c->add_option("--model", args->model, "--selective: model file")->check(CLI::ExistingFile);
  gpuforecast::cli::add_pair_options(*c, args->pairs);
  c->add_option("--alpha", args->alpha, "--selective, pairs: miscoverage and deferral risk")->capture_default_str()
      ->check(gpuforecast::cli::number_in(0, 1));
  c->add_option("--delta", args->delta, "--selective, pairs: guarantee failure probability")->capture_default_str()
      ->check(gpuforecast::cli::number_in(0, 1));
  c->add_option("--calibration-fraction", args->calibration_fraction,
                "--selective: fraction of --data used to calibrate (0: use the model's calibration)")
      ->capture_default_str()
      ->check(gpuforecast::cli::number_in(0, 1));
  c->add_option("--plots", args->plots, "--selective: directory for the SVG plots");
  c->add_option("--events", args->events,
                "--selective: write every test point's decision, with its measured time and loss, as JSON Lines "
                "(docs/events.md)");
  c->callback([args] { run(*args); });
}};

}  // namespace
