#pragma once
// Every measurement a search made, in order, with what it cost and the best result so far; and
// how good a search was: the fraction of the optimum reached after n measurements, over seeds.
#include <cstddef>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct TraceEntry {
  std::size_t index = 0;     // 1-based measurement count
  Config config;
  Measurement measurement;
  double cost_s = 0;         // this measurement's charge
  double total_cost_s = 0;   // charged so far, this one included
  double elapsed_s = 0;      // wall-clock seconds since the search started (strategy time included)
  double best_ms = std::numeric_limits<double>::infinity();  // best ok median so far
  std::size_t best_index = 0;  // entry holding best_ms (0: nothing ok yet)
};

class Trace {
 public:
  void add(TraceEntry entry);  // fills index, total_cost_s, best_ms, best_index
  [[nodiscard]] const std::vector<TraceEntry>& entries() const noexcept { return m_entries; }
  [[nodiscard]] std::size_t size() const noexcept { return m_entries.size(); }
  [[nodiscard]] bool empty() const noexcept { return m_entries.empty(); }
  [[nodiscard]] double total_cost_s() const noexcept { return m_entries.empty() ? 0 : m_entries.back().total_cost_s; }
  // Best ok entry, or nullptr.
  [[nodiscard]] const TraceEntry* best() const noexcept;

 private:
  std::vector<TraceEntry> m_entries;
};

// Writes the trace in the community T4 results format (gzip when path ends in .gz).
void write_trace_t4(const Trace& trace, const std::string& path);

// curve[n-1] = optimum_ms / (best time among the configurations measured in the first n),
// n = 1..length; 0 before anything valid was measured; a trace shorter than `length` holds its
// last value. Times are `reference_ms(config)` when given (replay: the stored median, so the
// noise of one replayed run neither flatters nor hurts a strategy), else the measured medians.
[[nodiscard]] std::vector<double> fraction_of_optimum_curve(
    const Trace& trace, double optimum_ms, std::size_t length,
    const std::function<double(const Config&)>& reference_ms = {});

struct BudgetSummary {
  std::size_t budget = 0;  // measurements
  double mean = 0;         // mean fraction of optimum over seeds
  double p10 = 0;          // 10th percentile over seeds (linear interpolation)
  // Standard error of the mean (sample standard deviation / sqrt(seeds); 0 below 2 seeds). On
  // the needle-like spaces a 20-seed mean moves by several of these between seed sets, so two
  // strategies closer than about twice the larger one are not told apart by the run.
  double standard_error = 0;
  std::size_t seeds = 0;
};

// One summary per budget; curves shorter than a budget use their last value.
[[nodiscard]] std::vector<BudgetSummary> summarise_curves(std::span<const std::vector<double>> curves,
                                                          std::span<const std::size_t> budgets);

// q in [0, 1], linear interpolation between order statistics; 0 for an empty sample.
[[nodiscard]] double percentile(std::vector<double> values, double q);

}  // namespace gpuforecast
