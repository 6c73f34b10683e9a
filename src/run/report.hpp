#pragma once
// Reporting apart from running: the Results of one or more strategies run on the same space and
// seeds, as a text table, as JSON, or as an SVG plot of the mean curves; and one run measured
// on a GPU or a farm, as text or JSON. The command line chooses among them (`gpuforecast search
// --json / --plot`); nothing here runs a search.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpuforecast/run/run.hpp"
#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// A language model's calls during a run (--surrogate llm): the study's cost is measurements
// plus questions.
struct LlmCalls {
  std::size_t prompts = 0, requests = 0, cache_hits = 0, failed = 0, retries = 0;
};

struct StrategyResult {
  std::string strategy;  // its name, e.g. "surrogate"
  std::string label;     // in the plot's legend (empty: the name)
  Result result;
  std::optional<LlmCalls> llm;
};

// What the runs were, for the report's header; every strategy ran on the same space and seeds.
struct SearchComparison {
  std::string source;  // the replayed file, as given
  std::string kernel;
  std::string device;
  std::string space;   // describe_replay_space()
  std::string model;   // a pre-trained model file, if any
  std::size_t seeds = 0;
  std::size_t workers = 1;
  std::vector<std::size_t> budgets;  // the rows of the tables
  std::vector<StrategyResult> strategies;
};

// 25, 50, 100, 200 up to the budget (or, without one, up to the longest run), and the budget.
[[nodiscard]] std::vector<std::size_t> report_budgets(std::size_t budget, std::size_t longest_run);

[[nodiscard]] std::string text_report(const SearchComparison& comparison);
[[nodiscard]] std::string json_report(const SearchComparison& comparison);
// The mean fraction of the optimum after each measurement, one line per strategy.
void write_svg_report(const SearchComparison& comparison, const std::string& path);

// A worker of a measurement farm, as its coordinator saw it.
struct WorkerReport {
  int rank = 0;
  std::string device;        // what it measures on
  std::size_t measured = 0;  // results it returned
  bool lost = false;
  std::string reason;  // why it was lost or refused
};

// One run measured by the caller's back end: on one GPU (`search --kernel`), or on a farm
// (`search --mpi`), where the workers and the wall time are reported too.
struct MeasuredRun {
  std::string strategy;
  std::string device;
  Trace trace;
  std::string kernel;    // the T1 file measured live
  std::string replay;    // or the file a replay farm served, with its optimum
  double optimum_ms = 0;
  std::optional<std::vector<WorkerReport>> farm;  // the farm's worker ranks
  double wall_seconds = 0;                         // of a farm's search
};

[[nodiscard]] std::string text_report(const MeasuredRun& run);
[[nodiscard]] std::string json_report(const MeasuredRun& run);

}  // namespace gpuforecast
