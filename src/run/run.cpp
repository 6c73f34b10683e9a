#include "gpuforecast/run/run.hpp"
#include "gpuforecast/run/search_target.hpp"

#include <fmt/core.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "core/warning.hpp"
#include "runtime/device_health.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "search/cache_writer.hpp"
#include "search/event_log.hpp"
#include "runtime/resumed_benchmarker.hpp"
#include "search/resume.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "runtime/simulated_farm.hpp"
#include "search/trace_writer.hpp"
#include "common/parallel_indices.hpp"
#include "run/device_health_watch.hpp"
#include "search/anomaly_monitor.hpp"

namespace gpuforecast {

std::vector<BudgetSummary> Result::summary(std::span<const std::size_t> budgets) const {
  std::vector<std::vector<double>> curves;
  for (const auto& r : runs) curves.push_back(r.curve);
  return summarise_curves(curves, budgets);
}

ScreeningSummary Result::screening_summary() const {
  ScreeningSummary s;
  std::size_t rounds = 0, certified = 0;
  std::size_t checked = 0, interval_misses = 0;
  for (const auto& r : runs) {
    if (r.screened_rounds == 0) continue;
    ++s.runs;
    checked += r.interval_checked;
    interval_misses += r.interval_misses;
    s.considered += static_cast<double>(r.screening.considered);
    s.skipped += static_cast<double>(r.screening.skipped);
    s.measured += static_cast<double>(r.trace.size());
    s.miss_rate += r.screening.miss_rate();
    s.miss_rate_certified += r.screening_certified.miss_rate();
    if (r.screening_certified.miss_rate() > r.screening_alpha) ++s.runs_over_alpha;
    s.alpha = r.screening_alpha;
    rounds += r.screened_rounds;
    certified += r.certified_rounds;
  }
  if (s.runs == 0) return s;
  s.interval_miss_rate = checked ? static_cast<double>(interval_misses) / static_cast<double>(checked) : 0.0;
  s.skipped_share = s.considered > 0 ? s.skipped / s.considered : 0.0;
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
  SeedRun* run;
  void on_screened(const SearchScreened& e) {
    ++run->screened_rounds;
    run->screening_alpha = e.rule.options.alpha;
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

// Each measured candidate that had a forecast, against its stored time: did the interval hold?
struct IntervalJudge {
  const ReplayBenchmarker* truth;
  SeedRun* run;
  std::unordered_map<std::string, Decision> forecasts;  // the last forecast of each candidate
  void on_forecasted(const SearchForecasted& e) {
    for (std::size_t i = 0; i < e.proposed.size() && i < e.decisions.size(); ++i)
      forecasts.insert_or_assign(e.proposed[i].key(), e.decisions[i]);
  }
  void on_measured(const SearchMeasured& e) {
    const auto it = forecasts.find(e.config.key());
    if (it == forecasts.end()) return;
    const Observation* o = truth->find(e.config);
    if (o && o->measurement.ok() && o->measurement.median_ms > 0) {
      const double y = o->measurement.median_ms;
      ++run->interval_checked;
      if (!it->second.covers(y)) ++run->interval_misses;
    }
    forecasts.erase(it);
  }
};

// Every candidate the model forecast once something was measured, with its stored time and the
// incumbent of that moment: a screening rehearsal (SeedRun::rehearsal). A candidate that fails
// improves on nothing and carries nothing about misses: it is left out.
struct RehearsalRecorder {
  const ReplayBenchmarker* truth;
  SeedRun* run;
  double incumbent_ms = std::numeric_limits<double>::infinity();
  void on_forecasted(const SearchForecasted& e) {
    if (!std::isfinite(incumbent_ms)) return;
    for (std::size_t i = 0; i < e.proposed.size() && i < e.decisions.size(); ++i) {
      const double f = e.decisions[i].forecast.median_ms;
      const Observation* o = truth->find(e.proposed[i]);
      if (!(std::isfinite(f) && f > 0) || !o || !o->measurement.ok() || !(o->measurement.median_ms > 0)) continue;
      run->rehearsal.push_back({f, o->measurement.median_ms, incumbent_ms,
                                std::isfinite(e.incumbent_forecast_ms) ? e.incumbent_forecast_ms : 0.0});
    }
  }
  void on_measured(const SearchMeasured& e) {
    if (const TraceEntry* best = e.trace.best()) incumbent_ms = best->best_ms;  // what the search screens against
  }
};

// Counts the anomalies reported to the run's observers (the anomaly monitor's flags, the
// device's own health signals), for the Result.
struct AnomalyCount {
  SeedRun* run;
  void on_anomaly(const SearchAnomaly&) { ++run->anomalies; }
};

// An observer shared with another thread (a farm's results thread writes the same cache).
template <class O>
struct LockedObserver {
  O* observer;
  std::mutex* mutex;
  void on_begin(const SearchBegin& e) {
    std::lock_guard lock(*mutex);
    observer->on_begin(e);
  }
  void on_measured(const SearchMeasured& e) {
    std::lock_guard lock(*mutex);
    observer->on_measured(e);
  }
  void on_end(const SearchEnd& e) {
    std::lock_guard lock(*mutex);
    observer->on_end(e);
  }
};

// One seed's search on `benchmarker`, whatever the back end: the context with the plan's
// outputs and observers (and the back end's own, `add_observers`), the strategy, the timing.
struct SeedSearch {
  const Plan& plan;
  std::size_t index;
  const TuningSpace& space;
  const Candidate& prototype;
  SearchContextOptions options;
  std::string cache;                   // this run's Kernel Tuner cache, if any
  std::optional<CacheFile> earlier;    // what a resumed run's cache already holds
  std::function<void(SearchContext&)> add_observers;
  std::function<bool(const std::exception_ptr&)> ends_search;
  std::function<void(std::function<void(const Candidate&, const Measurement&)>)> on_result;
  std::function<void(std::function<void(const SearchWorkerLost&)>)> on_worker_lost;

  SeedSearch(const Plan& p, std::size_t i, const TuningSpace& s, const Candidate& proto)
      : plan(p), index(i), space(s), prototype(proto) {
    options.label = fmt::format("{} seed {}", plan.strategy, seed());
    cache = plan.outputs.cache_path ? plan.outputs.cache_path(index) : std::string{};
    if (!cache.empty()) options.max_batch = 1;  // each measurement in the file before the next starts
    if (!cache.empty() && plan.outputs.resume && std::filesystem::exists(cache))
      earlier = read_search_cache(cache, space, prototype);
  }
  [[nodiscard]] std::uint64_t seed() const { return plan.first_seed + index; }

  template <class B>
  void operator()(AnyStrategy& strategy, B benchmarker, SeedRun& run) const {
    // Results that reach the back end before the search takes them are written as they come:
    // the back end's thread and the search's share the writer under one lock. Both outlive
    // the context, whose observers point at them.
    std::optional<KernelTunerCacheWriter> writer;
    std::mutex writer_mutex;
    SearchContext ctx(space, prototype, std::move(benchmarker), Budget{plan.budget, plan.budget_seconds}, options);
    if (!cache.empty()) {
      writer.emplace(earlier ? KernelTunerCacheWriter(cache, *earlier) : KernelTunerCacheWriter(cache));
      ctx.add_observer(LockedObserver<KernelTunerCacheWriter>{&*writer, &writer_mutex});
      if (on_result)
        on_result([&writer, &writer_mutex, no_trace = Trace{}](const Candidate& c, const Measurement& m) {
          std::lock_guard lock(writer_mutex);
          writer->on_measured(SearchMeasured{0, c.config, m, no_trace});
        });
    }
    struct Unhook {  // the hook refers to this frame: gone with it, however the run ends
      const std::function<void(std::function<void(const Candidate&, const Measurement&)>)>& on_result;
      bool hooked;
      ~Unhook() {
        if (hooked) on_result({});
      }
    } unhook{on_result, on_result && writer.has_value()};
    // A worker lost on the back end's thread reaches the observers through the context, on this
    // thread (SearchContext::report_worker_lost).
    struct UnhookLost {
      const std::function<void(std::function<void(const SearchWorkerLost&)>)>& on_worker_lost;
      ~UnhookLost() {
        if (on_worker_lost) on_worker_lost({});
      }
    } unhook_lost{on_worker_lost};
    if (on_worker_lost) on_worker_lost([&ctx](const SearchWorkerLost& l) { ctx.report_worker_lost(l); });
    if (plan.outputs.trace_path) ctx.add_observer(T4TraceWriter(plan.outputs.trace_path(index)));
    if (plan.outputs.events_path) {
      EventLogOptions o{.run = fmt::format("{} seed {}", plan.strategy, seed()), .stop_reason = plan.outputs.stop_reason};
      if (earlier) {
        auto served = std::make_shared<std::unordered_set<std::string>>();
        for (const auto& e : earlier->entries) served->insert(e.config.key());
        o.resumed_from = cache;
        o.resumed_configs = std::move(served);
      }
      ctx.add_observer(EventLog(plan.outputs.events_path(index), std::move(o)));
    }
    ctx.add_observer(AnomalyCount{&run});
    if (plan.observe) plan.observe(ctx, index, options.label);
    if (add_observers) add_observers(ctx);
    // Last, so that every observer has seen a measurement before an anomaly raised at it.
    if (plan.anomalies) ctx.add_observer(AnomalyMonitor({}, [&ctx](const SearchAnomaly& a) { ctx.report_anomaly(a); }));
    const auto start = std::chrono::steady_clock::now();
    try {
      strategy.run(ctx);
    } catch (...) {
      if (ends_search && ends_search(std::current_exception())) ctx.finish();
      throw;
    }
    ctx.finish();
    run.strategy_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.trace = ctx.trace();
    run.seed = seed();
  }
};

AnyStrategy strategy_for(const Plan& plan, std::uint64_t seed) {
  StrategySettings settings = plan.settings;
  settings.seed = seed;
  return make_strategy(plan.strategy, settings);
}

Result run_replay(const Plan& plan, const ReplayBackend& backend) {
  if (!backend.data) throw invalid_argument_error("run: a plan without data to replay");
  if (backend.workers == 0) throw invalid_argument_error("run: a plan needs at least 1 worker");
  const SpaceData& data = *backend.data;
  Result result;
  result.optimum_ms = data.best_ms();
  // Stored medians value what a run found, so noise in the replayed runs does not flatter it.
  ReplayBenchmarker lookup(backend.data);
  auto reference = [&](const Config& c) {
    const Observation* o = lookup.find(c);
    return o && o->measurement.ok() ? o->measurement.median_ms : 0.0;
  };
  const SearchTarget target = search_target(data);
  // Static features joined to the data (attach_static_features) reach the strategy's candidates
  // too, so that a model sees in its proposals what it learnt from measurements.
  const bool with_static_features =
      !data.observations.empty() && data.observations.front().candidate.features.count("static_features_known") > 0;
  const auto describe_by_stored_features = [&lookup](Candidate& c) {
    const Observation* o = lookup.find(c.config);
    if (o) c.features = o->candidate.features;
    else c.features["static_features_known"] = 0.0;
  };
  const std::size_t n = plan.seeds;
  // Runs side by side: a bar per run would interleave, so a terminal sees a count instead.
  const unsigned threads = detail::parallel_threads(n, plan.threads);
  const bool bar = threads == 1 && plan.progress;
  const bool count = threads > 1 && plan.progress && isatty(fileno(stderr)) != 0;
  std::vector<SeedRun> runs(n);
  std::size_t finished = 0;
  std::mutex print;
  const auto search = [&](std::size_t i) {
    const std::uint64_t seed = plan.first_seed + i;
    auto strategy = strategy_for(plan, seed);
    ReplayBenchmarker bench(backend.data, ReplayOptions{seed * 0x9E3779B97F4A7C15ULL, backend.sampling,
                                                        backend.time_scale, backend.sentinel_repeats});
    SeedSearch one(plan, i, target.space, target.prototype);
    if (with_static_features) one.options.describe = describe_by_stored_features;
    one.options.progress = bar;
    SeedRun& run = runs[i];
    one.add_observers = [&](SearchContext& ctx) {
      ctx.add_observer(ScreeningJudge{&lookup, &run});
      ctx.add_observer(IntervalJudge{&lookup, &run, {}});
      if (plan.rehearsal) ctx.add_observer(RehearsalRecorder{&lookup, &run});
    };
    const auto on_workers = [&](auto benchmarker) {
      if (backend.workers <= 1) return one(strategy, std::move(benchmarker), run);
      SimulatedFarm farm(backend.workers, std::move(benchmarker));
      one(strategy, farm, run);
      run.virtual_seconds = farm.clock_s();
      run.utilisation = farm.clock_s() > 0 ? farm.busy_s() / (static_cast<double>(backend.workers) * farm.clock_s()) : 0.0;
    };
    if (one.earlier)
      on_workers(ResumedBenchmarker<ReplayBenchmarker>(bench, *one.earlier));
    else
      on_workers(bench);
    run.curve = fraction_of_optimum_curve(run.trace, result.optimum_ms, std::max<std::size_t>(plan.budget, 1), reference);
    if (count) {
      std::lock_guard lock(print);
      fmt::print(stderr, "\r{}: {}/{} runs", plan.strategy, ++finished, n);
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

// The caller's benchmarker, as a SearchContext takes one: measuring a batch, or several
// candidates at once when the back end is asynchronous.
struct CallerBenchmarker {
  const CallerBackend* backend;
  std::vector<Measurement> measure(std::span<const Candidate> candidates) { return backend->measure(candidates); }
};
struct CallerAsyncBenchmarker {
  const CallerBackend* backend;
  std::vector<Measurement> measure(std::span<const Candidate> candidates) { return backend->measure(candidates); }
  std::size_t workers() const { return backend->async->workers(); }
  std::uint64_t submit(const Candidate& candidate) { return backend->async->submit(candidate); }
  std::vector<Landed> wait_any() { return backend->async->wait_any(); }
};
static_assert(AsyncBenchmarker<CallerAsyncBenchmarker>);

// What the GPU itself says (throttling, temperature, ECC, Xid) reaches every observer of `ctx` as
// an anomaly: the event log and a monitor among them.
void watch_gpu(SearchContext& ctx, unsigned nvml_index) {
  std::string why;
  if (auto nvml = NvmlDevice::open(nvml_index, &why))
    ctx.add_observer(detail::DeviceHealthWatch(std::move(*nvml), {[&ctx](const SearchAnomaly& a) { ctx.report_anomaly(a); }}));
  else
    warn(fmt::format("the GPU's clocks, throttling, temperature, ECC and Xid errors are not watched: {}", why));
}

// One run after another on the caller's benchmarker. Nothing stored values the runs, so they
// have traces and no curves.
Result run_on_caller(const Plan& plan, const CallerBackend& backend) {
  if (!backend.measure) throw invalid_argument_error("run: a caller's back end without a measure function");
  Result result;
  result.runs.resize(plan.seeds);
  for (std::size_t i = 0; i < plan.seeds; ++i) {
    auto strategy = strategy_for(plan, plan.first_seed + i);  // bad options fail before measuring
    SeedSearch one(plan, i, backend.space, backend.prototype);
    one.options.progress = plan.progress;
    one.options.describe = backend.describe;
    one.ends_search = backend.ends_search;
    one.on_result = backend.on_result;
    one.on_worker_lost = backend.on_worker_lost;
    if (backend.watch_gpu) one.add_observers = [&backend](SearchContext& ctx) { watch_gpu(ctx, *backend.watch_gpu); };
    const auto search = [&](auto benchmarker) {
      if (one.earlier)
        one(strategy, ResumedBenchmarker<decltype(benchmarker)>(benchmarker, *one.earlier), result.runs[i]);
      else
        one(strategy, benchmarker, result.runs[i]);
    };
    if (backend.async)
      search(CallerAsyncBenchmarker{&backend});
    else
      search(CallerBenchmarker{&backend});
  }
  return result;
}

}  // namespace

std::function<std::string(std::size_t)> file_per_run(std::string base, std::size_t runs) {
  if (base.empty()) return {};
  return [base = std::move(base), runs](std::size_t run) {
    if (runs == 1) return base;
    const auto dot = base.find(".json");
    if (dot == std::string::npos) return fmt::format("{}.seed{}", base, run + 1);
    return fmt::format("{}.seed{}{}", base.substr(0, dot), run + 1, base.substr(dot));
  };
}

Result run(const Plan& plan) {
  if (const auto* replay = std::get_if<ReplayBackend>(&plan.backend)) return run_replay(plan, *replay);
  return run_on_caller(plan, std::get<CallerBackend>(plan.backend));
}

}  // namespace gpuforecast
