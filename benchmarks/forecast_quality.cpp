// Forecast quality of every surrogate, side by side, on the six NVIDIA spaces of
// convolution_milo and dedispersion_milo (A100, A4000, A6000):
//   interpolation: train on 2%, 5%, 10% of a space, test on the rest; mean over spaces and seeds;
//   transfer to an unseen device: each NVIDIA device held out in turn, trained on the other
//   NVIDIA devices of the same kernel plus K = 0, 20, 100 target points.
// Prints mean Spearman and top-1% recall (true top-1% inside the predicted top-5%), plus Kendall,
// utility and the eight-bin scores in --json.
//
//   forecast_quality [--data DIR] [--quick] [--seeds 5] [--transfer-seeds 1] [--fractions 0.02,0.05,0.1]
//                    [--ks 0,20,100] [--surrogates ridge,knn,xgboost,ensemble,...] [--kernels k1,k2]
//                    [--no-interpolation] [--no-transfer] [--json FILE] [--dump-forecasts DIR]
// --dump-forecasts writes each split's true times and every model's median forecasts (one JSON
// file per split) so that other blends can be scored without training again.
//
// Ensembles ("ensemble", or "ensemble(xgboost=0.7,transformer=0.3)": any members and weights)
// are scored from their members' forecasts on the same split (exactly what make_surrogate
// computes: the first member of a kind with the ensemble's seed, a repeated kind with its own,
// ensemble_member_seed), so each member is fitted once per split however many ensembles use it.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "surrogate/ensemble.hpp"
#include "surrogate/evaluation.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/openmp_environment.hpp"
#include "common/benchmark_arguments.hpp"
#include "common/shared_data_dir.hpp"
#include "common/write_text_file.hpp"
#include "surrogate/evaluation_json.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;

namespace {

struct Args {
  fs::path data;
  std::size_t seeds = 5, transfer_seeds = 1;
  std::vector<double> fractions{0.02, 0.05, 0.10};
  std::vector<std::size_t> ks{0, 20, 100};
  std::vector<std::string> surrogates = surrogate_names();
  std::vector<std::string> kernels{"convolution_milo", "dedispersion_milo"};
  std::vector<std::string> devices{"A100", "A4000", "A6000"};
  bool interpolation = true, transfer = true;
  std::string json;
  fs::path dump;  // --dump-forecasts: every split's truth and median forecasts, for blending offline
};

Args parse(int argc, char** argv) {
  Args a;
  a.data = bench::shared_data_dir();
  bench::BenchmarkArguments args(
      "usage: forecast_quality [--data DIR] [--quick] [--seeds N] [--transfer-seeds N] [--fractions F,...]\n"
      "       [--ks K,...] [--surrogates S,...] [--kernels K,...] [--no-interpolation] [--no-transfer] [--json FILE]\n"
      "       [--dump-forecasts DIR]\n");
  args.text("--data", a.data)
      .flag("--quick",
            [&a] {
              a.seeds = 2;
              a.fractions = {0.02, 0.10};
              a.ks = {0, 100};
              a.kernels = {"convolution_milo", "dedispersion_milo"};
            })
      .number("--seeds", a.seeds)
      .number("--transfer-seeds", a.transfer_seeds)
      .number_list("--fractions", a.fractions)
      .number_list("--ks", a.ks)
      .list("--surrogates", a.surrogates)
      .list("--kernels", a.kernels)
      .flag("--no-interpolation", [&a] { a.interpolation = false; })
      .flag("--no-transfer", [&a] { a.transfer = false; })
      .text("--json", a.json)
      .text("--dump-forecasts", a.dump);
  if (!args.parse(argc, argv)) std::exit(0);
  return a;
}

struct Cell {
  std::vector<EvaluationRun> runs;
};

using Clock = std::chrono::steady_clock;

// One JSON file per split: the true times and every model's median forecasts (ensemble members
// under their own names, a repeated kind as "xgboost#1"), so that blends can be studied offline
// without training anything again.
void dump_forecasts(const fs::path& dir, const EvaluationRun& proto, std::span<const double> truth,
                    const std::map<std::string, std::vector<Forecast>>& forecasts) {
  fs::create_directories(dir);
  nlohmann::json j;
  j["protocol"] = proto.protocol;
  j["target"] = proto.target;
  j["train_fraction"] = proto.train_fraction;
  j["target_samples"] = proto.target_samples;
  j["seed"] = proto.seed;
  j["truth"] = std::vector<double>(truth.begin(), truth.end());
  for (const auto& [name, f] : forecasts) {
    std::vector<double> median;
    for (const auto& x : f) median.push_back(x.median_ms);
    j["median"][name] = median;
  }
  std::string file = fmt::format("{}-{}-{}-{}-{}.json", proto.protocol, proto.target, proto.train_fraction,
                                 proto.target_samples, proto.seed);
  for (char& c : file)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  detail::write_text_file(dir / file, j.dump());
}

// Fits each requested surrogate on the split once and scores it; the ensemble from its members.
std::map<std::string, EvaluationRun> evaluate_all(const Args& a, const EvaluationSplit& split, EvaluationRun proto) {
  std::map<std::string, std::vector<Forecast>> forecasts;
  std::map<std::string, double> fit_s, predict_s;
  const auto candidates = split.test_candidates();
  const auto truth = split.test_times();
  auto forecast = [&](const std::string& name) -> const std::vector<Forecast>& {
    if (auto it = forecasts.find(name); it != forecasts.end()) return it->second;
    if (const auto recipe = ensemble_recipe(name)) {
      std::vector<std::vector<Forecast>> members;
      double f = 0, p = 0;
      const auto repeats = ensemble_member_repeats(recipe->members);
      for (std::size_t i = 0; i < recipe->members.size(); ++i) {
        // The first member of a kind shares the plain surrogate's seed and so its forecasts; a
        // repeated kind has a seed of its own, exactly as make_surrogate builds the ensemble.
        const std::string& kind = recipe->members[i];
        const std::string m = repeats[i] == 0 ? kind : fmt::format("{}#{}", kind, repeats[i]);
        members.push_back(forecasts.count(m) ? forecasts[m] : std::vector<Forecast>{});
        if (members.back().empty()) {
          auto model = make_surrogate(kind, ensemble_member_seed(proto.seed, repeats[i]));
          auto t0 = Clock::now();
          model.fit(split.train);
          fit_s[m] = std::chrono::duration<double>(Clock::now() - t0).count();
          t0 = Clock::now();
          forecasts[m] = model.predict(candidates);
          predict_s[m] = std::chrono::duration<double>(Clock::now() - t0).count();
          members.back() = forecasts[m];
        }
        f += fit_s[m];
        p += predict_s[m];
      }
      fit_s[name] = f;
      predict_s[name] = p;
      return forecasts[name] = combine_forecasts(members, recipe->weights);
    }
    auto model = make_surrogate(name, proto.seed);
    auto t0 = Clock::now();
    model.fit(split.train);
    fit_s[name] = std::chrono::duration<double>(Clock::now() - t0).count();
    t0 = Clock::now();
    auto f = model.predict(candidates);
    predict_s[name] = std::chrono::duration<double>(Clock::now() - t0).count();
    return forecasts[name] = std::move(f);
  };
  std::map<std::string, EvaluationRun> out;
  // Plain surrogates first so the ensemble reuses their forecasts.
  std::vector<std::string> order;
  for (const auto& s : a.surrogates)
    if (!ensemble_recipe(s)) order.push_back(s);
  for (const auto& s : a.surrogates)
    if (ensemble_recipe(s)) order.push_back(s);
  for (const auto& s : order) {
    EvaluationRun r = proto;
    r.surrogate = s;
    const auto& f = forecast(s);
    r.scores = score_forecasts(f, truth, proto.seed);
    r.fit_seconds = fit_s[s];
    r.predict_seconds = predict_s[s];
    r.train_count = split.train.size();
    r.test_count = split.test.size();
    out[s] = r;
  }
  if (!a.dump.empty()) dump_forecasts(a.dump, proto, truth, forecasts);
  return out;
}

nlohmann::json to_json(const gpuforecast::EvaluationRun& r) { return gpuforecast::detail::evaluation_run_json(r); }

void print_table(const std::string& title, const std::string& row_label, const std::vector<std::string>& rows,
                 const std::vector<std::string>& surrogates, const std::map<std::string, std::map<std::string, Cell>>& cells) {
  fmt::print("\n{}\n", title);
  fmt::print("{:<12}", row_label);
  for (const auto& s : surrogates) fmt::print(" | {:>22}", s + " rho / top1%");
  fmt::print("\n{:-<12}", "");
  for (std::size_t i = 0; i < surrogates.size(); ++i) fmt::print("-+-{:-<22}", "");
  fmt::print("\n");
  for (const auto& row : rows) {
    fmt::print("{:<12}", row);
    for (const auto& s : surrogates) {
      const auto& c = cells.at(row).at(s);
      const auto m = mean_run(c.runs);
      fmt::print(" | {:>13.3f} / {:>5.2f}", m.scores.spearman, m.scores.top1_recall);
    }
    fmt::print("\n");
  }
  fmt::print("{:<12}", "fit s/run");
  for (const auto& s : surrogates) {
    double t = 0;
    std::size_t n = 0;
    for (const auto& row : rows)
      for (const auto& r : cells.at(row).at(s).runs) {
        t += r.fit_seconds;
        ++n;
      }
    fmt::print(" | {:>22.2f}", n ? t / static_cast<double>(n) : 0.0);
  }
  fmt::print("\n");
}

}  // namespace

int main(int argc, char** argv) try {
  detail::ensure_passive_openmp_wait();
  const Args a = parse(argc, argv);
  std::vector<std::string> paths;
  for (const auto& k : a.kernels)
    for (const auto& d : a.devices) paths.push_back((a.data / "benchmark_hub" / "cachefiles" / k / (d + ".json.gz")).string());
  const auto t_load = Clock::now();
  const Dataset data = Dataset::load(paths);
  fmt::print("forecast_quality: {} spaces loaded in {:.1f} s; surrogates:", data.spaces().size(),
             std::chrono::duration<double>(Clock::now() - t_load).count());
  for (const auto& s : a.surrogates) fmt::print(" {}", s);
  fmt::print(" (default = {})\n", default_surrogate_name());
  nlohmann::json all = nlohmann::json::array();
  const auto t0 = Clock::now();

  if (a.interpolation) {
    std::map<std::string, std::map<std::string, Cell>> cells;
    std::vector<std::string> rows;
    for (double f : a.fractions) {
      const auto row = fmt::format("{:.0f}%", f * 100);
      rows.push_back(row);
      for (std::size_t seed = 0; seed < a.seeds; ++seed)
        for (const auto& space : data.spaces()) {
          EvaluationRun proto;
          proto.protocol = "interpolate";
          proto.target = space_label(space);
          proto.seed = seed;
          proto.train_fraction = f;
          for (auto& [name, run] : evaluate_all(a, interpolation_split(space, f, seed), proto)) {
            cells[row][name].runs.push_back(run);
            all.push_back(to_json(run));
          }
        }
      fmt::print("  interpolation {} done ({:.0f} s)\n", row, std::chrono::duration<double>(Clock::now() - t0).count());
      std::fflush(stdout);
    }
    print_table(fmt::format("Interpolation: mean over {} spaces x {} seeds (Spearman / top-1% recall in predicted top-5%)",
                            data.spaces().size(), a.seeds),
                "train", rows, a.surrogates, cells);
  }

  if (a.transfer) {
    std::map<std::string, std::map<std::string, Cell>> cells;
    std::vector<std::string> rows;
    for (std::size_t k : a.ks) {
      const auto row = fmt::format("K={}", k);
      rows.push_back(row);
      for (std::size_t seed = 0; seed < a.transfer_seeds; ++seed)
        for (const auto& target : data.spaces()) {
          std::vector<const SpaceData*> train;
          for (const auto& s : data.spaces())
            if (&s != &target && s.kernel == target.kernel) train.push_back(&s);
          EvaluationRun proto;
          proto.protocol = "transfer-device";
          proto.target = space_label(target);
          proto.seed = seed;
          proto.target_samples = k;
          for (auto& [name, run] : evaluate_all(a, transfer_split(train, target, k, seed), proto)) {
            cells[row][name].runs.push_back(run);
            all.push_back(to_json(run));
          }
        }
      fmt::print("  transfer {} done ({:.0f} s)\n", row, std::chrono::duration<double>(Clock::now() - t0).count());
      std::fflush(stdout);
    }
    print_table(fmt::format("Transfer to an unseen device: mean over {} held-out spaces x {} seeds, trained on the other "
                            "NVIDIA devices of the kernel + K target points",
                            data.spaces().size(), a.transfer_seeds),
                "target pts", rows, a.surrogates, cells);
  }
  fmt::print("\ntotal {:.0f} s\n", std::chrono::duration<double>(Clock::now() - t0).count());
  if (!a.json.empty()) {
    detail::write_text_file(a.json, all.dump(1) + "\n");
    fmt::print("runs written to {}\n", a.json);
  }
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "forecast_quality: error: {}\n", e.what());
  return 1;
}
