#pragma once
// A versioned section of a model file opened for reading, as the sections of calibration/ store
// themselves: a u32 version first, then the payload. One place for what each reader checks first.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "internal_api.hpp"

namespace gpuforecast GPUFORECAST_INTERNAL_API {

struct VersionedSection {
  ArchiveReader reader;   // after the version; its errors name the file and "[<name> section]"
  std::uint32_t version;  // the file's, at most `readable`
};

// nullopt when the file lacks the section; model_file_error (through the reader) when its version
// is newer than `readable`.
[[nodiscard]] std::optional<VersionedSection> open_versioned_section(const ModelFile& file, std::string_view name,
                                                                     std::uint32_t readable, const std::string& origin);

}  // namespace gpuforecast
