#pragma once
// Every measurement a search made, in order, with what it cost and the best result so far.
#include <cstddef>
#include <limits>
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

}  // namespace gpuforecast
