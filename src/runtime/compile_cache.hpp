#pragma once
// Content-addressed cache of compiled kernels: a bounded in-memory map in front of an optional
// on-disk directory (one file per key, written atomically, shared by processes). The key hashes
// everything that changes the output: NVRTC version, source, options, defines, name expression
// and target architecture.
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <list>
#include <vector>

#include "runtime/compiled_kernel.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// 128-bit content hash (two independent 64-bit FNV-1a-style streams with a final mix) of the
// parts, each length-prefixed so ("ab","c") != ("a","bc"); hex, 32 characters. Not
// cryptographic: the cache trusts its own directory.
[[nodiscard]] std::string content_key(const std::vector<std::string>& parts);

class CompileCache {
 public:
  // `directory` empty: memory only. `memory_entries`: most recently used entries kept in memory.
  explicit CompileCache(std::string directory = {}, std::size_t memory_entries = 4096);

  // Memory first, then disk (promoted to memory). nullptr on a miss or an unreadable file.
  [[nodiscard]] std::shared_ptr<const CompiledKernel> find(const std::string& key);
  void insert(const std::string& key, std::shared_ptr<const CompiledKernel> kernel);

  [[nodiscard]] const std::string& directory() const noexcept { return m_directory; }
  [[nodiscard]] std::size_t memory_hits() const;
  [[nodiscard]] std::size_t disk_hits() const;
  [[nodiscard]] std::size_t misses() const;

  // Serialised form used on disk (versioned; readers reject other versions).
  [[nodiscard]] static std::string serialize(const CompiledKernel& kernel);
  [[nodiscard]] static std::shared_ptr<CompiledKernel> deserialize(const std::string& bytes);

 private:
  std::string m_directory;
  std::size_t m_capacity;
  mutable std::mutex m_mutex;
  std::list<std::string> m_lru;  // front = most recent
  std::unordered_map<std::string, std::pair<std::shared_ptr<const CompiledKernel>, std::list<std::string>::iterator>> m_map;
  std::size_t m_memory_hits = 0, m_disk_hits = 0, m_misses = 0;
};

}  // namespace gpuforecast
