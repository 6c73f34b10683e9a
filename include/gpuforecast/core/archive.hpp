#pragma once
// Little-endian binary archive: the one byte format of the library. Model files and their
// sections (surrogates, calibrators) use it, and so do the compile cache files and the messages
// between the CUDA benchmarker and its worker processes. Reads are bounds-checked: a truncated
// or corrupted payload raises model_file_error naming the origin and offset, never a crash.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class ArchiveWriter {
 public:
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void i64(std::int64_t v);
  void f64(double v);
  void f32s(const std::vector<float>& v);
  void f64s(const std::vector<double>& v);
  void str(std::string_view s);
  void bytes(std::string_view b);  // length-prefixed blob (e.g. a nested archive)
  void f64_map(const std::map<std::string, double>& m);  // count, then name and value pairs
  [[nodiscard]] const std::string& data() const noexcept { return m_data; }
  // Moves the bytes out (the writer is left empty): for messages sent once.
  [[nodiscard]] std::string release() noexcept { return std::move(m_data); }

 private:
  std::string m_data;
};

class ArchiveReader {
 public:
  // `origin` names the file for error messages.
  ArchiveReader(std::string_view data, std::string origin);
  std::uint32_t u32();
  std::uint64_t u64();
  std::int64_t i64();
  double f64();
  std::vector<float> f32s();
  std::vector<double> f64s();
  std::string str();
  std::string bytes();
  std::map<std::string, double> f64_map();
  [[nodiscard]] bool at_end() const noexcept { return m_pos == m_data.size(); }
  [[nodiscard]] std::size_t position() const noexcept { return m_pos; }
  [[nodiscard]] const std::string& origin() const noexcept { return m_origin; }
  // Throws model_file_error "<origin>: at byte <pos>: <message>".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  void need(std::size_t n, const char* what);
  std::string_view m_data;
  std::size_t m_pos = 0;
  std::string m_origin;
};

}  // namespace gpuforecast
