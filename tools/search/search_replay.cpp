// `gpuforecast search --replay`: several strategies (comma-separated) run on the same recorded
// data and seeds, side by side, and compared in one report.
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "gpuforecast/core/error.hpp"
#include "data/screening_pairs.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "run/report.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "interrupt.hpp"
#include "search/search_args.hpp"
#if GPUFORECAST_HAVE_LLM
#include "llm/llm_endpoint.hpp"
#endif

namespace gpuforecast::cli {

namespace {

// The language model's calls so far in this process (--surrogate llm).
LlmCalls llm_calls() {
#if GPUFORECAST_HAVE_LLM
  const auto c = llm_process_counts();
  return {c.prompts, c.requests, c.cache_hits, c.failed, c.retries};
#else
  return {};
#endif
}

LlmCalls operator-(const LlmCalls& a, const LlmCalls& b) {
  return {a.prompts - b.prompts, a.requests - b.requests, a.cache_hits - b.cache_hits, a.failed - b.failed,
          a.retries - b.retries};
}

// Run i's file of strategy `name`: with several strategies trace.json -> random.trace.json, in
// the same folder; with several seeds trace.json -> trace.seed3.json (file_per_run).
std::function<std::string(std::size_t)> run_file(const SearchArgs& a, const std::string& name, const std::string& given) {
  if (given.empty() || a.strategies.size() == 1) return file_per_run(given, a.seeds);
  const std::filesystem::path p(given);
  return file_per_run((p.parent_path() / (name + "." + p.filename().string())).string(), a.seeds);
}

Plan replay_plan(const SearchArgs& a, const std::string& name, std::shared_ptr<const SpaceData> data) {
  Plan plan;
  auto& replay = plan.replay();
  replay.data = std::move(data);
  replay.sampling = parse_replay_sampling(a.sampling);
  replay.time_scale = a.time_scale;
  replay.sentinel_repeats = a.sentinel_repeats;
  replay.workers = a.workers;
  plan.strategy = name;
  plan.settings = strategy_settings(a, name);
  if (name != "surrogate" && name != "genetic") plan.settings.model_path.clear();
  plan.budget = a.budget;
  plan.budget_seconds = a.budget_seconds;
  plan.seeds = a.seeds;
  plan.first_seed = a.first_seed;
  plan.threads = a.threads;
  plan.progress = !a.no_progress && !a.json;
  plan.outputs.trace_path = run_file(a, name, a.trace);
  plan.outputs.events_path = run_file(a, name, a.events);
  plan.outputs.cache_path = run_file(a, name, a.cache);
  plan.outputs.resume = a.resume;
  plan.outputs.stop_reason = interruption_reason;
  plan.rehearsal = !a.rehearsal_out.empty();
  return plan;
}

// Every run's rehearsal pairs in one file; says on stderr how many improvements it holds, the
// pairs that decide what can be certified.
void write_rehearsal(const Result& result, const std::string& path) {
  std::vector<ScreeningPair> pairs;
  for (const auto& r : result.runs) pairs.insert(pairs.end(), r.rehearsal.begin(), r.rehearsal.end());
  if (pairs.empty())
    throw invalid_argument_error(fmt::format(
        "--rehearsal-out {}: the strategy forecast no candidate after the first measurement (give one that ranks "
        "with a model: surrogate, or genetic with children_per_measurement > 1)",
        path));
  write_screening_pairs(pairs, path);
  const auto improvements =
      std::count_if(pairs.begin(), pairs.end(), [](const ScreeningPair& p) { return is_improvement(p); });
  fmt::print(stderr, "{}: {} screening pairs from {} runs, {} of them improvements on their incumbent\n", path,
             pairs.size(), result.runs.size(), improvements);
}

}  // namespace

void run_replay(const SearchArgs& a) {
  if (a.seeds == 0) throw invalid_argument_error("--seeds must be at least 1");
  auto data = load_replay_data(a);
  if (a.strategies.empty()) throw invalid_argument_error("--strategy: give at least one strategy");

  SearchComparison comparison;
  RunMonitor monitor(a.monitor, fmt::format("{} on {}", data->kernel, data->device ? data->device->name : a.replay),
                     calibration_of_model(a.model));
  for (const auto& name : a.strategies) {
    Plan plan = replay_plan(a, name, data);
    plan.observe = [&monitor](SearchContext& ctx, std::size_t, const std::string& label) {
      ctx.add_observer(StopOnInterrupt{});
      monitor.watch(ctx, label);
    };
    const bool asks_llm = name == "surrogate" && a.surrogate == "llm";
    const LlmCalls before = llm_calls();
    comparison.strategies.push_back(
        {name, name == "surrogate" && !a.model.empty() ? "surrogate (pre-trained)" : name, run(plan)});
    if (asks_llm) comparison.strategies.back().llm = llm_calls() - before;
  }
  monitor.finish();
  if (!a.rehearsal_out.empty()) write_rehearsal(comparison.strategies.front().result, a.rehearsal_out);
  std::size_t longest = 0;
  for (const auto& o : comparison.strategies)
    for (const auto& r : o.result.runs) longest = std::max(longest, r.trace.size());
  comparison.budgets = report_budgets(a.budget, longest);
  comparison.source = a.replay;
  comparison.kernel = data->kernel;
  comparison.device = data->device ? data->device->name : std::string{};
  comparison.space = describe_replay_space(*data);
  comparison.model = a.model;
  comparison.seeds = a.seeds;
  comparison.workers = a.workers;
  if (!a.plot.empty()) write_svg_report(comparison, a.plot);
  fmt::print("{}", a.json ? json_report(comparison) + "\n" : text_report(comparison));
}

}  // namespace gpuforecast::cli
