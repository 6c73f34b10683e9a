#include "runtime/compile_cache.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "gpuforecast/core/archive.hpp"

namespace gpuforecast {

namespace {
constexpr const char* kMagic = "gpuforecast-compiled-kernel";
constexpr std::uint64_t kVersion = 1;

std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}
}  // namespace

std::string content_key(const std::vector<std::string>& parts) {
  std::uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  auto feed = [&](unsigned char c) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ c) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
  };
  for (const auto& p : parts) {
    std::uint64_t n = p.size();
    for (int i = 0; i < 8; ++i) feed(static_cast<unsigned char>(n >> (8 * i)));
    for (unsigned char c : p) feed(c);
  }
  return fmt::format("{:016x}{:016x}", mix(a), mix(b ^ a));
}

CompileCache::CompileCache(std::string directory, std::size_t memory_entries)
    : m_directory(std::move(directory)), m_capacity(std::max<std::size_t>(memory_entries, 1)) {
  if (!m_directory.empty()) std::filesystem::create_directories(m_directory);
}

std::shared_ptr<const CompiledKernel> CompileCache::find(const std::string& key) {
  {
    std::lock_guard lock(m_mutex);
    if (auto it = m_map.find(key); it != m_map.end()) {
      m_lru.splice(m_lru.begin(), m_lru, it->second.second);
      ++m_memory_hits;
      return it->second.first;
    }
  }
  if (!m_directory.empty()) {
    std::ifstream in(std::filesystem::path(m_directory) / (key + ".gfk"), std::ios::binary);
    if (in) {
      std::ostringstream ss;
      ss << in.rdbuf();
      if (auto k = deserialize(ss.str()); k && k->key == key) {
        std::shared_ptr<const CompiledKernel> shared = std::move(k);
        {
          std::lock_guard lock(m_mutex);
          ++m_disk_hits;
        }
        insert(key, shared);
        return shared;
      }
    }
  }
  std::lock_guard lock(m_mutex);
  ++m_misses;
  return nullptr;
}

void CompileCache::insert(const std::string& key, std::shared_ptr<const CompiledKernel> kernel) {
  bool write = false;
  {
    std::lock_guard lock(m_mutex);
    if (auto it = m_map.find(key); it != m_map.end()) {
      it->second.first = kernel;
      m_lru.splice(m_lru.begin(), m_lru, it->second.second);
    } else {
      m_lru.push_front(key);
      m_map.emplace(key, std::make_pair(kernel, m_lru.begin()));
      write = true;
      while (m_map.size() > m_capacity) {
        m_map.erase(m_lru.back());
        m_lru.pop_back();
      }
    }
  }
  if (write && !m_directory.empty()) {
    // Write to a private name, then rename: readers in other processes never see half a file.
    const auto final_path = std::filesystem::path(m_directory) / (key + ".gfk");
    if (std::filesystem::exists(final_path)) return;
    const auto tmp = std::filesystem::path(m_directory) / fmt::format(".{}.{}.tmp", key, ::getpid());
    {
      std::ofstream out(tmp, std::ios::binary);
      const std::string bytes = serialize(*kernel);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) return;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, final_path, ec);
    if (ec) std::filesystem::remove(tmp, ec);
  }
}

std::size_t CompileCache::memory_hits() const { std::lock_guard lock(m_mutex); return m_memory_hits; }
std::size_t CompileCache::disk_hits() const { std::lock_guard lock(m_mutex); return m_disk_hits; }
std::size_t CompileCache::misses() const { std::lock_guard lock(m_mutex); return m_misses; }

std::string CompileCache::serialize(const CompiledKernel& k) {
  ArchiveWriter w;
  w.str(kMagic);
  w.u64(kVersion);
  w.u64(k.ok ? 1 : 0);
  w.str(k.log);
  w.str(k.target);
  w.u64(k.is_cubin ? 1 : 0);
  w.str(k.image);
  w.str(k.ptx);
  w.str(k.lowered_name);
  w.f64(k.compile_ms);
  w.f64_map(k.features);
  w.str(k.key);
  return w.release();
}

std::shared_ptr<CompiledKernel> CompileCache::deserialize(const std::string& bytes) {
  try {
    ArchiveReader r(bytes, "compile cache entry");
    if (r.str() != kMagic || r.u64() != kVersion) return nullptr;
    auto k = std::make_shared<CompiledKernel>();
    k->ok = r.u64() != 0;
    k->log = r.str();
    k->target = r.str();
    k->is_cubin = r.u64() != 0;
    k->image = r.str();
    k->ptx = r.str();
    k->lowered_name = r.str();
    k->compile_ms = r.f64();
    k->features = r.f64_map();
    k->key = r.str();
    if (!r.at_end()) return nullptr;
    return k;
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace gpuforecast
