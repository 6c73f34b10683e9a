#pragma once
// Internal: the Kernel Tuner cache parser, shared by read_kernel_tuner_cache and load_space
// (which needs to know, without parsing twice, whether a file is a T4 file instead), and the
// writer's text, shared by write_kernel_tuner_cache and KernelTunerCacheAppender.
#include <optional>
#include <string>
#include <string_view>

#include "gpuforecast/data/kernel_tuner_cache.hpp"

namespace gpuforecast::detail::data {

// Parses inflated JSON text. Returns nullopt, having looked at little more than the first
// top-level key, when the document is a T4 results file (top-level "results" or
// "schema_version"); throws input_error for everything else that is not a valid cache file.
[[nodiscard]] std::optional<CacheFile> parse_cache_or_t4(std::string_view json, const std::string& path);

// Kernel Tuner's text: the header up to and including `"cache": {`, and one entry line
// (`"key": {...}`, no separator), shared by write_kernel_tuner_cache and the appender.
[[nodiscard]] std::string cache_header_text(const CacheFile& file);
[[nodiscard]] std::string cache_entry_text(const CacheEntry& entry, const TuningSpace& space, const std::string& path);

// The folder a file lives in ("convolution_milo" for .../convolution_milo/A100.json.gz).
[[nodiscard]] std::string parent_folder_name(const std::string& path);

}  // namespace gpuforecast::detail::data
