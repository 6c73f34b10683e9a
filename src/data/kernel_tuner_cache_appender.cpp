#include "data/kernel_tuner_cache_appender.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "data/cache_parse.hpp"
#include "data/file_io.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

KernelTunerCacheAppender::KernelTunerCacheAppender(std::string path, const CacheFile& start)
    : m_path(std::move(path)), m_space(start.space) {
  if (detail::data::ends_with_gz(m_path))
    throw invalid_argument_error(fmt::format("{}: a cache written as the search goes is plain JSON; give a name "
                                             "without .gz",
                                             m_path));
  std::string text = detail::data::cache_header_text(start);
  for (const auto& e : start.entries) {
    text += m_entries == 0 ? "\n" : ",\n";
    text += detail::data::cache_entry_text(e, m_space, m_path);
    ++m_entries;
  }
  const std::string tmp = m_path + ".tmp";
  m_file = std::fopen(tmp.c_str(), "wb");
  if (!m_file) throw error(fmt::format("{}: cannot open for writing: {}", tmp, std::strerror(errno)));
  write(text);
  // The open handle follows the file through the rename, and every later line lands in it.
  std::error_code ec;
  std::filesystem::rename(tmp, m_path, ec);
  if (ec) {
    std::fclose(m_file);
    m_file = nullptr;
    throw error(fmt::format("{}: cannot rename {} into place: {}", m_path, tmp, ec.message()));
  }
}

KernelTunerCacheAppender::KernelTunerCacheAppender(KernelTunerCacheAppender&& other) noexcept
    : m_path(std::move(other.m_path)),
      m_space(std::move(other.m_space)),
      m_file(other.m_file),
      m_entries(other.m_entries),
      m_closed(other.m_closed) {
  other.m_file = nullptr;
}

KernelTunerCacheAppender::~KernelTunerCacheAppender() {
  if (m_file) std::fclose(m_file);
}

void KernelTunerCacheAppender::write(const std::string& text) {
  if (!m_file) throw error(fmt::format("{}: the cache file is not open", m_path));
  if (std::fwrite(text.data(), 1, text.size(), m_file) != text.size() || std::fflush(m_file) != 0)
    throw error(fmt::format("{}: write failed: {}", m_path, std::strerror(errno)));
}

void KernelTunerCacheAppender::append(const CacheEntry& entry) {
  if (m_closed) throw error(fmt::format("{}: appending to a closed cache file", m_path));
  // The separator goes before the entry, so that the file always ends after a complete entry.
  write((m_entries == 0 ? "\n" : ",\n") + detail::data::cache_entry_text(entry, m_space, m_path));
  ++m_entries;
}

void KernelTunerCacheAppender::close() {
  if (m_closed) return;
  write("}\n}\n");
  m_closed = true;
  std::fclose(m_file);
  m_file = nullptr;
}

}  // namespace gpuforecast
