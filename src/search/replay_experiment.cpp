#include "gpuforecast/search/replay_experiment.hpp"

#include <fmt/core.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/t1.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "gpuforecast/search/cache_writer.hpp"
#include "gpuforecast/search/event_log.hpp"
#include "gpuforecast/runtime/resumed_benchmarker.hpp"
#include "gpuforecast/search/resume.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/runtime/simulated_farm.hpp"
#include "gpuforecast/search/trace_writer.hpp"
#include "common/parallel_indices.hpp"

namespace gpuforecast {

ReplaySpace parse_replay_space(std::string_view name) {
  for (auto s : {ReplaySpace::automatic, ReplaySpace::t1, ReplaySpace::cached, ReplaySpace::cartesian})
    if (name == replay_space_name(s)) return s;
  throw invalid_argument_error(fmt::format("--space {}: expected auto, t1, cached or cartesian", name));
}

std::string_view replay_space_name(ReplaySpace space) noexcept {
  switch (space) {
    case ReplaySpace::automatic: return "auto";
    case ReplaySpace::t1: return "t1";
    case ReplaySpace::cached: return "cached";
    case ReplaySpace::cartesian: return "cartesian";
  }
  return "?";
}

namespace {

// The T1 file given, or the one the benchmark_hub layout puts beside the data; empty if none.
std::string find_t1(const std::string& path, const SpaceData& data, const std::string& t1_path) {
  if (!t1_path.empty()) return t1_path;
  namespace fs = std::filesystem;
  const fs::path candidate = fs::path(path).parent_path().parent_path().parent_path() / "kernels" / (data.kernel + ".json");
  std::error_code ec;
  if (!data.kernel.empty() && fs::exists(candidate, ec)) return candidate.string();
  return {};
}

void attach_t1(SpaceData& data, const std::string& t1) {
  T1File spec = read_t1(t1);
  // Keep the data's parameters (their order matches the stored keys); take the constraints.
  for (const auto& p : data.space.parameters())
    (void)spec.space.index_of(p.name);  // throws naming the parameter when the T1 file lacks it
  data.space = TuningSpace(data.space.parameters(), spec.space.constraints());
}

void restrict_to_cached(SpaceData& data) {
  std::vector<Config> valid;
  for (const auto& o : data.observations)
    if (o.measurement.ok()) valid.push_back(o.candidate.config);
  if (valid.empty())
    throw invalid_argument_error(fmt::format("{}: no configuration has a valid time, so the cached space is empty", data.path));
  data.space = data.space.restricted_to(valid);
}

}  // namespace

SpaceData load_replay_space(const std::string& path, const std::string& t1_path, ReplaySpace space) {
  SpaceData data = load_space(path);
  const bool own_constraints = !data.space.constraints().empty();
  switch (space) {
    case ReplaySpace::automatic: {
      if (own_constraints && t1_path.empty()) return data;
      const std::string t1 = find_t1(path, data, t1_path);
      if (t1.empty()) restrict_to_cached(data);
      else attach_t1(data, t1);
      return data;
    }
    case ReplaySpace::t1: {
      if (own_constraints && t1_path.empty()) return data;
      const std::string t1 = find_t1(path, data, t1_path);
      if (t1.empty())
        throw invalid_argument_error(fmt::format(
            "--space t1: no T1 file for kernel \"{}\" of {} (looked for <root>/kernels/{}.json); give one with --t1, "
            "or use --space cached",
            data.kernel, path, data.kernel));
      attach_t1(data, t1);
      return data;
    }
    case ReplaySpace::cached:
      restrict_to_cached(data);
      return data;
    case ReplaySpace::cartesian:
      data.space = TuningSpace(data.space.parameters(), {});
      return data;
  }
  return data;
}

std::string describe_replay_space(const SpaceData& data) {
  if (const auto* members = data.space.members()) return fmt::format("cached ({} configurations)", members->size());
  if (!data.space.constraints().empty()) return fmt::format("t1 ({} constraints)", data.space.constraints().size());
  return fmt::format("cartesian ({} configurations)", data.space.cartesian_size());
}

std::vector<BudgetSummary> ReplayResult::summary(std::span<const std::size_t> budgets) const {
  std::vector<std::vector<double>> curves;
  for (const auto& r : runs) curves.push_back(r.curve);
  return summarise_curves(curves, budgets);
}

ScreeningSummary ReplayResult::screening_summary(double alpha) const {
  ScreeningSummary s;
  std::size_t rounds = 0, certified = 0;
  for (const auto& r : runs) {
    if (r.screened_rounds == 0) continue;
    ++s.runs;
    s.considered += static_cast<double>(r.screening.considered);
    s.skipped += static_cast<double>(r.screening.skipped);
    s.measured += static_cast<double>(r.trace.size());
    s.miss_rate += r.screening.miss_rate();
    s.miss_rate_certified += r.screening_certified.miss_rate();
    if (r.screening_certified.miss_rate() > alpha) ++s.runs_over_alpha;
    rounds += r.screened_rounds;
    certified += r.certified_rounds;
  }
  if (s.runs == 0) return s;
  const auto n = static_cast<double>(s.runs);
  s.considered_per_measurement = s.measured > 0 ? s.considered / s.measured : 0;
  s.considered /= n, s.skipped /= n, s.measured /= n, s.miss_rate /= n, s.miss_rate_certified /= n;
  s.certified_rounds = static_cast<double>(certified) / static_cast<double>(rounds);
  return s;
}

namespace {

// Judges every screened proposal by its stored time: the realised miss rate of a replayed run.
struct ScreeningJudge {
  const ReplayBenchmarker* truth;
  ReplayRun* run;
  void on_screened(const SearchScreened& e) {
    ++run->screened_rounds;
    if (e.rule.certified) ++run->certified_rounds;
    for (std::size_t i = 0; i < e.proposed.size(); ++i) {
      const Observation* o = truth->find(e.proposed[i]);
      const double y = o && o->measurement.ok() ? o->measurement.median_ms : 0.0;
      tally_screening(run->screening, e.skipped[i], y, e.incumbent_ms, e.rule.options.tolerance);
      if (e.rule.certified)
        tally_screening(run->screening_certified, e.skipped[i], y, e.incumbent_ms, e.rule.options.tolerance);
    }
  }
};

}  // namespace

ReplayResult run_replay_experiment(const ReplayExperiment& e) {
  if (!e.data) throw invalid_argument_error("replay experiment without data");
  if (e.workers == 0) throw invalid_argument_error("replay experiment: workers must be at least 1");
  ReplayResult result;
  result.optimum_ms = e.data->best_ms();
  // Stored medians value what a run found, so noise in the replayed runs does not flatter it.
  ReplayBenchmarker lookup(e.data);
  auto reference = [&](const Config& c) {
    const Observation* o = lookup.find(c);
    return o && o->measurement.ok() ? o->measurement.median_ms : 0.0;
  };
  Candidate prototype;
  prototype.kernel = e.data->kernel;
  prototype.problem_size = e.data->problem_size;
  prototype.device = e.data->device;
  if (!e.data->observations.empty()) {
    const auto& first = e.data->observations.front().candidate;
    prototype.spec = first.spec;
  }
  // Static features joined to the data (attach_static_features) reach the strategy's candidates
  // too, so that a model sees in its proposals what it learnt from measurements.
  const bool with_static_features =
      !e.data->observations.empty() && e.data->observations.front().candidate.features.count("static_features_known") > 0;
  const auto describe_by_stored_features = [&lookup](Candidate& c) {
    const Observation* o = lookup.find(c.config);
    if (o) c.features = o->candidate.features;
    else c.features["static_features_known"] = 0.0;
  };
  const std::size_t n = e.seeds;
  // Runs side by side: a bar per run would interleave, so a terminal sees a count instead.
  const unsigned threads = detail::parallel_threads(n, e.threads);
  const bool bar = threads == 1 && e.progress;
  const bool count = threads > 1 && e.progress && isatty(fileno(stderr)) != 0;
  std::vector<ReplayRun> runs(n);
  std::size_t finished = 0;
  std::mutex print;
  const auto search = [&](std::size_t i) {
    const std::uint64_t seed = e.first_seed + i;
    StrategySettings settings = e.settings;
    settings.seed = seed;
    auto strategy = make_strategy(e.strategy, settings);
    ReplayBenchmarker bench(e.data, ReplayOptions{seed * 0x9E3779B97F4A7C15ULL, e.sampling, e.time_scale, e.sentinel_repeats});
    SearchContextOptions options;
    if (with_static_features) options.describe = describe_by_stored_features;
    options.progress = bar;
    options.label = fmt::format("{} seed {}", e.strategy, seed);
    const std::string cache = e.cache_path ? e.cache_path(i) : std::string{};
    if (!cache.empty()) options.max_batch = 1;  // each measurement in the file before the next starts
    std::optional<CacheFile> earlier;
    if (!cache.empty() && e.resume && std::filesystem::exists(cache))
      earlier = read_search_cache(cache, e.data->space, prototype);
    ReplayRun& run = runs[i];
    const auto search_with = [&](auto benchmarker) {
      SearchContext ctx(e.data->space, prototype, std::move(benchmarker), Budget{e.budget, e.budget_seconds}, options);
      if (!cache.empty())
        ctx.add_observer(earlier ? KernelTunerCacheWriter(cache, *earlier) : KernelTunerCacheWriter(cache));
      if (e.trace_path) ctx.add_observer(T4TraceWriter(e.trace_path(i)));
      if (e.events_path) ctx.add_observer(EventLog(e.events_path(i), {fmt::format("{} seed {}", e.strategy, seed)}));
      if (e.observe) e.observe(ctx, i, options.label);
      ctx.add_observer(ScreeningJudge{&lookup, &run});
      const auto start = std::chrono::steady_clock::now();
      strategy.run(ctx);
      ctx.finish();
      run.strategy_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      run.trace = ctx.trace();
    };
    const auto on_workers = [&](auto benchmarker) {
      if (e.workers <= 1) return search_with(std::move(benchmarker));
      SimulatedFarm farm(e.workers, std::move(benchmarker));
      search_with(farm);
      run.virtual_seconds = farm.clock_s();
      run.utilisation = farm.clock_s() > 0 ? farm.busy_s() / (static_cast<double>(e.workers) * farm.clock_s()) : 0.0;
    };
    if (earlier)
      on_workers(ResumedBenchmarker<ReplayBenchmarker>(bench, *earlier));
    else
      on_workers(bench);
    run.seed = seed;
    run.curve = fraction_of_optimum_curve(run.trace, result.optimum_ms, std::max<std::size_t>(e.budget, 1), reference);
    if (count) {
      std::lock_guard lock(print);
      fmt::print(stderr, "\r{}: {}/{} runs", e.strategy, ++finished, n);
    }
  };
  const auto end_count = [&] {
    if (count && finished > 0) fmt::print(stderr, "\n");
  };
  try {
    detail::parallel_for_each_index(n, threads, search);
  } catch (...) {
    end_count();  // the error starts on a line of its own
    throw;
  }
  end_count();
  result.runs = std::move(runs);
  return result;
}

}  // namespace gpuforecast
