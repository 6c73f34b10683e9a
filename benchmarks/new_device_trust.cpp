// Trust on a new GPU, leave one GPU out over the shared spaces: each space in turn is the new GPU
// (its kernel measured on a GPU the model never saw), forecast by the default forecaster trained
// on the kernel's other GPUs. K random measurements of it adapt, and every other configuration
// of it is decided and judged. Two calibrations (three with views), per split, K, loss and seed:
//
//   cross-device  the rule rehearsed on the other GPUs (rehearse_new_device): every space whose GPU
//                 is not the held-out one plays the new GPU, forecast by a model that saw neither
//                 its GPU nor the held-out one, adapted from K of its own measurements exactly as
//                 the new GPU is; the new GPU's K points only correct its forecasts.
//   own K         adapt_to_device: a share of the K points fits the correction, the rest certify
//                 (the model's single forecasts).
//   own K, views  the same with the views: the share that fits the correction stacks them first
//                 (`calibrate --device-samples` on a model with views).
//
// --views: one forecast per configuration and GPU the model was trained on (view_stacking.hpp),
// stacked by each GPU's K measurements: `per-device` (the default, as `calibrate --rehearse` stores
// them), one model per GPU; `joint`, the model trained on those GPUs together forecasting as each
// of them; `none`, the one model's single forecasts (and no `own K, views`); `measured`, the
// per-device views with each median moved to the time its GPU measured: a yardstick, not a method.
//
// Reported: the share of the held-out GPU's other configurations answered without measuring, the
// realised risk among them, and the runs whose own risk exceeded alpha (against delta * runs
// plus two binomial standard deviations). Losses: relative_error (|t_hat - t| / t > 10%,
// confidence = interval width) and wrong_bin (half-octave speedup bin against the fastest of the
// K points, confidence = top-bin probability; needs K >= 3).
//
//   new_device_trust [--data DIR] [--kernels k1,k2] [--devices d1,d2] [--k 0,20,50] [--seeds 20]
//                    [--rehearsal vendor|all] [--views none|joint|per-device|measured] [--out FILE.jsonl] [--json]
//
// The check's limit is the one the rehearsal GPUs answer the most under (CrossDeviceOptions::
// choose_check); --check-max-loss L fixes it.
//
// --out keeps one line per finished split; a rerun with the same file skips the splits it holds
// and prints the table over all of them.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "calibration/cross_device_calibration.hpp"
#include "common/benchmark_arguments.hpp"
#include "common/mean_se.hpp"
#include "common/runs_over_alpha.hpp"
#include "common/shared_data_dir.hpp"
#include "common/shared_spaces.hpp"
#include "calibration/device_adaptation.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;
using nlohmann::json;

namespace {

struct Args {
  fs::path data = bench::shared_data_dir();
  std::vector<std::string> kernels, devices;  // held-out spaces; empty: all
  std::vector<std::size_t> ks = {0, 20, 50};
  std::vector<std::string> losses = {"relative_error", "wrong_bin"};
  std::size_t seeds = 20;
  std::string surrogate = "default";
  std::string rehearsal = "vendor";  // rehearsal GPUs: the held-out GPU's vendor, or all
  std::string views = "per-device";  // none, joint or per-device
  double adapt_fraction = 0.3, alpha = 0.1, delta = 0.1;
  CrossDeviceOptions cross;
  fs::path out;
  bool json = false;
  bool explain = false;  // print the first seed's rehearsal: each GPU's first failure, each step
};

Args parse(int argc, char** argv) {
  Args a;
  bench::BenchmarkArguments args(
      "usage: new_device_trust [--data DIR] [--kernels k1,k2] [--devices d1,d2] [--k 0,20,50] [--seeds 20]\n"
      "                        [--losses relative_error,wrong_bin] [--surrogate default] [--rehearsal vendor|all]\n"
      "                        [--views none|joint|per-device|measured] [--steps 20] [--start-fraction 0.05] [--check-max-loss L] [--adapt-fraction 0.3]\n"
      "                        [--alpha 0.1] [--delta 0.1] [--out FILE.jsonl] [--json] [--explain]\n");
  args.text("--data", a.data)
      .list("--kernels", a.kernels)
      .list("--devices", a.devices)
      .number_list("--k", a.ks)
      .list("--losses", a.losses)
      .number("--seeds", a.seeds)
      .text("--surrogate", a.surrogate)
      .text("--rehearsal", a.rehearsal)
      .text("--views", a.views)
      .number("--steps", a.cross.steps)
      .number("--start-fraction", a.cross.start_fraction)
      .option("--check-max-loss",
              [&](const std::string& n, const std::string& v) {
                a.cross.check_max_loss = detail::parse_number<double>(n, v);
                a.cross.choose_check = false;
              })
      .number("--adapt-fraction", a.adapt_fraction)
      .number("--alpha", a.alpha)
      .number("--delta", a.delta)
      .text("--out", a.out)
      .flag("--json", [&] { a.json = true; })
      .flag("--explain", [&] { a.explain = true; });
  if (!args.parse(argc, argv)) std::exit(0);
  if (a.seeds == 0) throw invalid_argument_error("--seeds must be at least 1");
  if (a.rehearsal != "vendor" && a.rehearsal != "all")
    throw invalid_argument_error(fmt::format("--rehearsal is vendor or all, got {}", a.rehearsal));
  if (a.views != "none" && a.views != "joint" && a.views != "per-device" && a.views != "measured")
    throw invalid_argument_error(fmt::format("--views is none, joint, per-device or measured, got {}", a.views));
  for (const auto& l : a.losses) (void)parse_deferral_loss(l);
  return a;
}

struct Space {
  std::string kernel, device, vendor;
  std::vector<Observation> observations;  // for training
  std::vector<Candidate> candidates;      // successful runs
  std::vector<double> times;
  std::unordered_map<std::string, double> time_of;  // by configuration key; filled for --views measured only
};

std::vector<Space> load_spaces(const Args& a) {
  std::vector<Space> spaces;
  for (const auto& f : bench::shared_space_files(a.data)) {
    const std::vector<std::string> one{f.path.string()};
    const Dataset d = Dataset::load(one);
    Space s{f.kernel, f.device, d.spaces().front().device->vendor, d.observations(true), {}, {}};
    auto runs = successful_runs(s.observations);
    s.candidates = std::move(runs.candidates);
    s.times = std::move(runs.median_ms);
    if (a.views == "measured")
      for (std::size_t i = 0; i < s.candidates.size(); ++i) s.time_of.emplace(s.candidates[i].config.key(), s.times[i]);
    spaces.push_back(std::move(s));
  }
  return spaces;
}

// Forecasts of a space by a model trained on its kernel's other spaces of the same vendor (AMD
// and NVIDIA rank these kernels differently: datasets README), leaving out the given GPUs; each
// distinct training set is fitted once.
class ForecastMemo {
 public:
  ForecastMemo(const Args& a, const std::vector<Space>& spaces) : m_args(a), m_spaces(spaces) {}

  const std::vector<Forecast>& of(std::size_t space, const std::set<std::string>& left_out) {
    const Space& s = m_spaces[space];
    const std::vector<std::size_t> sources = training_spaces(space, left_out);
    AnySurrogate& model = fitted(sources);
    const std::string key = model_key(sources) + "->" + s.device;
    auto f = m_forecasts.find(key);
    if (f == m_forecasts.end()) f = m_forecasts.emplace(key, model.predict(s.candidates)).first;
    return f->second;
  }

  // One forecast per training GPU of the space's kernel (not left out) for each configuration:
  // `joint` by the model of them all forecasting as each GPU, `per-device` by each GPU's own model.
  const std::vector<ViewForecasts>& views_of(std::size_t space, const std::set<std::string>& left_out) {
    const Space& s = m_spaces[space];
    const std::vector<std::size_t> sources = training_spaces(space, left_out);
    const std::string key = m_args.views + ":" + model_key(sources) + "->" + s.device;
    auto found = m_views.find(key);
    if (found != m_views.end()) return found->second;
    std::vector<ViewForecasts> views(s.candidates.size());
    for (const std::size_t o : sources) {
      std::vector<Candidate> as_there = s.candidates;
      for (auto& c : as_there) c.device = m_spaces[o].candidates.front().device;
      AnySurrogate& model = m_args.views == "joint" ? fitted(sources) : fitted({o});
      std::vector<Forecast> f = model.predict(as_there);
      if (m_args.views == "measured") move_to_measured(f, s, m_spaces[o]);
      for (std::size_t i = 0; i < f.size(); ++i) views[i].push_back(f[i]);
    }
    return m_views.emplace(key, std::move(views)).first->second;
  }
  [[nodiscard]] std::size_t fits() const { return m_fits; }
  // --views measured: view forecasts made, and those moved to a measured time.
  [[nodiscard]] std::pair<std::size_t, std::size_t> moved_to_measured() const { return {m_moved, m_view_forecasts}; }

 private:
  // --views measured: each view's median moved to the time measured on its GPU (the quantiles
  // with it, the spread kept), where that GPU ran the configuration: the views a perfect model of
  // each GPU would give, a yardstick for what better view models could buy.
  void move_to_measured(std::vector<Forecast>& f, const Space& s, const Space& there) {
    m_view_forecasts += f.size();
    for (std::size_t i = 0; i < f.size(); ++i) {
      const auto t = there.time_of.find(s.candidates[i].config.key());
      if (t == there.time_of.end() || !(f[i].median_ms > 0)) continue;
      ++m_moved;
      const double r = t->second / f[i].median_ms;
      f[i].median_ms *= r;
      f[i].lower_ms *= r;
      f[i].upper_ms *= r;
    }
  }

  // The kernel's other spaces of the same vendor (AMD and NVIDIA rank these kernels differently:
  // datasets README), leaving out the given GPUs.
  std::vector<std::size_t> training_spaces(std::size_t space, const std::set<std::string>& left_out) const {
    const Space& s = m_spaces[space];
    std::vector<std::size_t> sources;
    for (std::size_t o = 0; o < m_spaces.size(); ++o)
      if (m_spaces[o].kernel == s.kernel && m_spaces[o].vendor == s.vendor && !left_out.count(m_spaces[o].device))
        sources.push_back(o);
    if (sources.empty())
      throw invalid_argument_error(fmt::format("{} / {}: no other {} GPU to train on", s.kernel, s.device, s.vendor));
    return sources;
  }
  std::string model_key(const std::vector<std::size_t>& sources) const {
    std::string key = m_spaces[sources.front()].kernel;
    for (const std::size_t o : sources) key += "|" + m_spaces[o].device;
    return key;
  }
  // Each distinct training set is fitted once.
  AnySurrogate& fitted(const std::vector<std::size_t>& sources) {
    const std::string key = model_key(sources);
    auto model = m_models.find(key);
    if (model == m_models.end()) {
      std::vector<Observation> train;
      for (const std::size_t o : sources)
        train.insert(train.end(), m_spaces[o].observations.begin(), m_spaces[o].observations.end());
      AnySurrogate m = make_surrogate(m_args.surrogate, 1);
      m.fit(train);
      model = m_models.emplace(key, std::move(m)).first;
      ++m_fits;
    }
    return model->second;
  }

  const Args& m_args;
  const std::vector<Space>& m_spaces;
  std::map<std::string, AnySurrogate> m_models;
  std::map<std::string, std::vector<Forecast>> m_forecasts;
  std::map<std::string, std::vector<ViewForecasts>> m_views;
  std::size_t m_fits = 0;
  std::size_t m_moved = 0, m_view_forecasts = 0;
};

struct Cell {  // one (split, K, loss, calibration) over seeds
  std::vector<double> shares, risks;  // per seed
  std::size_t answered = 0, losses = 0, over_alpha = 0;
  void add(std::size_t a, std::size_t l, std::size_t judged, double alpha) {
    shares.push_back(static_cast<double>(a) / static_cast<double>(judged));
    risks.push_back(a ? static_cast<double>(l) / static_cast<double>(a) : 0.0);
    answered += a;
    losses += l;
    over_alpha += a && static_cast<double>(l) > alpha * static_cast<double>(a);
  }
  [[nodiscard]] json to_json() const {
    const auto m = bench::mean_se(shares);
    return {{"runs", shares.size()}, {"answered_share", m.mean}, {"answered_share_se", m.se}, {"answered", answered},
            {"losses", losses},      {"runs_over_alpha", over_alpha},
            {"risk", answered ? static_cast<double>(losses) / static_cast<double>(answered) : 0.0},
            {"answered_share_per_seed", shares}, {"risk_per_seed", risks}};
  }
};

CalibrationOptions calibration_options(const Args& a, DeferralLoss loss, std::uint64_t seed) {
  CalibrationOptions o;
  o.alpha = a.alpha;
  o.risk_alpha = a.alpha;
  o.delta = a.delta;
  o.loss = loss;
  o.confidence = loss == DeferralLoss::wrong_bin ? ConfidenceScore::top_bin_probability : ConfidenceScore::interval_width;
  o.seed = seed;
  return o;
}

// The held-out GPU's K points of one seed, and the rest to judge.
struct Draw {
  std::vector<Candidate> kc;
  std::vector<Forecast> kf;
  std::vector<ViewForecasts> kv;  // with --views
  std::vector<double> kt;
  std::vector<std::size_t> rest;
};

Draw draw(const Space& s, const std::vector<Forecast>& f, const std::vector<ViewForecasts>* views, std::size_t k,
          std::uint64_t seed) {
  std::vector<std::size_t> order(s.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 7919 + k);
  std::shuffle(order.begin(), order.end(), rng);
  Draw d;
  for (std::size_t i = 0; i < k; ++i) {
    d.kc.push_back(s.candidates[order[i]]);
    d.kf.push_back(f[order[i]]);
    if (views) d.kv.push_back((*views)[order[i]]);
    d.kt.push_back(s.times[order[i]]);
  }
  d.rest.assign(order.begin() + static_cast<std::ptrdiff_t>(k), order.end());
  return d;
}

void judge(const SelectiveCalibrator& cal, const Space& s, const std::vector<Forecast>& f, const Draw& d, double alpha,
           Cell& cell) {
  std::size_t answered = 0, losses = 0;
  const CalibrationOptions& used = cal.options();
  const auto ref = used.reference_ms > 0 ? std::optional(used.reference_ms) : std::nullopt;
  for (const std::size_t i : d.rest) {
    const Decision dec = cal.decide(s.candidates[i], f[i]);
    if (dec.defer) continue;
    ++answered;
    losses += deferral_loss(used, dec.forecast, s.times[i], ref) > 0.5;
  }
  cell.add(answered, losses, d.rest.size(), alpha);
}

void explain(const CrossDeviceRule& rule) {
  fmt::print("    {}\n     steps (share answered: GPUs failed):", rule.describe());
  for (const auto& s : rule.steps) fmt::print(" {:.2f}:{}{}", s.share, s.failed, s.certified ? "*" : "");
  fmt::print("\n     risk per GPU at shares {:.2f} / {:.2f} / {:.2f}:\n", rule.steps.front().share,
             rule.steps[rule.steps.size() / 2].share, rule.steps.back().share);
  for (const auto& o : rule.outcomes)
    fmt::print("       {:<30} {:.3f} / {:.3f} / {:.3f}  (check: {:.2f} of K lost)\n", o.name, o.risks.front(),
               o.risks[o.risks.size() / 2], o.risks.back(), o.check_loss);
}

// One held-out space: both calibrations for every loss, K and seed; one JSON row per (loss, K).
std::vector<json> run_split(const Args& a, const std::vector<Space>& spaces, std::size_t target, ForecastMemo& memo) {
  const Space& t = spaces[target];
  const auto& tf = memo.of(target, {t.device});
  const bool views = a.views != "none";
  const std::vector<ViewForecasts>* tv = views ? &memo.views_of(target, {t.device}) : nullptr;
  std::vector<std::size_t> units;
  for (std::size_t u = 0; u < spaces.size(); ++u)
    if (spaces[u].device != t.device && (a.rehearsal == "all" || spaces[u].vendor == t.vendor)) units.push_back(u);
  std::vector<RehearsalDevice> rehearsal;
  for (const std::size_t u : units) {
    RehearsalDevice d{spaces[u].kernel + "/" + spaces[u].device, spaces[u].candidates, {}, spaces[u].times, {}};
    if (views)
      d.views = memo.views_of(u, {spaces[u].device, t.device});
    else
      d.forecasts = memo.of(u, {spaces[u].device, t.device});
    rehearsal.push_back(std::move(d));
  }
  std::vector<json> rows;
  for (const auto& loss_name : a.losses) {
    const DeferralLoss loss = parse_deferral_loss(loss_name);
    for (const std::size_t k : a.ks) {
      // K = 0: no measured reference for wrong_bin, nothing to stack views with.
      if (k == 0 && (loss == DeferralLoss::wrong_bin || views)) continue;
      Cell cross, own, own_views;
      for (std::size_t seed = 1; seed <= a.seeds; ++seed) {
        const Draw d = draw(t, tf, tv, k, seed);
        CrossDeviceOptions co = a.cross;
        co.samples = k;
        co.calibration = calibration_options(a, loss, seed);
        const CrossDeviceRule rule = rehearse_new_device(rehearsal, co);
        if (a.explain && seed == 1) explain(rule);
        const std::string& device = t.candidates.front().device->name;
        if (views) {
          const auto adapted = adapt_with_rule(rule, device, d.kc, d.kv, d.kt, t.candidates, *tv);
          judge(adapted.calibrator, t, adapted.stacking->apply(*tv), d, a.alpha, cross);
        } else {
          judge(adapt_with_rule(rule, device, d.kc, d.kf, d.kt, t.candidates, tf).calibrator, t, tf, d, a.alpha, cross);
        }
        if (k >= 10) {
          DeviceAdaptationOptions o;
          o.adapt_fraction = a.adapt_fraction;
          o.calibration = calibration_options(a, loss, seed);
          judge(adapt_to_device(t.candidates.front().device->name, d.kc, d.kf, d.kt, o), t, tf, d, a.alpha, own);
          if (views) {
            const auto adapted = adapt_to_device(t.candidates.front().device->name, d.kc, d.kv, d.kt, o);
            judge(adapted.calibrator, t, adapted.stacking.apply(*tv), d, a.alpha, own_views);
          }
        }
      }
      rows.push_back({{"kernel", t.kernel},
                      {"device", t.device},
                      {"loss", loss_name},
                      {"k", k},
                      {"rehearsal_gpus", units.size()},
                      {"views", a.views},
                      {"cross_device", cross.to_json()},
                      {"own_k", own.to_json()}});
      if (views) rows.back()["own_k_views"] = own_views.to_json();
    }
  }
  return rows;
}

void print_row(const json& r) {
  auto cell = [](const json& c) {
    if (c["runs"].get<std::size_t>() == 0) return std::string("          -");
    return fmt::format("{:5.1f}% +- {:4.1f}, risk {:.3f}, >alpha {:2}", 100 * c["answered_share"].get<double>(),
                       100 * c["answered_share_se"].get<double>(), c["risk"].get<double>(),
                       c["runs_over_alpha"].get<std::size_t>());
  };
  fmt::print("  {:<15} K={:<3} cross-device ({:2} GPUs): {}   own K: {}{}\n", r["loss"].get<std::string>(),
             r["k"].get<std::size_t>(), r["rehearsal_gpus"].get<std::size_t>(), cell(r["cross_device"]),
             cell(r["own_k"]), r.contains("own_k_views") ? "   own K, views: " + cell(r["own_k_views"]) : std::string());
}

// Per loss and K over the splits: the median split's answered share and the runs over alpha.
json summarise(const Args& a, const std::vector<json>& rows) {
  json table = json::array();
  for (const auto& loss : a.losses)
    for (const std::size_t k : a.ks)
      for (const char* which : {"cross_device", "own_k", "own_k_views"}) {
        std::vector<double> shares;
        std::size_t runs = 0, over = 0;
        for (const auto& r : rows)
          if (r["loss"] == loss && r["k"] == k && r.contains(which) && r[which]["runs"].get<std::size_t>() > 0) {
            shares.push_back(r[which]["answered_share"].get<double>());
            runs += r[which]["runs"].get<std::size_t>();
            over += r[which]["runs_over_alpha"].get<std::size_t>();
          }
        if (shares.empty()) continue;
        std::sort(shares.begin(), shares.end());
        const std::size_t n = shares.size();
        const double median = n % 2 ? shares[n / 2] : (shares[n / 2 - 1] + shares[n / 2]) / 2;
        table.push_back({{"loss", loss}, {"k", k}, {"calibration", which}, {"splits", n}, {"median_answered", median},
                         {"runs", runs}, {"runs_over_alpha", over}, {"allowed", bench::allowed_violations(runs, a.delta)}});
      }
  return table;
}

std::vector<json> read_finished(const fs::path& out) {
  std::vector<json> rows;
  if (out.empty() || !fs::exists(out)) return rows;
  std::ifstream in(out);
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    try {
      rows.push_back(json::parse(line));
    } catch (const json::exception& e) {
      throw invalid_argument_error(fmt::format("{}:{}: not a JSON row ({})", out.string(), n, e.what()));
    }
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  const std::vector<Space> spaces = load_spaces(a);
  ForecastMemo memo(a, spaces);
  std::vector<json> rows = read_finished(a.out);
  std::ofstream out;
  if (!a.out.empty()) out.open(a.out, std::ios::app);
  if (!a.json)
    fmt::print("New GPU after K random measurements, leave one GPU out; {} seeds; alpha = delta = {}; rehearsal GPUs: "
               "{}; views: {}\nanswered = share of the held-out GPU's other configurations answered without measuring (+- se "
               "over seeds); risk = pooled realised risk among them; >alpha = seeds whose own risk exceeded alpha\n\n",
               a.seeds, a.alpha, a.rehearsal == "all" ? "every vendor" : "the held-out GPU's vendor", a.views);
  for (std::size_t t = 0; t < spaces.size(); ++t) {
    const Space& s = spaces[t];
    if (!bench::wanted(a.kernels, s.kernel) || !bench::wanted(a.devices, s.device)) continue;
    const bool done = std::any_of(rows.begin(), rows.end(), [&](const json& r) {
      return r["kernel"] == s.kernel && r["device"] == s.device;
    });
    if (done) continue;
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<json> split = run_split(a, spaces, t, memo);
    if (!a.json) {
      fmt::print("{} / {} held out ({} configurations; {:.0f} s, {} models fitted so far)\n", s.kernel, s.device,
                 s.candidates.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                 memo.fits());
      for (const auto& r : split) print_row(r);
      std::fflush(stdout);
    }
    for (const auto& r : split) {
      if (out.is_open()) out << r.dump() << "\n" << std::flush;
      rows.push_back(r);
    }
  }
  const json table = summarise(a, rows);
  if (a.json) {
    fmt::print("{}\n", json{{"alpha", a.alpha}, {"delta", a.delta}, {"seeds", a.seeds}, {"rehearsal", a.rehearsal}, {"views", a.views},
                            {"summary", table}, {"rows", rows}}
                           .dump(1));
    return 0;
  }
  if (const auto [moved, made] = memo.moved_to_measured(); made > 0)
    fmt::print("\nmeasured views: {} of {} view forecasts moved to the time their GPU measured (the rest, configurations "
               "that GPU did not run, are its model's)\n",
               moved, made);
  fmt::print("\nOver the splits: median answered share; runs (split x seed) whose risk exceeded alpha, against the "
             "allowance delta * runs + 2 binomial sd\n");
  for (const auto& r : table)
    fmt::print("  {:<15} K={:<3} {:<13} {:2} splits: median answered {:5.1f}%, over alpha {:3} of {:4} (allowed {})\n",
               r["loss"].get<std::string>(), r["k"].get<std::size_t>(), r["calibration"].get<std::string>(),
               r["splits"].get<std::size_t>(), 100 * r["median_answered"].get<double>(),
               r["runs_over_alpha"].get<std::size_t>(), r["runs"].get<std::size_t>(), r["allowed"].get<std::size_t>());
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "new_device_trust: {}\n", e.what());
  return 1;
}
