#pragma once
// A fresh directory under the system temp dir, removed with everything in it at scope exit.
#include <atomic>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace gpuforecast::test {

class TempDir {
 public:
  TempDir() {
    static std::atomic<unsigned> counter{0};
    const auto base = std::filesystem::temp_directory_path();
    while (true) {
      m_path = base / ("gpuforecast-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
      if (std::filesystem::create_directory(m_path)) break;
    }
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return m_path; }

 private:
  std::filesystem::path m_path;
};

}  // namespace gpuforecast::test
