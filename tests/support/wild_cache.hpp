#pragma once
// A Kernel Tuner cache "from the wild": a real shared file with its device_name replaced, written
// as plain .json into a folder of the test's choosing (no T1 file beside it). Link ZLIB::ZLIB.
#include <catch2/catch.hpp>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpuforecast::test {

inline std::filesystem::path write_wild_cache(const std::filesystem::path& shared_gz, const std::filesystem::path& out,
                                              const std::string& device_name) {
  gzFile in = gzopen(shared_gz.string().c_str(), "rb");
  REQUIRE(in != nullptr);
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  gzclose(in);
  REQUIRE(n == 0);
  const std::string key = "\"device_name\": \"";
  const auto at = text.find(key);
  REQUIRE(at != std::string::npos);
  const auto end = text.find('"', at + key.size());
  text.replace(at + key.size(), end - at - key.size(), device_name);
  std::ofstream(out, std::ios::binary) << text;
  return out;
}

}  // namespace gpuforecast::test
