#pragma once
// A search observer that writes a Kernel Tuner cache file as the search goes: each measurement
// on its own line as it lands, flushed, and the file closed when the search ends. A killed
// search leaves every measurement it finished in the file, and `resume.hpp` continues it.
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/search/observer.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class KernelTunerCacheAppender;

// The header of this search's cache: device name, kernel (the entry point when the prototype
// has a KernelSpec naming one, else the space identity Candidate::kernel), problem size, the
// space's parameters in order. No entries.
[[nodiscard]] CacheFile search_cache_header(const TuningSpace& space, const Candidate& prototype);

class KernelTunerCacheWriter {
 public:
  // Starts a new cache at `path` when the search begins, replacing any file there.
  explicit KernelTunerCacheWriter(std::string path);
  // Continues `earlier` (read with read_search_cache): its entries are written again first,
  // and a measurement of a configuration it already holds is not written twice.
  KernelTunerCacheWriter(std::string path, CacheFile earlier);
  KernelTunerCacheWriter(KernelTunerCacheWriter&&) noexcept;
  KernelTunerCacheWriter& operator=(KernelTunerCacheWriter&&) noexcept;
  ~KernelTunerCacheWriter();

  void on_begin(const SearchBegin& e);
  void on_measured(const SearchMeasured& e);
  void on_end(const SearchEnd& e);

  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

 private:
  std::string m_path;
  std::optional<CacheFile> m_earlier;
  std::unordered_set<std::string> m_written;  // Config::key() of every entry in the file
  std::unique_ptr<KernelTunerCacheAppender> m_out;
};

}  // namespace gpuforecast
