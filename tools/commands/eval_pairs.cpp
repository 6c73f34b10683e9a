// gpuforecast eval --protocol pairs: see eval_pairs.hpp.
#include "commands/eval_pairs.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>

#include "calibration/pairwise_protocol.hpp"
#include "calibration/view_models.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/openmp_environment.hpp"
#if GPUFORECAST_HAVE_LLM
#include "llm/llm_pair_protocol.hpp"
#endif

namespace gpuforecast::cli {

void add_pair_options(CLI::App& c, PairEvalArgs& a) {
  c.add_option("--pairs", a.pairs, "pairs: (reference, candidate) pairs per kind and space")->capture_default_str();
  c.add_option("--pair-kind", a.kinds,
               "pairs: random, neighbour (one parameter apart), child (a held-out neighbour of a measured point)")
      ->delimiter(',')
      ->capture_default_str();
  c.add_option("--splits", a.splits, "pairs: random calibration/test splits of the pairs")->capture_default_str();
  c.add_option("--ltt-start", a.start_fraction,
               "pairs: fraction of calibration pairs the first threshold Learn-then-Test tests answers")
      ->capture_default_str();
  c.add_option("--examples", a.examples, "pairs, llm: measured training pairs shown as worked examples in each prompt")
      ->capture_default_str();
  c.add_option("--llm-cache", a.llm_cache, "pairs, llm: response cache directory (reruns cost nothing)");
  c.add_option("--llm-in-flight", a.llm_in_flight, "pairs, llm: requests at once")->capture_default_str();
  c.add_option("--llm-timeout", a.llm_timeout, "pairs, llm: seconds per request")->capture_default_str();
  c.add_flag("--views", a.views,
             "pairs: lean on the other GPUs of each space's kernel and vendor among --data (the default surrogate "
             "fitted on each, stacked by the training fraction, corrected by --surrogate)");
  c.add_flag("--shared-points", a.shared_points,
             "pairs: let pairs share points (more pairs, dependent losses: the guarantee is not checked fairly)");
}

namespace {

nlohmann::json to_json(const PairProtocolRun& r) {
  const auto& e = r.evaluation;
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& s : e.rules)
    rules.push_back({{"loss", to_string(s.loss)},
                     {"confidence", to_string(s.confidence)},
                     {"answered", s.answered},
                     {"answered_min", s.answered_min},
                     {"answered_max", s.answered_max},
                     {"risk_answered", s.risk_answered},
                     {"violations", s.violations},
                     {"population_violations", s.population_violations},
                     {"population_risk", s.population_risk},
                     {"aurc", s.aurc},
                     {"risk_all", s.risk_all}});
  return {{"surrogate", r.surrogate},     {"target", r.target},
          {"pair_kind", to_string(r.kind)}, {"seed", r.seed},
          {"train", r.train_count},        {"test", r.test_count},
          {"fit_seconds", r.fit_seconds},  {"pairs", e.pairs},
          {"splits", e.splits},            {"alpha", e.alpha},
          {"delta", e.delta},              {"exact", e.exact},
          {"within_one", e.within_one},    {"direction_accuracy", e.direction_accuracy},
          {"brier", e.brier},              {"crps", e.crps},
          {"ece", e.ece},                  {"majority_exact", e.majority_exact},
          {"majority_direction", e.majority_direction},
          {"exact_at_50", e.exact_at_50},  {"exact_at_80", e.exact_at_80},
          {"direction_at_50", e.direction_at_50},
          {"direction_at_80", e.direction_at_80},
          {"set_coverage", e.set_coverage}, {"mean_set_size", e.mean_set_size},
          {"population_pairs", e.population_pairs},
          {"rules", rules}};
}

}  // namespace

void run_pairs_eval(const PairEvalArgs& a) {
  if (a.data.empty()) throw invalid_argument_error("eval --protocol pairs needs --data FILE...");
  if (a.pairs < 2) throw invalid_argument_error(fmt::format("--pairs must be at least 2, got {}", a.pairs));
  if (a.splits == 0) throw invalid_argument_error("--splits must be at least 1");
  if (a.kinds.empty()) throw invalid_argument_error("--pair-kind needs random, neighbour and/or child");
  PairProtocolOptions o;
  o.train_fraction = a.train_fraction;
  o.pairs = a.pairs;
  o.disjoint = !a.shared_points;
  o.kinds.clear();
  for (const auto& k : a.kinds) o.kinds.push_back(parse_pair_kind(k));
  o.evaluation.alpha = a.alpha;
  o.evaluation.delta = a.delta;
  o.evaluation.splits = a.splits;
  o.evaluation.calibration_fraction = a.calibration_fraction;
  o.evaluation.seed = a.seed;
  o.evaluation.start_fraction = a.start_fraction;
  const std::vector<std::string> surrogates = a.surrogates.empty() ? std::vector<std::string>{"default"} : a.surrogates;
  for (const auto& s : surrogates)
    if (s != "llm") (void)make_surrogate(s, 0);  // unknown names fail before any work
  if (a.views && std::find(surrogates.begin(), surrogates.end(), "llm") != surrogates.end())
    throw invalid_argument_error("--views corrects the views with a surrogate; llm is not one");
#if GPUFORECAST_HAVE_LLM
  std::optional<LlmEndpoint> llm;
  if (std::find(surrogates.begin(), surrogates.end(), "llm") != surrogates.end()) {
    LlmEndpointOptions lo;
    lo.cache_dir = a.llm_cache;
    lo.in_flight = a.llm_in_flight;
    lo.timeout_seconds = a.llm_timeout;
    llm.emplace(llm_options_from_environment(lo));
  }
#else
  if (std::find(surrogates.begin(), surrogates.end(), "llm") != surrogates.end())
    throw invalid_argument_error("surrogate llm is not in this build (it needs libcurl: GPUFORECAST_WITH_CURL)");
#endif
  detail::ensure_passive_openmp_wait();
  const Dataset data = Dataset::load(a.data);
  const std::optional<ViewModels> views =
      a.views ? std::optional(fit_view_models(data, "default", a.seed)) : std::nullopt;

  std::vector<std::string> keys;
  std::map<std::string, std::vector<PairProtocolRun>> by_key;
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& space : data.spaces())
    for (const auto& surrogate : surrogates) {
      PairProtocolOptions so = o;
      if (views) so.views = views->of_space(space);
      const std::string s = views ? surrogate + "+views" : surrogate;
      const SurrogateFactory make = [&](std::uint64_t seed) { return make_surrogate(surrogate, seed); };
      for (std::size_t i = 0; i < a.seeds; ++i) {
        std::vector<PairProtocolRun> seed_runs;
#if GPUFORECAST_HAVE_LLM
        if (surrogate == "llm") {
          for (auto& lr : evaluate_llm_pairs(space, *llm, o, a.examples, a.seed + i)) {
            fmt::print(stderr, "llm {} {}: {} pairs asked, {} deferred (endpoint failures), {} text-only{}{}\n",
                       lr.run.target, to_string(lr.run.kind), lr.asked, lr.failed, lr.text_only,
                       lr.failed ? "; first: " : "", lr.first_error);
            seed_runs.push_back(std::move(lr.run));
          }
        } else
#endif
          seed_runs = evaluate_pairs_interpolation(space, s, make, so, a.seed + i);
        for (auto& r : seed_runs) {
          const std::string key = fmt::format("{} {} {}", s, r.target, to_string(r.kind));
          if (!by_key.count(key)) keys.push_back(key);
          runs.push_back(to_json(r));
          by_key[key].push_back(std::move(r));
        }
      }
    }
#if GPUFORECAST_HAVE_LLM
  if (llm) {
    const auto c = llm->counts();
    fmt::print(stderr, "llm calls: {} prompts, {} requests ({} retries), {} from the cache, {} answered ({} text-only), "
               "{} deferred\n", c.prompts, c.requests, c.retries, c.cache_hits, c.answered, c.text_only, c.failed);
  }
#endif

  if (a.json) {
    nlohmann::json mean = nlohmann::json::array();
    for (const auto& k : keys) mean.push_back(to_json(mean_pair_run(by_key[k])));
    fmt::print("{}\n", nlohmann::json{{"protocol", "pairs"}, {"runs", runs}, {"mean", mean}}.dump(1));
    return;
  }
  fmt::print("protocol pairs: train {:.0f}% of each space, pairs among the held-out points, mean over {} seed(s); "
             "alpha = {}, delta = {}, {} calibration/test splits ({:.0f}% calibration) per seed\n",
             100 * a.train_fraction, a.seeds, a.alpha, a.delta, a.splits, 100 * a.calibration_fraction);
  fmt::print("\nforecast quality (maj = majority-class baseline; @50/@80 = accuracy of the most confident 50%/80%; "
             "set = ordinal conformal bin set at 1 - alpha)\n");
  fmt::print("{:<52} {:>6} {:>5} {:>5} {:>5} {:>6} {:>6} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5}\n",
             "surrogate space kind", "pairs", "bin", "bin±1", "dir", "Brier", "CRPS", "ECE", "majB", "majD", "bin50",
             "bin80", "dir50", "dir80", "setC", "setN");
  for (const auto& k : keys) {
    const auto& e = mean_pair_run(by_key[k]).evaluation;
    fmt::print("{:<52} {:>6} {:>5.3f} {:>5.3f} {:>5.3f} {:>6.3f} {:>6.3f} {:>5.3f} {:>5.3f} {:>5.3f} {:>5.3f} {:>5.3f} "
               "{:>5.3f} {:>5.3f} {:>5.3f} {:>5.2f}\n",
               k, e.pairs, e.exact, e.within_one, e.direction_accuracy, e.brier, e.crps, e.ece, e.majority_exact,
               e.majority_direction, e.exact_at_50, e.exact_at_80, e.direction_at_50, e.direction_at_80, e.set_coverage,
               e.mean_set_size);
  }
  fmt::print("\ndeferral (Learn-then-Test): answered = mean fraction of test pairs answered without measuring "
             "[min-max over splits], risk = loss among answered pairs, viol = splits with that risk > alpha; popR, popV = "
             "the same on the population (child pairs: every child pair whose child the calibration did not see; random "
             "and neighbour pairs: 50,000 drawn from all of the kind, those sharing no point with the calibration)\n");
  fmt::print("{:<52} {:<16} {:<22} {:>8} {:>13} {:>6} {:>9} {:>6} {:>9} {:>6} {:>6}\n", "surrogate space kind", "loss",
             "confidence", "answered", "[min-max]", "risk", "viol", "popR", "popV", "AURC", "risk1");
  for (const auto& k : keys) {
    const auto m = mean_pair_run(by_key[k]);
    for (const auto& s : m.evaluation.rules)
      fmt::print("{:<52} {:<16} {:<22} {:>7.1f}% {:>5.1f}-{:>5.1f}% {:>6.3f} {:>4}/{:<4} {:>6} {:>9} {:>6.3f} {:>6.3f}\n", k,
                 to_string(s.loss), to_string(s.confidence), 100 * s.answered, 100 * s.answered_min,
                 100 * s.answered_max, s.risk_answered, s.violations, m.evaluation.splits,
                 m.evaluation.population_pairs ? fmt::format("{:.3f}", s.population_risk) : "-",
                 m.evaluation.population_pairs ? fmt::format("{}/{}", s.population_violations, m.evaluation.splits) : "-",
                 s.aurc, s.risk_all);
  }
}

}  // namespace gpuforecast::cli
