// Pairwise selective prediction on the six NVIDIA spaces of convolution_milo and
// dedispersion_milo (A100, A4000, A6000): each surrogate trained on a fraction of a space,
// disjoint random and neighbour pairs among the held-out points and child pairs (a measured
// training point against a held-out neighbour), the Learn-then-Test rule on
// the direction loss (direction-probability confidence) and on the wrong-bin loss (top-bin
// confidence) checked over 20 calibration/test splits per seed, beside the bin and direction
// accuracies and the majority-class baseline. Each split's rule is judged on its test half and on
// the population of its kind (calibration/pairwise_evaluation.hpp: PairPopulation). `gpuforecast eval --protocol pairs` prints every
// metric and rule for one space; this prints the summary the notes quote.
//
// --views adds, for each surrogate S, the rows "S+views": the views of the other GPUs of the
// space's kernel and vendor (the default surrogate fitted on each of their shared files, seed 0)
// stacked by the training fraction and corrected by S (calibration/stacked_views_surrogate.hpp),
// what a new GPU with a tenth of its space measured can lean on.
//
//   pairs [--data DIR] [--seeds 2] [--train-fraction 0.1] [--pairs 2000] [--splits 20]
//         [--surrogates xgboost,default] [--kernels k1,k2] [--devices d1,d2] [--views] [--json FILE]
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "common/benchmark_arguments.hpp"
#include "common/shared_data_dir.hpp"
#include "common/shared_spaces.hpp"
#include "common/write_text_file.hpp"
#include "calibration/pairwise_protocol.hpp"
#include "calibration/view_models.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/openmp_environment.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;

namespace {

struct Args {
  fs::path data;
  std::size_t seeds = 2, pairs = 2000, splits = 20;
  double train_fraction = 0.1;
  std::vector<std::string> surrogates{"xgboost", "default"};
  std::vector<std::string> kernels{"convolution_milo", "dedispersion_milo"};
  std::vector<std::string> devices{"A100", "A4000", "A6000"};
  bool views = false;
  std::string json;
};

Args parse(int argc, char** argv) {
  Args a;
  a.data = bench::shared_data_dir();
  bench::BenchmarkArguments args(
      "usage: pairs [--data DIR] [--seeds N] [--train-fraction F] [--pairs N] [--splits N]\n"
      "       [--surrogates S,...] [--kernels K,...] [--devices D,...] [--views] [--json FILE]\n");
  args.text("--data", a.data)
      .number("--seeds", a.seeds)
      .number("--pairs", a.pairs)
      .number("--splits", a.splits)
      .number("--train-fraction", a.train_fraction)
      .list("--surrogates", a.surrogates)
      .list("--kernels", a.kernels)
      .list("--devices", a.devices)
      .flag("--views", [&] { a.views = true; })
      .text("--json", a.json);
  if (!args.parse(argc, argv)) std::exit(0);
  return a;
}

// The view models of every GPU that measured `kernel` among the shared files.
ViewModels kernel_views(const fs::path& data_dir, const std::string& kernel) {
  std::vector<std::string> files;
  for (const auto& f : bench::shared_space_files(data_dir))
    if (f.kernel == kernel) files.push_back(f.path.string());
  return fit_view_models(Dataset::load(files), "default", 0);
}

const PairRuleSummary& rule(const PairEvaluation& e, PairLoss l, PairConfidence c) {
  for (const auto& r : e.rules)
    if (r.loss == l && r.confidence == c) return r;
  throw invalid_argument_error("rule not evaluated");
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  detail::ensure_passive_openmp_wait();
  for (const auto& s : a.surrogates) (void)make_surrogate(s, 0);
  PairProtocolOptions o;
  o.train_fraction = a.train_fraction;
  o.pairs = a.pairs;
  o.evaluation.splits = a.splits;
  o.kinds = {PairKind::random, PairKind::neighbour, PairKind::child};
  o.evaluation.rules = {{0.1, 0.1, PairLoss::wrong_direction, PairConfidence::direction_probability},
                        {0.1, 0.1, PairLoss::wrong_bin, PairConfidence::top_bin_probability}};
  fmt::print("pairs: train {:.0f}% of each space, disjoint pairs among the held-out points, {} seed(s), alpha = delta = "
             "0.1, {} calibration/test splits per seed\n",
             100 * a.train_fraction, a.seeds, a.splits);
  fmt::print("dir = direction accuracy, majD its majority baseline, bin = exact bin, majB its baseline; answered/risk/viol "
             "for the direction loss (direction probability) and the wrong-bin loss (top-bin probability); viol = splits "
             "whose test half's risk exceeded alpha, popV = splits whose risk on the population did (child pairs: every "
             "child pair whose child the calibration did not see; random and neighbour pairs: 50,000 drawn from all of "
             "the kind among the held-out points, those sharing no point with the calibration)\n");
  fmt::print("{:<15} {:<34} {:<9} {:>5} {:>5} {:>5} {:>5} {:>5} | {:>6} {:>13} {:>5} {:>6} {:>7} | {:>6} {:>5} {:>6} {:>7}\n",
             "surrogate", "space", "kind", "pairs", "dir", "majD", "bin", "majB", "answ", "[min-max]", "risk", "viol",
             "popV", "answ", "risk", "viol", "popV");
  nlohmann::json out = nlohmann::json::array();
  for (const auto& kernel : a.kernels) {
    const std::optional<ViewModels> views = a.views ? std::optional(kernel_views(a.data, kernel)) : std::nullopt;
    for (const auto& device : a.devices) {
      const auto file = a.data / "benchmark_hub" / "cachefiles" / kernel / (device + ".json.gz");
      const Dataset data = Dataset::load(std::vector<std::string>{file.string()});
      const SpaceData& space = data.spaces().front();
      std::vector<std::pair<std::string, std::vector<const ViewModel*>>> variants;
      for (const auto& s : a.surrogates) {
        variants.push_back({s, {}});
        if (views) variants.push_back({s, views->of_space(space)});
      }
      for (const auto& [s, space_views] : variants) {
        const std::string label = space_views.empty() ? s : s + "+views";
        const SurrogateFactory make = [&](std::uint64_t seed) { return make_surrogate(s, seed); };
        PairProtocolOptions vo = o;
        vo.views = space_views;
        std::vector<std::vector<PairProtocolRun>> by_kind(o.kinds.size());
        for (std::size_t seed = 0; seed < a.seeds; ++seed) {
          auto runs = evaluate_pairs_interpolation(space, label, make, vo, seed);
          for (std::size_t k = 0; k < runs.size(); ++k) by_kind[k].push_back(std::move(runs[k]));
        }
        for (const auto& runs : by_kind) {
          const auto m = mean_pair_run(runs);
          const auto& e = m.evaluation;
          const auto& d = rule(e, PairLoss::wrong_direction, PairConfidence::direction_probability);
          const auto& b = rule(e, PairLoss::wrong_bin, PairConfidence::top_bin_probability);
          auto population = [&](const PairRuleSummary& r) {
            return e.population_pairs ? fmt::format("{}/{}", r.population_violations, e.splits) : std::string("-");
          };
          fmt::print("{:<15} {:<34} {:<9} {:>5} {:>5.3f} {:>5.3f} {:>5.3f} {:>5.3f} | {:>5.1f}% {:>5.1f}-{:>5.1f}% {:>5.3f} "
                     "{:>3}/{:<3} {:>7}| {:>5.1f}% {:>5.3f} {:>3}/{:<3} {:>7}\n",
                     label, m.target, to_string(m.kind), e.pairs, e.direction_accuracy, e.majority_direction, e.exact,
                     e.majority_exact, 100 * d.answered, 100 * d.answered_min, 100 * d.answered_max, d.risk_answered,
                     d.violations, e.splits, population(d), 100 * b.answered, b.risk_answered, b.violations, e.splits,
                     population(b));
          std::fflush(stdout);
          out.push_back({{"surrogate", label},
                         {"space", m.target},
                         {"kind", to_string(m.kind)},
                         {"pairs", e.pairs},
                         {"splits", e.splits},
                         {"direction_accuracy", e.direction_accuracy},
                         {"majority_direction", e.majority_direction},
                         {"exact", e.exact},
                         {"majority_exact", e.majority_exact},
                         {"direction_answered", d.answered},
                         {"direction_answered_min", d.answered_min},
                         {"direction_answered_max", d.answered_max},
                         {"direction_risk", d.risk_answered},
                         {"direction_violations", d.violations},
                         {"population_pairs", e.population_pairs},
                         {"direction_population_violations", d.population_violations},
                         {"direction_population_risk", d.population_risk},
                         {"bin_answered", b.answered},
                         {"bin_risk", b.risk_answered},
                         {"bin_violations", b.violations},
                         {"bin_population_violations", b.population_violations},
                         {"bin_population_risk", b.population_risk},
                         {"fit_seconds", m.fit_seconds}});
        }
      }
    }
  }
  if (!a.json.empty()) detail::write_text_file(a.json, out.dump(1));
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "pairs: error: {}\n", e.what());
  return 1;
}
