#include "calibration/versioned_section.hpp"

#include <fmt/core.h>

namespace gpuforecast {

std::optional<VersionedSection> open_versioned_section(const ModelFile& file, std::string_view name,
                                                       std::uint32_t readable, const std::string& origin) {
  const std::string* payload = file.find(name);
  if (!payload) return std::nullopt;
  ArchiveReader r(*payload, fmt::format("{} [{} section]", origin, name));
  const auto version = r.u32();
  if (version > readable)
    r.fail(fmt::format("{} section version {} is newer than this library's {}", name, version, readable));
  return VersionedSection{std::move(r), version};
}

}  // namespace gpuforecast
