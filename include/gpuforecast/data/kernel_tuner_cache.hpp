#pragma once
// Kernel Tuner cache files (.json, .json.gz): a header (device, kernel, problem size, parameter
// names and value lists, objective) and a `cache` map keyed by the comma-joined values.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct CacheEntry {
  Config config;
  // status ok: samples_ms = `times`, median_ms = median of times, ci from times;
  // failed: status from the `time` string, reason = that string. compile_ms, benchmark_ms kept.
  Measurement measurement;
  double mean_ms = 0;                  // Kernel Tuner's `time` (mean of `times`) when ok
  std::map<std::string, double> extra;  // every other numeric field: verification_time,
                                        // framework_time, strategy_time, GFLOP/s, GB/s ...
  std::string timestamp;
};

struct CacheFile {
  std::string path;
  std::string device_name;  // as written in the file; may be empty (then the file stem is used)
  std::string kernel_name;  // entry point, e.g. "convolution_kernel"
  std::string benchmark;    // space identity: the folder the file lives in (benchmark_hub layout)
  std::vector<std::int64_t> problem_size;
  std::string objective = "time";
  TuningSpace space;        // parameters from tune_params_keys/tune_params; no constraints
  std::vector<CacheEntry> entries;  // in file order
  // What was repaired while reading (also printed on stderr): a torn last line that was dropped.
  std::vector<std::string> warnings;
};

// Reads .json or .json.gz (decided by content, not name). Throws input_error naming the file
// and position (byte offset, or JSON path such as cache["16,1,1"].times[3]) for malformed,
// truncated, missing-key, non-numeric, negative or NaN data. Kernel Tuner's own unclosed
// append-only files (crash while tuning) are repaired as Kernel Tuner does; a last line cut in
// the middle (a write cut short) is dropped with a warning naming the file and line, and the
// complete entries before it are kept.
[[nodiscard]] CacheFile read_kernel_tuner_cache(const std::string& path);

// The same from bytes in memory (gzip or plain JSON); `name` stands for the file in messages
// and decides CacheFile::benchmark (its folder).
[[nodiscard]] CacheFile parse_kernel_tuner_cache(std::string_view bytes, const std::string& name);

// Writes a cache file readable by Kernel Tuner (gzip when path ends in .gz).
void write_kernel_tuner_cache(const CacheFile& file, const std::string& path);

}  // namespace gpuforecast
