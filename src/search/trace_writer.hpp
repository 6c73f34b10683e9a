#pragma once
// A search observer that writes the trace in the community T4 results format when the search
// ends (gzip when the path ends in .gz). For results that survive a crash, see cache_writer.hpp.
#include <string>

#include "gpuforecast/search/observer.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class T4TraceWriter {
 public:
  explicit T4TraceWriter(std::string path) : m_path(std::move(path)) {}
  void on_end(const SearchEnd& e) const { write_trace_t4(e.trace, m_path); }
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

 private:
  std::string m_path;
};

}  // namespace gpuforecast
