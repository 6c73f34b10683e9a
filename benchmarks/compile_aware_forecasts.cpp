// Forecasts that know what the compiler did (docs/features.md, docs/surrogates.md): on the 18
// shared NVIDIA spaces, restricted to the configurations the stored static feature tables hold,
//   interpolation: train on 2%, 5%, 10% of a space, test on the rest; the default forecaster with
//   the static features against XGBoost and the default on the parameters alone, on the same
//   splits. Per space: mean Spearman and top-1% recall (true top-1% inside the predicted top-5%)
//   over fractions and seeds; the summary says by how much the default with features leads
//   XGBoost on average, in how many spaces, and in how many it loses top-1% recall by more than
//   one standard error of the paired difference.
//
//   compile_aware_forecasts [--data DIR] [--features DIR] [--seeds 3] [--fractions 0.02,0.05,0.1]
//                           [--kernels k1,k2] [--json FILE]
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/benchmark_arguments.hpp"
#include "common/shared_data_dir.hpp"
#include "common/write_text_file.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/static_feature_table.hpp"
#include "gpuforecast/surrogate/evaluation.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;

namespace {

struct Args {
  fs::path data;
  fs::path features = fs::path(GPUFORECAST_SOURCE_DIR) / "data" / "features";
  std::size_t seeds = 3;
  std::vector<double> fractions{0.02, 0.05, 0.10};
  std::vector<std::string> kernels{"convolution", "convolution_milo", "dedispersion_milo", "gemm", "pnpoly"};
  std::string json;
};

Args parse(int argc, char** argv) {
  Args a;
  a.data = bench::shared_data_dir();
  bench::BenchmarkArguments args(
      "usage: compile_aware_forecasts [--data DIR] [--features DIR] [--seeds N] [--fractions F,...] [--kernels K,...]\n"
      "       [--json FILE]\n");
  args.text("--data", a.data)
      .text("--features", a.features)
      .number("--seeds", a.seeds)
      .number_list("--fractions", a.fractions)
      .list("--kernels", a.kernels)
      .text("--json", a.json);
  if (!args.parse(argc, argv)) std::exit(0);
  return a;
}

// The three forecasters compared, each on the same split.
struct Contender {
  std::string label;
  std::string surrogate;
  bool static_features;
};
const std::vector<Contender>& contenders() {
  static const std::vector<Contender> c{{"default+features", "default", true},
                                        {"xgboost", "xgboost", false},
                                        {"default", "default", false}};
  return c;
}

// The space's NVIDIA configurations that its table holds, with the features joined; empty when
// the space has no table (an AMD GPU).
SpaceData with_features_only(SpaceData space, std::span<const StaticFeatureTable> tables) {
  std::vector<SpaceData> one{std::move(space)};
  const auto coverage = attach_static_features(one, tables);
  SpaceData& s = one.front();
  std::erase_if(s.observations,
                [](const Observation& o) { return o.candidate.features.at("static_features_known") == 0; });
  (void)coverage;
  return std::move(s);
}

EvaluationSplit without_static_features(EvaluationSplit split) {
  for (auto* part : {&split.train, &split.test})
    for (auto& o : *part) o.candidate.features.clear();
  return split;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}
double standard_error(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
}

struct SpaceResult {
  std::string label;
  std::size_t configurations = 0;
  std::map<std::string, std::vector<double>> spearman, top1;  // by contender, one per (fraction, seed)
};

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  const auto tables = read_static_feature_tables(a.features.string());
  const fs::path cachefiles = a.data / "benchmark_hub" / "cachefiles";
  std::vector<SpaceResult> results;
  for (const auto& kernel : a.kernels) {
    if (!fs::is_directory(cachefiles / kernel))
      throw input_error((cachefiles / kernel).string(), "", "no such kernel in the shared datasets");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(cachefiles / kernel))
      if (e.path().string().ends_with(".json.gz")) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      SpaceData space = load_space(file.string());
      if (!space.device || nvidia_architecture(*space.device).empty()) continue;  // AMD: no features
      space = with_features_only(std::move(space), tables);
      if (space.observations.empty()) continue;
      SpaceResult r;
      r.label = space_label(space);
      r.configurations = space.observations.size();
      for (double fraction : a.fractions)
        for (std::uint64_t seed = 1; seed <= a.seeds; ++seed) {
          const EvaluationSplit split = interpolation_split(space, fraction, seed);
          const EvaluationSplit plain = without_static_features(split);
          for (const auto& c : contenders()) {
            EvaluationRun run;
            run.seed = seed;
            evaluate_split(run, c.static_features ? split : plain,
                           [&c](std::uint64_t s) { return make_surrogate(c.surrogate, s); });
            r.spearman[c.label].push_back(run.scores.spearman);
            r.top1[c.label].push_back(run.scores.top1_recall);
          }
        }
      fmt::print(stderr, "{}: {} configurations with features\n", r.label, r.configurations);
      results.push_back(std::move(r));
    }
  }

  // The table, and the summary against XGBoost.
  fmt::print("interpolation at {} of each space, {} seeds, on the configurations with static features\n",
             fmt::join(a.fractions, ", "), a.seeds);
  fmt::print("{:<34} {:>6}  {:>17} {:>9} {:>9}  {:>17} {:>9} {:>9}\n", "space", "n", "rho default+feat", "xgboost",
             "default", "top1 default+feat", "xgboost", "default");
  nlohmann::json j;
  std::vector<double> leads;
  std::size_t wins = 0, top1_losses = 0;
  for (const auto& r : results) {
    const auto& s = r.spearman;
    const auto& t = r.top1;
    fmt::print("{:<34} {:>6}  {:>17.4f} {:>9.4f} {:>9.4f}  {:>17.3f} {:>9.3f} {:>9.3f}\n", r.label, r.configurations,
               mean(s.at("default+features")), mean(s.at("xgboost")), mean(s.at("default")),
               mean(t.at("default+features")), mean(t.at("xgboost")), mean(t.at("default")));
    const double lead = mean(s.at("default+features")) - mean(s.at("xgboost"));
    leads.push_back(lead);
    wins += lead > 0 ? 1 : 0;
    std::vector<double> top1_difference;
    for (std::size_t i = 0; i < t.at("xgboost").size(); ++i)
      top1_difference.push_back(t.at("default+features")[i] - t.at("xgboost")[i]);
    const bool loses_top1 = mean(top1_difference) < -standard_error(top1_difference);
    top1_losses += loses_top1 ? 1 : 0;
    nlohmann::json row{{"space", r.label}, {"configurations", r.configurations}, {"spearman_lead", lead},
                       {"top1_lead", mean(top1_difference)}, {"top1_lead_se", standard_error(top1_difference)},
                       {"loses_top1", loses_top1}};
    for (const auto& c : contenders())
      row["models"][c.label] = {{"spearman", mean(s.at(c.label))}, {"top1_recall", mean(t.at(c.label))}};
    j["spaces"].push_back(row);
  }
  fmt::print("\ndefault+features against xgboost on parameters: Spearman lead {:+.4f} on average, ahead in {} of {} "
             "spaces; top-1% recall lower by more than one standard error in {}\n",
             mean(leads), wins, results.size(), top1_losses);
  j["summary"] = {{"spearman_lead", mean(leads)}, {"spaces_ahead", wins}, {"spaces", results.size()},
                  {"top1_losses", top1_losses}, {"fractions", a.fractions}, {"seeds", a.seeds}};
  if (!a.json.empty()) detail::write_text_file(a.json, j.dump(2));
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "compile_aware_forecasts: {}\n", e.what());
  return 1;
}
