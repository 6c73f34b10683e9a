#include "gpuforecast/search/trace.hpp"

#include <algorithm>
#include <cmath>

#include "gpuforecast/data/community_formats.hpp"

namespace gpuforecast {

void Trace::add(TraceEntry entry) {
  const TraceEntry* last = m_entries.empty() ? nullptr : &m_entries.back();
  entry.index = m_entries.size() + 1;
  entry.total_cost_s = (last ? last->total_cost_s : 0.0) + entry.cost_s;
  entry.best_ms = last ? last->best_ms : entry.best_ms;
  entry.best_index = last ? last->best_index : 0;
  if (entry.measurement.ok() && entry.measurement.median_ms < entry.best_ms) {
    entry.best_ms = entry.measurement.median_ms;
    entry.best_index = entry.index;
  }
  m_entries.push_back(std::move(entry));
}

const TraceEntry* Trace::best() const noexcept {
  if (m_entries.empty() || m_entries.back().best_index == 0) return nullptr;
  return &m_entries[m_entries.back().best_index - 1];
}

namespace {
std::string invalidity_of(const Measurement& m) {
  switch (m.status) {
    case Status::ok: return "correct";
    case Status::compile_failed: return "compile";
    case Status::launch_failed:
    case Status::runtime_failed:
    case Status::timeout: return "runtime";
    case Status::invalid: return "constraints";
  }
  return "runtime";
}
}  // namespace

void write_trace_t4(const Trace& trace, const std::string& path) {
  T4File file;
  file.path = path;
  double previous_elapsed = 0;
  for (const auto& e : trace.entries()) {
    T4Result r;
    r.config = e.config;
    r.measurement = e.measurement;
    r.invalidity = invalidity_of(e.measurement);
    // T4 splits wall time into parts; what is not compile or benchmark was spent by the strategy
    // (and the framework) between measurements.
    const double wall_ms = (e.elapsed_s - previous_elapsed) * 1000.0;
    r.search_algorithm_ms = std::max(0.0, wall_ms - e.measurement.compile_ms - e.measurement.benchmark_ms);
    previous_elapsed = e.elapsed_s;
    r.measurements.emplace_back("time", e.measurement.median_ms);
    r.measurements.emplace_back("cost_s", e.cost_s);
    r.measurements.emplace_back("best_so_far_ms", std::isfinite(e.best_ms) ? e.best_ms : 0.0);
    file.results.push_back(std::move(r));
  }
  write_t4(file, path);
}

}  // namespace gpuforecast
