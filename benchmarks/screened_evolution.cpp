// Screened evolution on every shared space, leave one GPU out: the genetic search breeding
// --children children per place, ranked by a model trained on the kernel's other GPUs (learning
// online from its own measurements), with and without the certified screening rule, against the
// plain genetic search (every child measured, no model). The rule is calibrated by a rehearsal:
// the same screened evolution replayed on each of the kernel's other GPUs (with a model trained
// on neither the target nor the rehearsal GPU), every child its model forecast recorded with its
// stored time and the incumbent of that moment (docs/calibration.md).
// Per space and per kernel family: children considered per measurement, the share screened out,
// the realised miss rate (screened-out children that beat their round's incumbent / all children
// that did, by the stored times), the runs whose miss rate exceeded alpha against the allowance
// delta * runs + 2 binomial standard deviations, how the intervals of the measured children held,
// and the fraction of optimum at 25/50/100 per variant, ± standard error over the seeds.
//
// Each space's outcome is appended to --results (JSON Lines) as it finishes; a rerun with the
// same settings reads the finished spaces from it and runs only the rest.
//
//   screened_evolution [--data DIR] [--kernels k1,k2] [--devices d1,d2] [--seeds 20] [--first-seed 1]
//                      [--budget 100] [--children 16] [--mutation-rate 1] [--rehearsal-seeds 5]
//                      [--alpha 0.1] [--delta 0.1] [--views on|off] [--rehearsal all|vendor] [--pool-rehearsal] [--oracle]
//                      [--results FILE] [--threads N] [--json]
//
// --views on (the default): the model also holds one model per other GPU of the kernel, fitted on
// that GPU alone, and the search stacks them by its own measurements (compose/run_stacked_views.hpp),
// in the rehearsal as on the target; off: the model trained on the other GPUs together alone.
// --rehearsal vendor: the rehearsal runs on the kernel's other GPUs of the target's vendor only
// (all: every other GPU of the kernel, the default). --pool-rehearsal: the rehearsal GPUs' pairs
// certify one margin together, instead of each GPU its own and the widest ruling. --oracle: also the
// share an oracle margin screens out, set on the target's own children with their stored times
// (oracle_on): a bound on every calibration, not a rule.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/benchmark_arguments.hpp"
#include "common/mean_se.hpp"
#include "common/runs_over_alpha.hpp"
#include "common/shared_spaces.hpp"
#include "common/shared_data_dir.hpp"
#include "compose/model_impl.hpp"
#include "calibration/view_models.hpp"
#include "compose/search_model.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;
using json = nlohmann::json;

namespace {

struct Args {
  fs::path data = bench::shared_data_dir();
  std::vector<std::string> kernels, devices;
  std::size_t seeds = 20, first_seed = 1, budget = 100, children = 16, rehearsal_seeds = 5;
  double mutation_rate = 1.0, alpha = 0.1, delta = 0.1;
  std::string reference = "incumbent_forecast";  // screen_reference (the genetic strategy's default)
  bool views = true;
  bool rehearse_vendor_only = false;
  bool pool_rehearsal = false;
  bool oracle = false;
  std::string results;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool json = false;
};

Args parse(int argc, char** argv) {
  Args a;
  bench::BenchmarkArguments args(
      "usage: screened_evolution [--data DIR] [--kernels k1,k2] [--devices d1,d2] [--seeds 20] [--first-seed 1]\n"
      "                          [--budget 100] [--children 16] [--mutation-rate 1] [--rehearsal-seeds 5]\n"
      "                          [--alpha 0.1] [--delta 0.1] [--reference incumbent_forecast|incumbent_time]\n"
      "                          [--views on|off] [--rehearsal all|vendor] [--pool-rehearsal] [--oracle]\n"
      "                          [--results FILE] [--threads N] [--json]\n");
  args.text("--data", a.data)
      .list("--kernels", a.kernels)
      .list("--devices", a.devices)
      .number("--seeds", a.seeds)
      .number("--first-seed", a.first_seed)
      .number("--budget", a.budget)
      .number("--children", a.children)
      .number("--mutation-rate", a.mutation_rate)
      .number("--rehearsal-seeds", a.rehearsal_seeds)
      .number("--alpha", a.alpha)
      .number("--delta", a.delta)
      .text("--reference", a.reference)
      .option("--views",
              [&](const std::string& n, const std::string& v) {
                if (v != "on" && v != "off") throw invalid_argument_error(n + " takes on or off, got " + v);
                a.views = v == "on";
              })
      .option("--rehearsal",
              [&](const std::string& n, const std::string& v) {
                if (v != "all" && v != "vendor") throw invalid_argument_error(n + " takes all or vendor, got " + v);
                a.rehearse_vendor_only = v == "vendor";
              })
      .flag("--pool-rehearsal", [&] { a.pool_rehearsal = true; })
      .flag("--oracle", [&] { a.oracle = true; })
      .text("--results", a.results)
      .number("--threads", a.threads)
      .flag("--json", [&] { a.json = true; });
  if (!args.parse(argc, argv)) std::exit(0);  // --help was shown
  if (a.seeds < 2) throw invalid_argument_error("--seeds must be at least 2 (standard errors)");
  if (a.children < 2) throw invalid_argument_error("--children must be at least 2 (1 is the plain search)");
  if (a.rehearsal_seeds == 0) throw invalid_argument_error("--rehearsal-seeds must be at least 1");
  return a;
}

// The settings a stored outcome must match to be reused.
json settings_of(const Args& a) {
  return {{"seeds", a.seeds},          {"first_seed", a.first_seed}, {"budget", a.budget},
          {"children", a.children},    {"mutation_rate", a.mutation_rate},
          {"rehearsal_seeds", a.rehearsal_seeds}, {"alpha", a.alpha}, {"delta", a.delta}, {"reference", a.reference},
          {"views", a.views}, {"rehearsal", a.rehearse_vendor_only ? "vendor" : "all"},
          {"pool_rehearsal", a.pool_rehearsal}, {"oracle", a.oracle}};
}

struct Space {
  std::string kernel, device;
  fs::path file;
  std::shared_ptr<const SpaceData> data;
  std::optional<ViewModel> view;  // the default surrogate fitted on this GPU alone (--views on)
};

using bench::wanted;

// Every shared space of the kernels asked for. All GPUs of a kernel are loaded, whatever
// --devices says: they train and rehearse.
std::vector<Space> load_spaces(const Args& a) {
  std::vector<Space> spaces;
  for (const auto& f : bench::shared_space_files(a.data)) {
    if (!wanted(a.kernels, f.kernel)) continue;
    spaces.push_back({f.kernel, f.device, f.path, std::make_shared<const SpaceData>(load_replay_space(f.path.string())), {}});
  }
  if (spaces.empty()) throw error("no space matches --kernels");
  if (a.views)
    for (auto& s : spaces) {
      Dataset d;
      d.add(*s.data);
      const ViewModels fitted = fit_view_models(d, "default", 1);
      if (fitted.models.size() != 1) throw error(fmt::format("{}: expected one GPU in the file", s.file.string()));
      s.view = fitted.models.front();
    }
  return spaces;
}

// The views a model trained without `target` holds: every other GPU of the kernel, each on its own.
std::optional<ViewModels> views_without(const std::vector<Space>& spaces, const Space& target) {
  if (!target.view) return std::nullopt;
  ViewModels v;
  v.surrogate = "default";
  v.seed = 1;
  for (const auto& s : spaces)
    if (s.kernel == target.kernel && s.device != target.device) v.models.push_back(*s.view);
  std::sort(v.models.begin(), v.models.end(), [](const ViewModel& x, const ViewModel& y) { return x.device < y.device; });
  return v;
}

// The model a ranked or screened run starts from: the surrogate, with the views when given.
Model model_of(const AnySurrogate& surrogate, const std::optional<ViewModels>& views) {
  return views ? make_model(surrogate, std::nullopt, *views) : make_model(surrogate, std::nullopt);
}

// The default surrogate trained on the kernel's spaces other than those named.
AnySurrogate trained_without(const std::vector<Space>& spaces, const Space& target, const std::string& also_left_out) {
  // The spaces as read once (load_spaces), failed runs included, in file order.
  std::vector<Observation> rows;
  for (const auto& s : spaces)
    if (s.kernel == target.kernel && s.device != target.device && s.device != also_left_out)
      rows.insert(rows.end(), s.data->observations.begin(), s.data->observations.end());
  if (rows.empty()) throw error(fmt::format("{}: no other GPU of the kernel to train on", target.kernel));
  auto model = make_surrogate("default", 1);
  model.fit(rows);
  return model;
}

enum Variant { plain, ranked, screened, variants };
constexpr const char* variant_names[] = {"plain", "ranked", "screened"};

Plan genetic_plan(const Args& a, const Space& s, Variant v, std::size_t seeds, std::size_t first_seed,
                  const std::optional<Model>& pretrained) {
  Plan p;
  p.replay().data = s.data;
  p.strategy = "genetic";
  p.budget = a.budget;
  p.seeds = seeds;
  p.first_seed = first_seed;
  p.threads = 1;  // spaces run side by side instead
  if (v == plain) return p;
  // The rehearsal's runs record what the screened run sets forecasts against.
  p.settings.options = {{"children_per_measurement", std::to_string(a.children)},
                        {"mutation_rate", fmt::format("{}", a.mutation_rate)},
                        {"screen_reference", a.reference}};
  p.settings.model_factory = [pretrained] {
    return make_search_model({.pretrained = pretrained, .online_surrogate = "default", .seed = 1});
  };
  if (v == screened) {
    p.settings.options["screen"] = "true";
    p.settings.options["screen_alpha"] = fmt::format("{}", a.alpha);
    p.settings.options["screen_delta"] = fmt::format("{}", a.delta);
  }
  return p;
}

// The rehearsal of `target`'s screened evolution: ranked evolution on each other GPU of the
// kernel, with a model that saw neither GPU, every forecast child recorded.
std::shared_ptr<const std::vector<std::vector<ScreeningPair>>> rehearsal_for(const Args& a,
                                                                             const std::vector<Space>& spaces,
                                                                             const Space& target) {
  auto groups = std::make_shared<std::vector<std::vector<ScreeningPair>>>();
  for (const auto& s : spaces) {
    if (s.kernel != target.kernel || s.device == target.device) continue;
    if (a.rehearse_vendor_only && s.data->device->vendor != target.data->device->vendor) continue;
    // The views left out the target only: the run on s stacks s's other GPUs (RunStackedViews
    // leaves out the GPU it runs on), as the target's run stacks its own.
    const Model model = model_of(trained_without(spaces, target, s.device), views_without(spaces, target));
    Plan p = genetic_plan(a, s, ranked, a.rehearsal_seeds, 1000 + a.first_seed, model);
    p.rehearsal = true;
    auto& pairs = groups->emplace_back();
    for (const auto& r : run(p).runs) pairs.insert(pairs.end(), r.rehearsal.begin(), r.rehearsal.end());
  }
  if (a.pool_rehearsal && groups->size() > 1) {
    for (std::size_t g = 1; g < groups->size(); ++g)
      groups->front().insert(groups->front().end(), (*groups)[g].begin(), (*groups)[g].end());
    groups->resize(1);
  }
  return groups;
}

// One variant's stored outcome: per-seed fractions of optimum at the budgets, and the screening.
json outcome_of(const Result& r, const std::vector<std::size_t>& budgets) {
  json j;
  for (const auto b : budgets) {
    std::vector<double> at;
    for (const auto& run : r.runs) at.push_back(run.curve.empty() ? 0.0 : run.curve[std::min(b, run.curve.size()) - 1]);
    j["fraction_of_optimum"][std::to_string(b)] = at;
  }
  std::vector<double> miss;
  std::size_t considered = 0, skipped = 0, measured = 0, checked = 0, interval_misses = 0;
  for (const auto& run : r.runs) {
    considered += run.screening.considered;
    skipped += run.screening.skipped;
    measured += run.trace.size();
    checked += run.interval_checked;
    interval_misses += run.interval_misses;
    miss.push_back(run.screening.miss_rate());
  }
  j["considered"] = considered;
  j["screened_out"] = skipped;
  j["measured"] = measured;
  j["interval_checked"] = checked;
  j["interval_misses"] = interval_misses;
  j["miss_rate_per_run"] = miss;
  return j;
}

// What no calibration from elsewhere can beat: ranked evolution on the target itself with every
// child's stored time, and the one margin, set on those very children, that skips all but alpha of
// their improvements (no slack for a finite sample). The share of children it screens out bounds
// what any rule holding the miss rate at alpha could screen out with this model and these children.
json oracle_on(const Args& a, const Space& target, const Model& model) {
  Plan p = genetic_plan(a, target, ranked, a.seeds, a.first_seed, model);
  p.rehearsal = true;
  std::vector<double> scores, improvements;
  for (const auto& r : run(p).runs)
    for (const auto& q : r.rehearsal) {
      const double reference = a.reference == "incumbent_forecast" ? q.incumbent_forecast_ms : q.incumbent_ms;
      const double score = std::log(q.forecast_ms / reference);
      scores.push_back(score);
      if (is_improvement(q)) improvements.push_back(score);
    }
  std::size_t out = 0, missed = 0;
  if (!improvements.empty()) {
    std::sort(improvements.begin(), improvements.end());
    const auto allowed = static_cast<std::size_t>(std::floor(a.alpha * static_cast<double>(improvements.size())));
    const double margin = improvements[improvements.size() - 1 - allowed];
    for (const double x : scores) out += x > margin ? 1 : 0;
    for (const double x : improvements) missed += x > margin ? 1 : 0;
  }
  return {{"considered", scores.size()}, {"screened_out", out}, {"improvements", improvements.size()}, {"missed", missed}};
}

json run_space(const Args& a, const std::vector<Space>& spaces, const Space& target,
               const std::vector<std::size_t>& budgets) {
  json j{{"kernel", target.kernel}, {"device", target.device}, {"settings", settings_of(a)}};
  j["plain"] = outcome_of(run(genetic_plan(a, target, plain, a.seeds, a.first_seed, std::nullopt)), budgets);
  const Model model = model_of(trained_without(spaces, target, ""), views_without(spaces, target));
  j["ranked"] = outcome_of(run(genetic_plan(a, target, ranked, a.seeds, a.first_seed, model)), budgets);
  if (a.oracle) j["oracle"] = oracle_on(a, target, model);
  const auto rehearsal = rehearsal_for(a, spaces, target);
  Plan p = genetic_plan(a, target, screened, a.seeds, a.first_seed, model);
  p.settings.screening_rehearsal = rehearsal;
  j["screened"] = outcome_of(run(p), budgets);
  std::size_t pairs = 0, improvements = 0;
  for (const auto& g : *rehearsal)
    for (const auto& q : g) ++pairs, improvements += is_improvement(q) ? 1 : 0;
  j["rehearsal_pairs"] = pairs;
  j["rehearsal_improvements"] = improvements;
  return j;
}

// Outcomes already in the results file for these settings, by "kernel/device".
std::map<std::string, json> stored_outcomes(const Args& a) {
  std::map<std::string, json> stored;
  if (a.results.empty() || !fs::exists(a.results)) return stored;
  std::ifstream in(a.results);
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      throw input_error(a.results, fmt::format("line {}", n), e.what());
    }
    if (j.value("settings", json()) != settings_of(a)) continue;
    const std::string key = j.at("kernel").get<std::string>() + "/" + j.at("device").get<std::string>();
    stored[key] = std::move(j);
  }
  return stored;
}

struct Tallies {
  double considered = 0, skipped = 0, measured = 0, interval_checked = 0, interval_misses = 0;
  std::size_t runs = 0, over_alpha = 0;
  std::vector<double> miss;
  void add(const json& v, double alpha) {
    considered += v["considered"].get<double>();
    skipped += v["screened_out"].get<double>();
    measured += v["measured"].get<double>();
    interval_checked += v["interval_checked"].get<double>();
    interval_misses += v["interval_misses"].get<double>();
    for (const double m : v["miss_rate_per_run"].get<std::vector<double>>()) {
      miss.push_back(m);
      ++runs;
      over_alpha += m > alpha ? 1 : 0;
    }
  }
  [[nodiscard]] std::string text(std::size_t allowed) const {
    return fmt::format("{:>8.1f} {:>8.0f}% {:>7.3f} {:>4}/{:<4}({:>3}) {:>7.1f}%", measured > 0 ? considered / measured : 0.0,
                       considered > 0 ? 100 * skipped / considered : 0.0, bench::mean_se(miss).mean, over_alpha, runs,
                       allowed, interval_checked > 0 ? 100 * interval_misses / interval_checked : 0.0);
  }
};

// Per seed, the mean over the spaces of the fraction of optimum at budget b: the family's curve.
std::vector<double> family_per_seed(const std::vector<const json*>& members, const char* variant, std::size_t b) {
  std::vector<double> per_seed;
  for (const json* m : members) {
    const auto at = (*m)[variant]["fraction_of_optimum"][std::to_string(b)].get<std::vector<double>>();
    per_seed.resize(at.size(), 0.0);
    for (std::size_t i = 0; i < at.size(); ++i) per_seed[i] += at[i] / static_cast<double>(members.size());
  }
  return per_seed;
}

// ahead: screened leads by more than two standard errors of the difference; behind: trails by
// more than one; level otherwise.
std::string verdict(const bench::MeanSe& s, const bench::MeanSe& p) {
  const double se = std::hypot(s.se, p.se);
  return s.mean - p.mean > 2 * se ? "ahead" : p.mean - s.mean > se ? "BEHIND" : "level";
}

// "  oracle out NN%" over the spaces' children pooled, "" without --oracle.
std::string oracle_text(const std::vector<const json*>& members) {
  double considered = 0, out = 0;
  for (const json* m : members) {
    if (!m->contains("oracle")) return "";
    considered += (*m)["oracle"]["considered"].get<double>();
    out += (*m)["oracle"]["screened_out"].get<double>();
  }
  return fmt::format("  oracle out {:.0f}%", considered > 0 ? 100 * out / considered : 0.0);
}

void print_table(const Args& a, const std::vector<json>& outcomes, const std::vector<std::size_t>& budgets) {
  const std::size_t allowed = bench::allowed_violations(a.seeds, a.delta);
  fmt::print("screened evolution, leave one GPU out: genetic search, {} children per place (mutation rate {}), "
             "model trained on the kernel's other GPUs{}; rule alpha {} delta {} calibrated by a rehearsal on the other "
             "GPUs{} ({} seeds each){}; seeds {}-{}, budget {}\n",
             a.children, a.mutation_rate, a.views ? " with their views stacked by the run" : "", a.alpha, a.delta,
             a.rehearse_vendor_only ? " of the target's vendor" : "", a.rehearsal_seeds,
             a.pool_rehearsal ? ", pooled into one margin" : ", the widest of their margins", a.first_seed,
             a.first_seed + a.seeds - 1, a.budget);
  fmt::print("c/m: children considered per measurement; out: screened out; miss: realised miss rate, mean over runs; "
             "over a: runs whose miss exceeded alpha (allowed: delta * runs + 2 binomial sd); int miss: measured "
             "children outside their interval\n\n");
  fmt::print("{:<30} {:>8} {:>9} {:>7} {:>15} {:>8}   fraction of optimum at {}: plain / ranked / screened\n", "space",
             "c/m", "out", "miss", "over a", "int miss", fmt::join(budgets, ", "));
  std::map<std::string, std::vector<const json*>> families;
  for (const auto& o : outcomes) families[o["kernel"].get<std::string>()].push_back(&o);
  for (const auto& [kernel, members] : families) {
    Tallies family;
    for (const json* m : members) {
      Tallies t;
      t.add((*m)["screened"], a.alpha);
      family.add((*m)["screened"], a.alpha);
      std::string quality;
      for (const auto b : budgets) {
        std::string cell;
        for (const char* v : variant_names)
          cell += fmt::format("{}{:.3f}", cell.empty() ? "" : "/",
                              bench::mean_se((*m)[v]["fraction_of_optimum"][std::to_string(b)].get<std::vector<double>>()).mean);
        quality += "  " + cell;
      }
      fmt::print("{:<30} {}  {}{}\n", kernel + "/" + (*m)["device"].get<std::string>(), t.text(allowed), quality,
                 oracle_text({m}));
    }
    std::string quality;
    for (const auto b : budgets) {
      const auto p = bench::mean_se(family_per_seed(members, "plain", b));
      const auto s = bench::mean_se(family_per_seed(members, "screened", b));
      quality += fmt::format("  {}: {:.3f}±{:.3f} vs {:.3f}±{:.3f} {}", b, s.mean, s.se, p.mean, p.se, verdict(s, p));
    }
    fmt::print("{:<30} {}  screened vs plain{}{}\n\n", kernel + " (family)",
               family.text(bench::allowed_violations(family.runs, a.delta)), quality, oracle_text(members));
  }
}

std::vector<json> outcomes_in_order(const std::vector<Space>& spaces, const Args& a, std::map<std::string, json>& done) {
  std::vector<json> out;
  for (const auto& s : spaces)
    if (wanted(a.devices, s.device))
      if (const auto it = done.find(s.kernel + "/" + s.device); it != done.end()) out.push_back(it->second);
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  const auto spaces = load_spaces(a);
  std::vector<std::size_t> budgets;
  for (const std::size_t b : {25, 50, 100, 200})
    if (b <= a.budget) budgets.push_back(b);
  auto done = stored_outcomes(a);
  std::vector<const Space*> todo;
  for (const auto& s : spaces)
    if (wanted(a.devices, s.device) && !done.count(s.kernel + "/" + s.device)) todo.push_back(&s);
  fmt::print(stderr, "{} spaces stored, {} to run\n", done.size(), todo.size());
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::string first_error;
  const auto worker = [&] {
    for (std::size_t i = next++; i < todo.size(); i = next++) {
      const Space& s = *todo[i];
      try {
        json j = run_space(a, spaces, s, budgets);
        std::lock_guard lock(mutex);
        if (!a.results.empty()) std::ofstream(a.results, std::ios::app) << j.dump() << "\n";
        done[s.kernel + "/" + s.device] = std::move(j);
        fmt::print(stderr, "  {}/{} done\n", s.kernel, s.device);
      } catch (const std::exception& ex) {
        std::lock_guard lock(mutex);
        if (first_error.empty()) first_error = fmt::format("{}/{}: {}", s.kernel, s.device, ex.what());
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<unsigned>(a.threads, static_cast<unsigned>(todo.size())); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (!first_error.empty()) throw error(first_error);
  const auto outcomes = outcomes_in_order(spaces, a, done);
  if (a.json) fmt::print("{}\n", json{{"settings", settings_of(a)}, {"spaces", outcomes}}.dump(2));
  else print_table(a, outcomes, budgets);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "screened_evolution: {}\n", e.what());
  return 1;
}
