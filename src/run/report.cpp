#include "run/report.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "report/svg_plot.hpp"

namespace gpuforecast {

namespace {

std::size_t measurements_of(const Result& r) {
  std::size_t n = 0;
  for (const auto& run : r.runs) n += run.trace.size();
  return n;
}

struct Means {
  double simulated_seconds = 0, wall_seconds = 0, virtual_seconds = 0, utilisation = 0;
};
Means means_of(const Result& r) {
  Means m;
  for (const auto& run : r.runs) {
    m.simulated_seconds += run.trace.total_cost_s();
    m.wall_seconds += run.strategy_seconds;
    m.virtual_seconds += run.virtual_seconds;
    m.utilisation += run.utilisation;
  }
  const auto n = static_cast<double>(std::max<std::size_t>(r.runs.size(), 1));
  m.simulated_seconds /= n, m.wall_seconds /= n, m.virtual_seconds /= n, m.utilisation /= n;
  return m;
}

std::string llm_text(const LlmCalls& c, std::size_t measurements, std::size_t runs) {
  return fmt::format("{} LLM prompts ({} requests, {} from the cache, {} failed and deferred, {} retries) for {} "
                     "measurements over {} runs: {:.1f} prompts per measurement",
                     c.prompts, c.requests, c.cache_hits, c.failed, c.retries, measurements, runs,
                     measurements ? static_cast<double>(c.prompts) / static_cast<double>(measurements) : 0.0);
}

// One line on a screened replay: what the rule ruled out and how often that was wrong.
std::string screening_text(const ScreeningSummary& s) {
  return fmt::format("screening (alpha {}): {:.0f} candidates considered, {:.0f} screened out ({:.0f}%), {:.0f} measured "
                     "per run ({:.1f} considered per measurement); a margin certified in {:.0f}% of rounds; realised "
                     "miss rate in those rounds {:.3f} (runs above alpha: {} of {}); intervals of the measured "
                     "candidates missed {:.1f}%",
                     s.alpha, s.considered, s.skipped, 100 * s.skipped_share, s.measured, s.considered_per_measurement,
                     100 * s.certified_rounds, s.miss_rate_certified, s.runs_over_alpha, s.runs,
                     100 * s.interval_miss_rate);
}

double optimum_of(const SearchComparison& c) {
  return c.strategies.empty() ? 0.0 : c.strategies.front().result.optimum_ms;
}

}  // namespace

std::vector<std::size_t> report_budgets(std::size_t budget, std::size_t longest_run) {
  std::vector<std::size_t> budgets;
  for (std::size_t b : {25, 50, 100, 200})
    if ((budget == 0 && b <= longest_run) || (budget > 0 && b <= budget)) budgets.push_back(b);
  const std::size_t last = budget > 0 ? budget : longest_run;
  if (last > 0 && std::find(budgets.begin(), budgets.end(), last) == budgets.end()) budgets.push_back(last);
  return budgets;
}

std::string text_report(const SearchComparison& c) {
  std::string out = fmt::format("{} ({}), space {}, optimum {:.4g} ms, {} seeds\n", c.kernel,
                                c.device.empty() ? c.source : c.device, c.space, optimum_of(c), c.seeds);
  out += "fraction of optimum = best time in the data / stored time of the best configuration measured\n";
  std::string header = fmt::format("{:>13}", "measurements");
  for (const auto& s : c.strategies) header += fmt::format(" {:>28}", fmt::format("{} mean ±se (p10)", s.strategy));
  out += header + "\n";
  std::vector<std::vector<BudgetSummary>> summaries;
  for (const auto& s : c.strategies) summaries.push_back(s.result.summary(c.budgets));
  for (std::size_t i = 0; i < c.budgets.size(); ++i) {
    std::string row = fmt::format("{:>13}", c.budgets[i]);
    for (const auto& s : summaries)
      row += fmt::format(" {:>28}", fmt::format("{:.3f} ±{:.3f} ({:.3f})", s[i].mean, s[i].standard_error, s[i].p10));
    out += row + "\n";
  }
  for (const auto& s : c.strategies) {
    const Means m = means_of(s.result);
    out += fmt::format("{}: {:.0f} simulated s of compiling and benchmarking per run, {:.2f} s of wall time\n",
                       s.strategy, m.simulated_seconds, m.wall_seconds);
    if (c.workers > 1)
      out += fmt::format("{}: on {} simulated workers, {:.0f} virtual s per run, workers busy {:.0f}% of it\n",
                         s.strategy, c.workers, m.virtual_seconds, 100 * m.utilisation);
    if (s.llm)
      out += fmt::format("{}: {}\n", s.strategy, llm_text(*s.llm, measurements_of(s.result), s.result.runs.size()));
    if (const auto sc = s.result.screening_summary(); sc.runs > 0)
      out += fmt::format("{}: {}\n", s.strategy, screening_text(sc));
  }
  return out;
}

std::string json_report(const SearchComparison& c) {
  nlohmann::json j;
  j["replay"] = c.source;
  j["kernel"] = c.kernel;
  j["device"] = c.device;
  j["space"] = c.space;
  j["model"] = c.model;
  j["seeds"] = c.seeds;
  j["optimum_ms"] = optimum_of(c);
  for (const auto& s : c.strategies) {
    const Means m = means_of(s.result);
    nlohmann::json js{{"strategy", s.strategy},
                      {"mean_simulated_seconds", m.simulated_seconds},
                      {"mean_wall_seconds", m.wall_seconds}};
    if (s.llm)
      js["llm"] = {{"prompts", s.llm->prompts},     {"requests", s.llm->requests},
                   {"cache_hits", s.llm->cache_hits}, {"failed_deferred", s.llm->failed},
                   {"retries", s.llm->retries},     {"measurements", measurements_of(s.result)}};
    if (const auto sc = s.result.screening_summary(); sc.runs > 0)
      js["screening"] = {{"alpha", sc.alpha},
                         {"considered", sc.considered},
                         {"screened_out", sc.skipped},
                         {"screened_out_share", sc.skipped_share},
                         {"measured", sc.measured},
                         {"considered_per_measurement", sc.considered_per_measurement},
                         {"certified_rounds", sc.certified_rounds},
                         {"miss_rate_certified_rounds", sc.miss_rate_certified},
                         {"miss_rate_all_rounds", sc.miss_rate},
                         {"runs_over_alpha", sc.runs_over_alpha},
                         {"runs", sc.runs},
                         {"interval_miss_rate_measured", sc.interval_miss_rate}};
    if (c.workers > 1) {
      js["workers"] = c.workers;
      js["mean_virtual_seconds"] = m.virtual_seconds;
      js["mean_utilisation"] = m.utilisation;
    }
    for (const auto& b : s.result.summary(c.budgets))
      js["fraction_of_optimum"].push_back(
          {{"measurements", b.budget}, {"mean", b.mean}, {"p10", b.p10}, {"standard_error", b.standard_error}});
    j["strategies"].push_back(js);
  }
  return j.dump(2);
}

void write_svg_report(const SearchComparison& c, const std::string& path) {
  SvgPlot plot(fmt::format("{} on {}: mean over {} seeds", c.kernel, c.device.empty() ? c.source : c.device, c.seeds),
               "measurements", "fraction of optimum (best in data / best found)");
  plot.size(720, 460).y_range(0, 1);
  for (const auto& s : c.strategies) {
    if (s.result.runs.empty()) continue;
    std::vector<double> x, y;
    const std::size_t n = s.result.runs.front().curve.size();
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0;
      for (const auto& r : s.result.runs) sum += r.curve[std::min(i, r.curve.size() - 1)];
      x.push_back(static_cast<double>(i + 1));
      y.push_back(sum / static_cast<double>(s.result.runs.size()));
    }
    plot.line(s.label.empty() ? s.strategy : s.label, x, y, {}, s.strategy == "random");
  }
  plot.save(path);
}

namespace {

std::size_t failed_of(const Trace& trace) {
  std::size_t failed = 0;
  for (const auto& e : trace.entries()) failed += e.measurement.ok() ? 0 : 1;
  return failed;
}

double per_second(std::size_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; }

nlohmann::json best_json(const TraceEntry& best) {
  return {{"config", best.config.to_string()}, {"median_ms", best.measurement.median_ms}, {"found_at", best.index}};
}

}  // namespace

std::string text_report(const MeasuredRun& r) {
  const TraceEntry* best = r.trace.best();
  std::string out;
  if (!r.farm) {
    out = fmt::format("{} on {}: {} measurements ({} failed), {:.1f} s of compiling and measuring\n", r.strategy,
                      r.device, r.trace.size(), failed_of(r.trace), r.trace.total_cost_s());
    out += best ? fmt::format("best: {:.4g} ms [{}], found at measurement {}\n", best->measurement.median_ms,
                              best->config.to_string(), best->index)
                : "no configuration ran successfully\n";
    return out;
  }
  out = fmt::format("{} over {} worker ranks: {} measurements ({} failed) in {:.2f} s ({:.1f} per s)\n", r.strategy,
                    r.farm->size(), r.trace.size(), failed_of(r.trace), r.wall_seconds,
                    per_second(r.trace.size(), r.wall_seconds));
  if (best)
    out += fmt::format("best: {:.4g} ms [{}], found at measurement {}{}\n", best->measurement.median_ms,
                       best->config.to_string(), best->index,
                       r.replay.empty() ? "" : fmt::format(" (optimum {:.4g} ms)", r.optimum_ms));
  for (const auto& w : *r.farm)
    out += fmt::format("rank {}: {} measurements{}\n", w.rank, w.measured, w.reason.empty() ? "" : ", " + w.reason);
  return out;
}

std::string json_report(const MeasuredRun& r) {
  const TraceEntry* best = r.trace.best();
  nlohmann::json j;
  if (!r.farm) {
    j = {{"kernel", r.kernel},           {"device", r.device},          {"strategy", r.strategy},
         {"measurements", r.trace.size()}, {"failed", failed_of(r.trace)}, {"seconds", r.trace.total_cost_s()}};
  } else {
    j = {{"strategy", r.strategy},
         {"workers", r.farm->size()},
         {"device", r.device},
         {"measurements", r.trace.size()},
         {"failed", failed_of(r.trace)},
         {"wall_seconds", r.wall_seconds},
         {"measurements_per_second", per_second(r.trace.size(), r.wall_seconds)},
         {"charged_seconds", r.trace.total_cost_s()}};
    if (!r.replay.empty()) j["replay"] = r.replay, j["optimum_ms"] = r.optimum_ms;
    else j["kernel"] = r.kernel;
  }
  if (best) j["best"] = best_json(*best);
  if (r.farm)
    for (const auto& w : *r.farm)
      j["ranks"].push_back({{"rank", w.rank}, {"device", w.device}, {"measured", w.measured}, {"lost", w.lost},
                            {"reason", w.reason}});
  return j.dump(2);
}

}  // namespace gpuforecast
