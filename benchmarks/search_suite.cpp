// Our searches against the peers' recorded runs on the 24 shared spaces: Kernel Tuner's
// strategies and Optuna's TPE, 20 seeds each, recorded once in ../shared/baselines/search-peers/
// (never rerun here). Per space and per kernel family, ours against the best peer of each cell at
// 25 / 50 / 100 / 200 distinct valid configurations, with standard errors and a verdict.
//
//   search_suite [--data DIR] [--peers FILE] [--kernels k1,k2] [--devices d1,d2]
//                [--strategies surrogate,genetic(variant=kernel_tuner),...] [--seeds 20] [--first-seed 1]
//                [--sampling one_run|mean] [--jobs N] [--results DIR] [--fresh] [--features DIR] [--json FILE]
//
// Budget as the peers count it: distinct valid configurations, over the file's valid cached
// configurations (ReplaySpace::cached, Kernel Tuner's tune_cache space); the fraction of optimum
// is the file's best time over the best stored time found. Every data file is checked against
// the digest, size and optimum the peers' record names, so a record of another file version is
// never compared.
//
// A strategy may start from what the kernel's other GPUs taught: surrogate(pretrained=KIND) gives
// the search a model of surrogate KIND trained on every other recorded space of the same kernel
// and vendor (never the searched GPU; NVIDIA and AMD rank these kernels differently), as a user
// who holds the benchmark hub's measurements would start on a new GPU. The peers start from
// nothing, so such rows answer what the library offers, not which search rule is better.
//
// Resumable: each (strategy, space, seed) run is written to --results as it finishes
// (<sampling>/<strategy>/<kernel>/<device>/seed<N>.json); a rerun reads those and runs only what is missing
// or was made with other settings. Changing the search's code does not change its settings:
// after such a change pass --fresh (or another --results folder).
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/benchmark_arguments.hpp"
#include "common/mean_se.hpp"
#include "common/parallel_indices.hpp"
#include "common/sha256.hpp"
#include "common/shared_data_dir.hpp"
#include "common/shared_spaces.hpp"
#include "common/split_list.hpp"
#include "common/write_text_file.hpp"
#include "data/file_io.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "data/static_feature_table.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "compose/model_impl.hpp"
#include "compose/search_model.hpp"

namespace fs = std::filesystem;
using namespace gpuforecast;
using nlohmann::json;

namespace {

constexpr std::size_t budgets[] = {25, 50, 100, 200};
constexpr std::size_t max_budget = 200;  // the peers' runs end there

struct Args {
  fs::path data = bench::shared_data_dir();
  fs::path peers;  // default: <data>/../baselines/search-peers/runs.json.gz
  std::vector<std::string> kernels, devices;
  std::vector<std::string> strategies{"surrogate"};
  std::size_t seeds = 20;
  std::uint64_t first_seed = 1;  // the peers ran seeds 0-19; ours are seeds of their own
  // What our replayed measurements read: one stored run drawn per measurement (noise as
  // recorded, as `gpuforecast search --replay` does by default), or the stored mean the peers saw.
  ReplaySampling sampling = ReplaySampling::one_run;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  fs::path results = "build/search_suite";
  bool fresh = false;
  // Static feature tables (docs/features.md) joined to the spaces that have one (the NVIDIA ones),
  // so that the search's forecaster reads what the compiler made of each configuration.
  fs::path features;
  std::string json_path;
};

const char* const usage =
    "usage: search_suite [--data DIR] [--peers FILE] [--kernels k1,k2] [--devices d1,d2]\n"
    "                    [--strategies surrogate,genetic(variant=kernel_tuner),...] [--seeds 20] [--first-seed 1]\n"
    "                    [--sampling one_run|mean] [--jobs N] [--results DIR] [--fresh] [--features DIR]\n"
    "                    [--json FILE]\n"
    "Ours against the best recorded peer (Kernel Tuner 1.5.0 strategies, Optuna TPE) on the shared spaces,\n"
    "at 25/50/100/200 distinct valid configurations. A strategy is NAME or NAME(option=value,...); the\n"
    "option surrogate=KIND picks the online surrogate, pretrained=KIND starts the search from a model of that\n"
    "kind trained on the kernel's other recorded GPUs of the same vendor, the others are the strategy's own options\n"
    "(gpuforecast search --list-options). --sampling: what a replayed measurement of ours reads, one stored\n"
    "run drawn with the seed (default; noise as recorded) or the stored mean (what the peers saw).\n"
    "Runs are kept in --results and a rerun continues them. --features joins the static feature tables\n"
    "(data/features) to the spaces that have them; those runs are kept apart from the others.\n";

Args parse(int argc, char** argv) {
  Args a;
  bench::BenchmarkArguments table(usage);
  table.text("--data", a.data)
      .text("--peers", a.peers)
      .list("--kernels", a.kernels)
      .list("--devices", a.devices)
      .list("--strategies", a.strategies)
      .number("--seeds", a.seeds)
      .number("--first-seed", a.first_seed)
      .option("--sampling", [&](const std::string&, const std::string& v) { a.sampling = parse_replay_sampling(v); })
      .number("--jobs", a.jobs)
      .text("--results", a.results)
      .flag("--fresh", [&] { a.fresh = true; })
      .text("--features", a.features)
      .text("--json", a.json_path);
  if (!table.parse(argc, argv)) std::exit(0);
  if (a.peers.empty()) a.peers = a.data / ".." / "baselines" / "search-peers" / "runs.json.gz";
  if (a.seeds == 0) throw invalid_argument_error("--seeds must be at least 1");
  if (a.jobs == 0) throw invalid_argument_error("--jobs must be at least 1");
  return a;
}

// ---------------------------------------------------------------------------------------------
// What a strategy of ours is: "surrogate" or "genetic(variant=kernel_tuner)".

struct StrategySpec {
  std::string label;  // as given: the result folder's name and the table's
  std::string name;
  std::string surrogate = "default";
  // Surrogate kind of a model trained on the kernel's other GPUs (same vendor); empty: none.
  std::string pretrained;
  std::map<std::string, std::string> options;
};

StrategySpec parse_strategy(const std::string& text) {
  StrategySpec s;
  s.label = text;
  const auto open = text.find('(');
  s.name = text.substr(0, open);
  if (open == std::string::npos) return s;
  if (!text.ends_with(")")) throw invalid_argument_error(fmt::format("--strategies {}: expected NAME(option=value,...)", text));
  for (const auto& item : detail::split_list(text.substr(open + 1, text.size() - open - 2))) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw invalid_argument_error(fmt::format("--strategies {}: option '{}' is not option=value", text, item));
    const auto key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "surrogate") s.surrogate = value;
    else if (key == "pretrained") s.pretrained = value;
    else s.options[key] = value;
  }
  return s;
}

// Everything a stored run depends on besides the code: a run made otherwise is made again.
// `sources`: the spaces a pre-trained model learned from (empty without one).
json settings_of(const StrategySpec& s, ReplaySampling sampling, const std::string& data_sha256, bool static_features,
                 const std::vector<std::string>& sources) {
  json j{{"strategy", s.name}, {"surrogate", s.surrogate}, {"options", s.options}, {"budget", max_budget},
         {"space", "cached"}, {"sampling", replay_sampling_name(sampling)}, {"data_sha256_16", data_sha256}};
  if (static_features) j["static_features"] = true;
  if (!s.pretrained.empty()) j["pretrained"] = {{"surrogate", s.pretrained}, {"sources", sources}};
  return j;
}

// ---------------------------------------------------------------------------------------------
// The peers' record.

struct RecordedSpace {
  std::string name;  // "gemm/RTX_3090"
  std::string kernel, device;
  fs::path file;
  std::size_t n_valid = 0;
  double best_time_ms = 0;
  std::string sha256_16;
};

// One run's best-so-far as [k, fraction] points where it improved.
using Improvements = std::vector<std::pair<std::size_t, double>>;

struct PeerRun {
  std::string space, peer;
  std::uint64_t seed = 0;
  Improvements improvements;
};

struct PeerRecord {
  std::vector<RecordedSpace> spaces;
  std::vector<PeerRun> runs;
};

PeerRecord read_peer_record(const fs::path& path, const fs::path& data) {
  const std::string file = path.string();
  json j;
  try {
    j = json::parse(detail::data::read_maybe_gzip(file));
  } catch (const json::exception& e) {
    throw input_error(file, "0", fmt::format("not the peers' JSON record: {}", e.what()));
  }
  PeerRecord record;
  try {
    for (const auto& [name, s] : j.at("spaces").items()) {
      RecordedSpace r;
      r.name = name;
      const auto slash = name.find('/');
      if (slash == std::string::npos) throw input_error(file, "/spaces/" + name, "space name is not kernel/device");
      r.kernel = name.substr(0, slash);
      r.device = name.substr(slash + 1);
      r.file = data / s.at("file").get<std::string>();
      r.n_valid = s.at("n_valid").get<std::size_t>();
      r.best_time_ms = s.at("best_time_ms").get<double>();
      r.sha256_16 = s.at("cache_sha256_16").get<std::string>();
      record.spaces.push_back(std::move(r));
    }
    std::size_t i = 0;
    for (const auto& r : j.at("runs")) {
      PeerRun run{r.at("space").get<std::string>(), r.at("peer").get<std::string>(), r.at("seed").get<std::uint64_t>(), {}};
      for (const auto& p : r.at("improvements")) {
        const double f = p.at(1).get<double>();
        if (!std::isfinite(f) || f < 0 || f > 1 + 1e-9)
          throw input_error(file, fmt::format("/runs/{}/improvements", i), fmt::format("fraction {} outside [0, 1]", f));
        run.improvements.emplace_back(p.at(0).get<std::size_t>(), f);
      }
      record.runs.push_back(std::move(run));
      ++i;
    }
  } catch (const json::exception& e) {
    throw input_error(file, "0", fmt::format("unexpected layout: {}", e.what()));
  }
  return record;
}

// The file's stored time of each valid configuration: Kernel Tuner's `time`, the mean of its
// repeats, which is what the peers' fractions of optimum are made of (our replay searches on
// sampled repeats, but is valued, as they are, by the stored means).
struct StoredMeans {
  std::unordered_map<std::string, double> by_key;  // Config::key()
  double best_ms = 0;
};

StoredMeans read_stored_means(const fs::path& file) {
  StoredMeans means;
  for (const auto& e : read_kernel_tuner_cache(file.string()).entries) {
    if (!e.measurement.ok()) continue;
    means.by_key[e.config.key()] = e.mean_ms;
    if (means.best_ms == 0 || e.mean_ms < means.best_ms) means.best_ms = e.mean_ms;
  }
  return means;
}

// A record made from another version of a data file is not comparable: the digest, the number
// of valid configurations and the optimum must all agree with what is read now.
void check_against_record(const RecordedSpace& r, const SpaceData& data, const StoredMeans& means) {
  const std::string digest = bench::sha256_of_file(r.file).substr(0, 16);
  if (digest != r.sha256_16)
    throw input_error(r.file.string(), "0",
                      fmt::format("SHA-256 starts {}, the peers' record names {}: another version of the file", digest, r.sha256_16));
  if (data.valid_count() != r.n_valid)
    throw input_error(r.file.string(), "0", fmt::format("{} valid configurations, the peers' record {}", data.valid_count(), r.n_valid));
  if (means.by_key.size() != r.n_valid || std::abs(means.best_ms / r.best_time_ms - 1) > 1e-9)
    throw input_error(r.file.string(), "0", fmt::format("{} stored times, best {} ms; the peers' record {}, best {} ms",
                                                        means.by_key.size(), means.best_ms, r.n_valid, r.best_time_ms));
}

// Fraction of optimum after `budget` distinct valid configurations: the last improvement at or
// before it (a run that stopped earlier keeps its last value).
double value_at(const Improvements& improvements, std::size_t budget) {
  double v = 0;
  for (const auto& [k, f] : improvements)
    if (k <= budget) v = f;
  return v;
}

// A run's improvements counted as the peers count: k = distinct valid configurations so far,
// each valued by its stored time.
Improvements improvements_of(const Trace& trace, const StoredMeans& means, std::size_t* distinct_valid) {
  Improvements out;
  std::unordered_map<std::string, bool> seen;
  double best_ms = 0;
  std::size_t k = 0;
  for (const auto& entry : trace.entries()) {
    const std::string key = entry.config.key();
    const auto it = means.by_key.find(key);
    if (it == means.by_key.end() || !seen.emplace(key, true).second) continue;
    ++k;
    if (best_ms == 0 || it->second < best_ms) {
      best_ms = it->second;
      out.emplace_back(k, means.best_ms / best_ms);
    }
  }
  *distinct_valid = k;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Our runs, one file each.

struct Space {
  const RecordedSpace* record;
  std::shared_ptr<const SpaceData> data;
  std::shared_ptr<const StoredMeans> means;
  bool static_features = false;  // a table was joined (--features and an NVIDIA space)
};

struct OurRun {
  Improvements improvements;
  std::size_t distinct = 0;
  double wall_s = 0;
};

// Runs that read static features are kept apart; a space without a table runs as it would without.
fs::path result_path(const Args& args, const StrategySpec& s, const Space& space, std::uint64_t seed) {
  const std::string sampling =
      std::string(replay_sampling_name(args.sampling)) + (space.static_features ? "+static_features" : "");
  return args.results / sampling / s.label / space.record->kernel / space.record->device /
         fmt::format("seed{}.json", seed);
}

// A stored run made with these settings, or nothing (missing, or made otherwise).
std::optional<OurRun> read_stored_run(const fs::path& path, const json& settings) {
  if (!fs::exists(path)) return std::nullopt;
  json j;
  try {
    j = json::parse(detail::data::read_maybe_gzip(path.string()));
    if (j.at("settings") != settings) return std::nullopt;
    OurRun run;
    for (const auto& p : j.at("improvements")) run.improvements.emplace_back(p.at(0).get<std::size_t>(), p.at(1).get<double>());
    run.distinct = j.at("distinct_valid").get<std::size_t>();
    run.wall_s = j.at("wall_s").get<double>();
    return run;
  } catch (const json::exception& e) {
    throw input_error(path.string(), "0", fmt::format("not a search_suite result ({}); delete it or pass --fresh", e.what()));
  }
}

// Written beside and renamed, so a killed suite never leaves half a result under the real name.
void store_run(const fs::path& path, const json& settings, std::uint64_t seed, const OurRun& run) {
  json j{{"settings", settings}, {"seed", seed}, {"distinct_valid", run.distinct}, {"wall_s", run.wall_s}};
  j["improvements"] = json::array();
  for (const auto& [k, f] : run.improvements) j["improvements"].push_back({k, f});
  fs::create_directories(path.parent_path());
  const fs::path partial = path.string() + ".partial";
  detail::write_text_file(partial, j.dump() + "\n");
  fs::rename(partial, path);
}

// ---------------------------------------------------------------------------------------------
// Models trained on the other GPUs of a space's kernel.

// The recorded spaces a pre-trained model of `target` learns from: its kernel on every other GPU
// of the same vendor (a copy of the target's own file under another name never counts).
std::vector<const Space*> pretraining_sources(const std::vector<Space>& all, const Space& target) {
  std::vector<const Space*> sources;
  const auto vendor = [](const Space& s) { return s.data->device ? s.data->device->vendor : std::string(); };
  for (const auto& s : all)
    if (s.record->kernel == target.record->kernel && s.record->device != target.record->device &&
        s.record->sha256_16 != target.record->sha256_16 && vendor(s) == vendor(target))
      sources.push_back(&s);
  if (sources.empty())
    throw invalid_argument_error(fmt::format("pretrained: no other recorded GPU of {}'s vendor measured {}",
                                             target.record->name, target.record->kernel));
  return sources;
}

std::vector<std::string> source_names(const std::vector<const Space*>& sources) {
  std::vector<std::string> names;
  for (const auto* s : sources) names.push_back(s->record->name + "@" + s->record->sha256_16);
  return names;
}

// One model per (surrogate kind, target space), trained once with seed 1 on every observation of
// the sources, failed ones included (the model learns where configurations fail too).
using Pretrained = std::map<std::pair<std::string, std::string>, std::shared_ptr<const AnySurrogate>>;

std::shared_ptr<const AnySurrogate> pretrain(const std::string& kind, const std::vector<const Space*>& sources,
                                             const Space& target) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Observation> train;
  for (const auto* s : sources) train.insert(train.end(), s->data->observations.begin(), s->data->observations.end());
  auto model = std::make_shared<AnySurrogate>(make_surrogate(kind, 1));
  model->fit(train);
  fmt::print(stderr, "  pre-trained {} for {} on {} observations of {} other GPUs in {:.1f} s\n", kind,
             target.record->name, train.size(), sources.size(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return model;
}

OurRun run_one(const StrategySpec& s, ReplaySampling sampling, const Space& space, std::uint64_t seed,
               const AnySurrogate* pretrained) {
  Plan e;
  e.replay().data = space.data;
  e.strategy = s.name;
  e.settings.surrogate = s.surrogate;
  e.settings.options = s.options;
  if (pretrained)
    e.settings.model_factory = [pretrained, online = s.surrogate, seed] {
      return make_search_model({.pretrained = make_model(*pretrained, std::nullopt), .online_surrogate = online, .seed = seed});
    };
  e.budget = max_budget;
  e.seeds = 1;
  e.first_seed = seed;
  e.replay().sampling = sampling;
  e.threads = 1;
  const Result result = gpuforecast::run(e);
  const SeedRun& r = result.runs.front();
  OurRun run;
  run.improvements = improvements_of(r.trace, *space.means, &run.distinct);
  run.wall_s = r.strategy_seconds;
  return run;
}

using RunKey = std::tuple<std::string, std::string, std::uint64_t>;  // strategy label, space, seed

// Every (strategy, space, seed) run: stored ones read, the others run on --jobs threads and
// stored as each finishes.
// `all`: every recorded space, which pre-trained models learn from.
std::map<RunKey, OurRun> collect_runs(const Args& args, const std::vector<StrategySpec>& strategies,
                                      const std::vector<Space>& spaces, const std::vector<Space>& all) {
  struct Job {
    const StrategySpec* strategy;
    const Space* space;
    std::uint64_t seed;
    json settings;
    std::vector<const Space*> sources;
  };
  std::map<RunKey, OurRun> runs;
  std::vector<Job> missing;
  for (const auto& s : strategies)
    for (const auto& space : spaces) {
      const auto sources = s.pretrained.empty() ? std::vector<const Space*>{} : pretraining_sources(all, space);
      const json settings =
          settings_of(s, args.sampling, space.record->sha256_16, space.static_features, source_names(sources));
      for (std::uint64_t seed = args.first_seed; seed < args.first_seed + args.seeds; ++seed) {
        const RunKey key{s.label, space.record->name, seed};
        const auto stored = args.fresh ? std::nullopt : read_stored_run(result_path(args, s, space, seed), settings);
        if (stored) runs[key] = *stored;
        else missing.push_back({&s, &space, seed, settings, sources});
      }
    }
  fmt::print(stderr, "search_suite: {} runs stored, {} to run on {} threads\n", runs.size(), missing.size(), args.jobs);
  // Models only for the spaces that still have runs to make.
  Pretrained pretrained;
  for (const auto& job : missing)
    if (!job.strategy->pretrained.empty()) {
      auto& model = pretrained[{job.strategy->pretrained, job.space->record->name}];
      if (!model) model = pretrain(job.strategy->pretrained, job.sources, *job.space);
    }
  std::mutex mutex;
  std::size_t done = 0;
  const auto t0 = std::chrono::steady_clock::now();
  detail::parallel_for_each_index(missing.size(), detail::parallel_threads(missing.size(), args.jobs), [&](std::size_t i) {
    const Job& job = missing[i];
    OurRun run;
    try {
      const auto model = job.strategy->pretrained.empty()
                             ? nullptr
                             : pretrained.at({job.strategy->pretrained, job.space->record->name}).get();
      run = run_one(*job.strategy, args.sampling, *job.space, job.seed, model);
    } catch (const std::exception& e) {
      throw error(fmt::format("{} on {} seed {}: {}", job.strategy->label, job.space->record->name, job.seed, e.what()));
    }
    store_run(result_path(args, *job.strategy, *job.space, job.seed), job.settings, job.seed, run);
    std::lock_guard lock(mutex);
    runs[{job.strategy->label, job.space->record->name, job.seed}] = run;
    ++done;
    if (done % 10 == 0 || done == missing.size())
      fmt::print(stderr, "  {}/{} runs ({:.0f} s)\n", done, missing.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  });
  return runs;
}

// ---------------------------------------------------------------------------------------------
// Summaries and verdicts.

using bench::MeanSe;
using bench::mean_se;

MeanSe at_budget(const std::vector<const Improvements*>& runs, std::size_t budget) {
  std::vector<double> x;
  for (const auto* r : runs) x.push_back(value_at(*r, budget));
  return mean_se(x);
}

enum class Verdict { ahead, level, behind };

const char* verdict_name(Verdict v) {
  return v == Verdict::ahead ? "ahead" : v == Verdict::level ? "level" : "behind";
}

// Level when the difference is within one standard error of the difference.
Verdict verdict(const MeanSe& ours, const MeanSe& peer) {
  const double diff = ours.mean - peer.mean;
  const double se = std::sqrt(ours.se * ours.se + peer.se * peer.se);
  if (std::abs(diff) <= se) return Verdict::level;
  return diff > 0 ? Verdict::ahead : Verdict::behind;
}

struct Cell {
  MeanSe ours;
  std::string best_peer;
  MeanSe peer;
  Verdict verdict = Verdict::level;
};

// The peer with the highest mean at this budget, as summary.md bolds it.
std::pair<std::string, MeanSe> best_peer(const std::map<std::string, std::vector<const Improvements*>>& peers,
                                         std::size_t budget) {
  std::pair<std::string, MeanSe> best{"", {-1, 0, 0}};
  for (const auto& [peer, runs] : peers) {
    const MeanSe m = at_budget(runs, budget);
    if (m.mean > best.second.mean) best = {peer, m};
  }
  return best;
}

// cells[strategy][space][budget index]
using Cells = std::map<std::string, std::map<std::string, std::vector<Cell>>>;

Cells judge(const std::vector<StrategySpec>& strategies, const std::vector<Space>& spaces, const PeerRecord& record,
            const std::map<RunKey, OurRun>& runs) {
  Cells cells;
  for (const auto& space : spaces) {
    std::map<std::string, std::vector<const Improvements*>> peers;
    for (const auto& r : record.runs)
      if (r.space == space.record->name) peers[r.peer].push_back(&r.improvements);
    if (peers.empty()) throw input_error("peers' record", space.record->name, "no runs recorded for this space");
    for (const auto& s : strategies) {
      std::vector<const Improvements*> ours;
      for (const auto& [key, run] : runs)
        if (std::get<0>(key) == s.label && std::get<1>(key) == space.record->name) ours.push_back(&run.improvements);
      auto& row = cells[s.label][space.record->name];
      for (const std::size_t b : budgets) {
        Cell c;
        c.ours = at_budget(ours, b);
        std::tie(c.best_peer, c.peer) = best_peer(peers, b);
        c.verdict = verdict(c.ours, c.peer);
        row.push_back(c);
      }
    }
  }
  return cells;
}

// A family's mean over its spaces, the standard error from theirs (spaces are independent).
MeanSe family_mean(const std::vector<MeanSe>& per_space) {
  MeanSe m;
  double var = 0;
  for (const auto& s : per_space) m.mean += s.mean, var += s.se * s.se;
  const auto n = static_cast<double>(per_space.size());
  m.mean /= n;
  m.se = std::sqrt(var) / n;
  m.n = per_space.size();
  return m;
}

// ---------------------------------------------------------------------------------------------
// Reporting.

std::string cell_text(const MeanSe& m) { return fmt::format("{:.3f}±{:.3f}", m.mean, m.se); }

void print_space_table(const StrategySpec& s, const std::vector<Space>& spaces, const Cells& cells, std::size_t seeds,
                       json& js) {
  fmt::print("{}: ours ({} seeds) against the best recorded peer per cell, fraction of optimum ± standard error\n",
             s.label, seeds);
  std::string header = fmt::format("{:<30}", "space");
  for (const auto b : budgets) header += fmt::format(" | {:^40}", fmt::format("@{}", b));
  fmt::print("{}\n{}\n", header, std::string(header.size(), '-'));
  for (const auto& space : spaces) {
    const auto& row = cells.at(s.label).at(space.record->name);
    std::string line = fmt::format("{:<30}", space.record->name);
    json jr{{"strategy", s.label}, {"space", space.record->name}};
    for (std::size_t i = 0; i < row.size(); ++i) {
      const Cell& c = row[i];
      const std::string peer = c.best_peer.substr(c.best_peer.find('.') + 1);
      line += fmt::format(" | {} {:<6} {:>11} {}", cell_text(c.ours), verdict_name(c.verdict),
                          peer.substr(0, 11), fmt::format("{:.3f}", c.peer.mean));
      jr["budgets"].push_back({{"budget", budgets[i]}, {"ours", c.ours.mean}, {"ours_se", c.ours.se}, {"ours_seeds", c.ours.n},
                               {"best_peer", c.best_peer}, {"peer", c.peer.mean}, {"peer_se", c.peer.se},
                               {"peer_seeds", c.peer.n}, {"verdict", verdict_name(c.verdict)}});
    }
    fmt::print("{}\n", line);
    js["spaces"].push_back(jr);
  }
  fmt::print("\n");
}

void print_family_table(const StrategySpec& s, const std::vector<Space>& spaces, const Cells& cells, json& js) {
  std::vector<std::string> families;
  for (const auto& space : spaces)
    if (std::find(families.begin(), families.end(), space.record->kernel) == families.end())
      families.push_back(space.record->kernel);
  fmt::print("{} per kernel family: mean over its spaces of ours and of the best peer per space (± standard error)\n",
             s.label);
  std::string header = fmt::format("{:<18} {:>6}", "family", "spaces");
  for (const auto b : budgets) header += fmt::format(" | {:^32}", fmt::format("@{}", b));
  fmt::print("{}\n{}\n", header, std::string(header.size(), '-'));
  for (const auto& family : families) {
    std::string line;
    json jf{{"strategy", s.label}, {"family", family}};
    std::size_t n = 0;
    for (std::size_t i = 0; i < std::size(budgets); ++i) {
      std::vector<MeanSe> ours, peers;
      for (const auto& space : spaces)
        if (space.record->kernel == family) {
          const Cell& c = cells.at(s.label).at(space.record->name)[i];
          ours.push_back(c.ours), peers.push_back(c.peer);
        }
      n = ours.size();
      const MeanSe o = family_mean(ours), p = family_mean(peers);
      const Verdict v = verdict(o, p);
      line += fmt::format(" | {} {:<6} {:.3f}", cell_text(o), verdict_name(v), p.mean);
      jf["budgets"].push_back({{"budget", budgets[i]}, {"ours", o.mean}, {"ours_se", o.se}, {"peer", p.mean},
                               {"peer_se", p.se}, {"verdict", verdict_name(v)}});
    }
    jf["spaces"] = n;
    fmt::print("{:<18} {:>6}{}\n", family, n, line);
    js["families"].push_back(jf);
  }
  fmt::print("\n");
}

void print_verdict_counts(const StrategySpec& s, const std::vector<Space>& spaces, const Cells& cells, json& js) {
  std::map<Verdict, std::size_t> count;
  std::vector<std::map<Verdict, std::size_t>> by_budget(std::size(budgets));
  for (const auto& space : spaces) {
    const auto& row = cells.at(s.label).at(space.record->name);
    for (std::size_t i = 0; i < row.size(); ++i) ++count[row[i].verdict], ++by_budget[i][row[i].verdict];
  }
  const std::size_t total = spaces.size() * std::size(budgets);
  fmt::print("{}: over {} cells (spaces x budgets): {} ahead, {} level, {} behind\n", s.label, total, count[Verdict::ahead],
             count[Verdict::level], count[Verdict::behind]);
  for (std::size_t i = 0; i < std::size(budgets); ++i)
    fmt::print("  @{:<4} {:>3} ahead {:>3} level {:>3} behind\n", budgets[i], by_budget[i][Verdict::ahead],
               by_budget[i][Verdict::level], by_budget[i][Verdict::behind]);
  js["verdicts"] = {{"cells", total}, {"ahead", count[Verdict::ahead]}, {"level", count[Verdict::level]},
                    {"behind", count[Verdict::behind]}};
}

void print_cost(const StrategySpec& s, const std::map<RunKey, OurRun>& runs, json& js) {
  double wall = 0;
  std::size_t n = 0, short_runs = 0;
  for (const auto& [key, run] : runs)
    if (std::get<0>(key) == s.label) wall += run.wall_s, ++n, short_runs += run.distinct < max_budget ? 1 : 0;
  fmt::print("  {} runs, {:.2f} s of search per run (one thread); {} spent fewer than {} distinct configurations\n\n", n,
             n ? wall / static_cast<double>(n) : 0.0, short_runs, max_budget);
  js["seconds_per_run"] = n ? wall / static_cast<double>(n) : 0.0;
  js["runs_short_of_budget"] = short_runs;
}

// ---------------------------------------------------------------------------------------------

using bench::wanted;

bool asked_for(const Args& args, const RecordedSpace& r) {
  return wanted(args.kernels, r.kernel) && wanted(args.devices, r.device);
}

// The recorded spaces --kernels and --devices ask for (`every`: all of them, which pre-trained
// models learn from).
std::vector<Space> load_spaces(const Args& args, const PeerRecord& record, bool every) {
  std::vector<Space> spaces;
  const auto tables = args.features.empty() ? std::vector<StaticFeatureTable>{}
                                            : read_static_feature_tables(args.features.string());
  for (const auto& r : record.spaces) {
    if (!every && !asked_for(args, r)) continue;
    std::vector<SpaceData> one{load_replay_space(r.file.string(), {}, ReplaySpace::cached)};
    auto means = std::make_shared<const StoredMeans>(read_stored_means(r.file));
    check_against_record(r, one.front(), *means);
    const bool with_features = !tables.empty() && attach_static_features(one, tables).front().with_features > 0;
    spaces.push_back({&r, std::make_shared<const SpaceData>(std::move(one.front())), std::move(means), with_features});
  }
  return spaces;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args args = parse(argc, argv);
  const auto t0 = std::chrono::steady_clock::now();
  const PeerRecord record = read_peer_record(args.peers, args.data);
  std::vector<StrategySpec> strategies;
  for (const auto& text : args.strategies) strategies.push_back(parse_strategy(text));
  const bool pretraining =
      std::any_of(strategies.begin(), strategies.end(), [](const StrategySpec& s) { return !s.pretrained.empty(); });
  if (pretraining && !args.features.empty())
    throw invalid_argument_error("--features with a pretrained strategy: the models learn from the spaces without features");
  // Each file is read and checked once; the spaces searched share their data with `all`.
  const std::vector<Space> all = load_spaces(args, record, pretraining);
  std::vector<Space> spaces;
  std::copy_if(all.begin(), all.end(), std::back_inserter(spaces), [&](const Space& s) { return asked_for(args, *s.record); });
  if (spaces.empty()) throw invalid_argument_error("no recorded space matches --kernels/--devices");
  fmt::print(stderr, "search_suite: {} spaces checked against the peers' record in {:.1f} s\n", all.size(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  const auto runs = collect_runs(args, strategies, spaces, all);
  const Cells cells = judge(strategies, spaces, record, runs);

  json js{{"seeds", args.seeds}, {"first_seed", args.first_seed}, {"budgets", budgets},
          {"peers", args.peers.string()}, {"strategies", json::array()}};
  for (const auto& s : strategies) {
    json jst{{"strategy", s.label}};
    print_space_table(s, spaces, cells, args.seeds, jst);
    print_family_table(s, spaces, cells, jst);
    print_verdict_counts(s, spaces, cells, jst);
    print_cost(s, runs, jst);
    js["strategies"].push_back(jst);
  }
  if (!args.json_path.empty()) detail::write_text_file(args.json_path, js.dump(2) + "\n");
  fmt::print("verdict: level = the difference within one standard error of the difference; best peer = the highest\n"
             "mean among the recorded peers in that cell (a maximum over 11 peers, so a demanding bar). Total {:.0f} s\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "search_suite: error: {}\n", e.what());
  return 1;
}
