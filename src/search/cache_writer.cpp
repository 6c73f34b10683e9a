#include "search/cache_writer.hpp"

#include <fmt/core.h>

#include <chrono>
#include <ctime>

#include "gpuforecast/core/error.hpp"
#include "data/kernel_tuner_cache_appender.hpp"

namespace gpuforecast {

CacheFile search_cache_header(const TuningSpace& space, const Candidate& prototype) {
  CacheFile file;
  file.device_name = prototype.device ? prototype.device->name : std::string{};
  file.kernel_name = prototype.spec && !prototype.spec->kernel_name.empty() ? prototype.spec->kernel_name : prototype.kernel;
  file.problem_size = prototype.problem_size;
  // The parameters only: constraints are the search's business, the cache holds results.
  file.space = TuningSpace(space.parameters(), {});
  return file;
}

namespace {
// Kernel Tuner's timestamp form, in UTC.
std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S+00:00", &tm);
  return text;
}
}  // namespace

KernelTunerCacheWriter::KernelTunerCacheWriter(std::string path) : m_path(std::move(path)) {}

KernelTunerCacheWriter::KernelTunerCacheWriter(std::string path, CacheFile earlier)
    : m_path(std::move(path)), m_earlier(std::move(earlier)) {}

KernelTunerCacheWriter::KernelTunerCacheWriter(KernelTunerCacheWriter&&) noexcept = default;
KernelTunerCacheWriter& KernelTunerCacheWriter::operator=(KernelTunerCacheWriter&&) noexcept = default;
KernelTunerCacheWriter::~KernelTunerCacheWriter() = default;

void KernelTunerCacheWriter::on_begin(const SearchBegin& e) {
  CacheFile start = search_cache_header(e.space, e.prototype);
  if (m_earlier) {
    start.entries = std::move(m_earlier->entries);
    m_earlier.reset();
    for (const auto& entry : start.entries) m_written.insert(entry.config.key());
  }
  m_out = std::make_unique<KernelTunerCacheAppender>(m_path, start);
}

void KernelTunerCacheWriter::on_measured(const SearchMeasured& e) {
  if (!m_out) throw error(fmt::format("{}: the cache writer got a measurement before the search began", m_path));
  if (!m_written.insert(e.config.key()).second) return;  // served from the earlier run's cache
  CacheEntry entry;
  entry.config = e.config;
  entry.measurement = e.measurement;
  entry.timestamp = utc_timestamp();
  m_out->append(entry);
}

void KernelTunerCacheWriter::on_end(const SearchEnd& /*e*/) {
  if (m_out) m_out->close();
}

}  // namespace gpuforecast
