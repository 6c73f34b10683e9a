#pragma once
// Writes `text` to `path`, replacing it; a file that cannot be opened or written is an error that
// names it, never a silently missing or truncated result (JSON tables, SVG plots, dumps).
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <string_view>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::detail {

inline void write_text_file(const std::filesystem::path& path, std::string_view text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw error(fmt::format("{}: cannot open for writing", path.string()));
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!f.flush()) throw error(fmt::format("{}: write failed", path.string()));
}

}  // namespace gpuforecast::detail
