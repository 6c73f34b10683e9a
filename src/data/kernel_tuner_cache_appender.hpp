#pragma once
// A Kernel Tuner cache file written as a search goes, the way Kernel Tuner writes it: the header
// (and the entries known at the start), then one line per entry as it lands, flushed each time,
// and the closing braces at the end. A search killed at any moment leaves a file that
// read_kernel_tuner_cache reads back with every entry whose line was complete.
#include <cstddef>
#include <cstdio>
#include <string>

#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class KernelTunerCacheAppender {
 public:
  // Writes `start`'s header and entries to `path` (beside it first, then renamed over it: an
  // existing file is replaced whole or not at all) and leaves the cache open for appending.
  // Plain JSON only: appending to gzip would need a member per line, so a path ending in .gz is
  // an error.
  KernelTunerCacheAppender(std::string path, const CacheFile& start);
  KernelTunerCacheAppender(KernelTunerCacheAppender&& other) noexcept;
  KernelTunerCacheAppender& operator=(KernelTunerCacheAppender&&) = delete;
  KernelTunerCacheAppender(const KernelTunerCacheAppender&) = delete;
  KernelTunerCacheAppender& operator=(const KernelTunerCacheAppender&) = delete;
  // Lets go of the file; unless close() ran, the cache stays open, as after a crash.
  ~KernelTunerCacheAppender();

  // One line, flushed to the operating system before returning (a killed process loses
  // nothing; a power cut may, as no fsync is made per line). The config must be in the order of
  // the start file's parameters.
  void append(const CacheEntry& entry);
  // Writes the closing braces; the file is then a complete cache and appending is an error.
  void close();

  [[nodiscard]] const std::string& path() const noexcept { return m_path; }
  [[nodiscard]] std::size_t entries() const noexcept { return m_entries; }

 private:
  void write(const std::string& text);

  std::string m_path;
  TuningSpace m_space;
  std::FILE* m_file = nullptr;
  std::size_t m_entries = 0;
  bool m_closed = false;
};

}  // namespace gpuforecast
