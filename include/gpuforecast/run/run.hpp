#pragma once
// Carrying out a Plan: one search per seed (side by side when the plan allows), each with its
// own strategy, model, benchmarker and context, so the result is the same for any thread count.
// Running is apart from reporting: the Result holds every run's trace and counts, and the
// reporters (search/search_report.hpp, the command line's text, JSON and SVG) read it.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gpuforecast/stats/screening.hpp"
#include "gpuforecast/run/plan.hpp"
#include "gpuforecast/search/search_report.hpp"
#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct SeedRun {
  std::uint64_t seed = 0;
  Trace trace;
  std::vector<double> curve;  // fraction of optimum after 1..budget measurements
  double strategy_seconds = 0;  // wall time of the run
  // With several workers: virtual seconds until the last measurement landed, and the workers'
  // share of that time spent measuring.
  double virtual_seconds = 0;
  double utilisation = 0;
  // A strategy that screens its proposals (surrogate with screening on): every screened
  // proposal against the stored times, so the realised miss rate is known.
  ScreeningTally screening;
  // The same over the rounds whose rule certified a margin: the miss rate where screening acted,
  // not diluted by rounds that skipped nothing.
  ScreeningTally screening_certified;
  // Measured candidates that had a forecast (made before the measurement), and of those the ones
  // whose stored time fell outside the forecast's interval: how the intervals of the candidates
  // a search chose to measure held.
  std::size_t interval_checked = 0;
  std::size_t interval_misses = 0;
  // With Plan::rehearsal: every candidate the model forecast, measured or not, with its stored
  // time and the incumbent of that moment (data/screening_pairs.hpp): the calibration of a
  // search that screens on another device.
  std::vector<ScreeningPair> rehearsal;
  double screening_alpha = 0;        // the alpha its screening rule was given
  std::size_t screened_rounds = 0;   // rounds screened
  std::size_t certified_rounds = 0;  // of those, rounds whose rule certified a margin
  // Anomalies reported to the run's observers (an anomaly monitor's flags, the GPU's health
  // signals on a live search): measurements the run should not trust blindly.
  std::size_t anomalies = 0;
};

// Screening over the runs of a plan (all zero when no run screened).
struct ScreeningSummary {
  double alpha = 0;                  // the runs' screening alpha
  std::size_t runs = 0;              // runs that screened
  double considered = 0;             // proposals screened per run (mean)
  double skipped = 0;                // of those, screened out per run
  double measured = 0;               // measurements per run
  double considered_per_measurement = 0;
  double skipped_share = 0;          // screened out over considered, pooled over the runs
  double certified_rounds = 0;       // share of screened rounds whose rule certified a margin
  double miss_rate = 0;              // realised, mean over runs
  // Realised over the certified rounds only, mean over runs; and the runs where that exceeded alpha.
  double miss_rate_certified = 0;
  std::size_t runs_over_alpha = 0;
  // Measured candidates whose stored time fell outside their forecast's interval, pooled.
  double interval_miss_rate = 0;
};

struct Result {
  double optimum_ms = 0;
  std::vector<SeedRun> runs;
  [[nodiscard]] std::vector<BudgetSummary> summary(std::span<const std::size_t> budgets) const;
  // Over the runs that screened, each judged against the alpha its rule was given.
  [[nodiscard]] ScreeningSummary screening_summary() const;
};

// Throws invalid_argument_error for a plan without data or workers.
[[nodiscard]] Result run(const Plan& plan);

}  // namespace gpuforecast
