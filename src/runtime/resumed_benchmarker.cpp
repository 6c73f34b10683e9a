#include "runtime/resumed_benchmarker.hpp"

namespace gpuforecast {

StoredMeasurements::StoredMeasurements(const CacheFile& file) {
  m_by_key.reserve(file.entries.size());
  for (const auto& e : file.entries) m_by_key.insert_or_assign(e.config.key(), e.measurement);
}

const Measurement* StoredMeasurements::find(const Config& config) const {
  auto it = m_by_key.find(config.key());
  return it == m_by_key.end() ? nullptr : &it->second;
}

}  // namespace gpuforecast
