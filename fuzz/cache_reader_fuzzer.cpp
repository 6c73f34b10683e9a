// libFuzzer target: any byte string is read as a measurement file, exactly as a file on disk
// would be (gzip detected by its magic bytes; a Kernel Tuner cache file, or a T4 results file
// detected by content). Only gpuforecast::error may escape the readers; anything else (a crash,
// a sanitizer report, another exception) is a finding. What parses must be self-consistent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();  // an invariant of a successful read is broken: a finding
}

void check_measurement(const gpuforecast::Measurement& m) {
  for (double s : m.samples_ms) check(s >= 0);
  if (m.ok() && !m.samples_ms.empty()) check(m.ci_low_ms <= m.median_ms && m.median_ms <= m.ci_high_ms);
  check(m.compile_ms >= 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string name = "fuzz/input/A100.json";
  try {
    const gpuforecast::CacheFile f = gpuforecast::parse_kernel_tuner_cache(bytes, name);
    const std::size_t n = f.space.parameters().size();
    for (const auto& e : f.entries) {
      check(e.config.size() == n);
      check(e.config.shared_names() == f.space.names());
      check_measurement(e.measurement);
      (void)e.config.key();
    }
    return 0;
  } catch (const gpuforecast::error& e) {
    // Not a cache file: if it says T4, read it as one (as load_space does).
    if (std::string_view(e.what()).find("T4 results file") == std::string_view::npos) return 0;
  }
  try {
    const gpuforecast::T4File t = gpuforecast::parse_t4(bytes, name);
    for (const auto& r : t.results) {
      check_measurement(r.measurement);
      (void)r.config.key();
    }
  } catch (const gpuforecast::error&) {
  }
  return 0;
}
