#include "gpuforecast/core/archive.hpp"

#include <fmt/core.h>

#include <bit>
#include <cstring>
#include <limits>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

static_assert(std::endian::native == std::endian::little,
              "model files are little-endian; add byte swapping before porting to a big-endian host");

namespace {
template <class T>
void append_raw(std::string& out, const T& v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}
}  // namespace

void ArchiveWriter::u32(std::uint32_t v) { append_raw(m_data, v); }
void ArchiveWriter::u64(std::uint64_t v) { append_raw(m_data, v); }
void ArchiveWriter::i64(std::int64_t v) { append_raw(m_data, v); }
void ArchiveWriter::f64(double v) { append_raw(m_data, v); }

void ArchiveWriter::f32s(const std::vector<float>& v) {
  u64(v.size());
  if (!v.empty()) m_data.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

void ArchiveWriter::f64s(const std::vector<double>& v) {
  u64(v.size());
  if (!v.empty()) m_data.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

void ArchiveWriter::str(std::string_view s) {
  u64(s.size());
  m_data.append(s.data(), s.size());
}

void ArchiveWriter::bytes(std::string_view b) { str(b); }

void ArchiveWriter::f64_map(const std::map<std::string, double>& m) {
  u64(m.size());
  for (const auto& [name, value] : m) {
    str(name);
    f64(value);
  }
}

ArchiveReader::ArchiveReader(std::string_view data, std::string origin) : m_data(data), m_origin(std::move(origin)) {}

void ArchiveReader::fail(const std::string& message) const {
  throw model_file_error(m_origin, fmt::format("at byte {}: {}", m_pos, message));
}

void ArchiveReader::need(std::size_t n, const char* what) {
  if (n > m_data.size() - m_pos)
    fail(fmt::format("truncated: {} needs {} bytes but only {} remain", what, n, m_data.size() - m_pos));
}

namespace {
template <class T>
T read_raw(std::string_view data, std::size_t& pos) {
  T v;
  std::memcpy(&v, data.data() + pos, sizeof(T));
  pos += sizeof(T);
  return v;
}
}  // namespace

std::uint32_t ArchiveReader::u32() {
  need(4, "u32");
  return read_raw<std::uint32_t>(m_data, m_pos);
}
std::uint64_t ArchiveReader::u64() {
  need(8, "u64");
  return read_raw<std::uint64_t>(m_data, m_pos);
}
std::int64_t ArchiveReader::i64() {
  need(8, "i64");
  return read_raw<std::int64_t>(m_data, m_pos);
}
double ArchiveReader::f64() {
  need(8, "f64");
  return read_raw<double>(m_data, m_pos);
}

std::vector<float> ArchiveReader::f32s() {
  const std::uint64_t n = u64();
  if (n > (m_data.size() - m_pos) / sizeof(float))
    fail(fmt::format("truncated or corrupted: float array of {} elements exceeds the {} bytes left", n,
                     m_data.size() - m_pos));
  std::vector<float> v(n);
  if (n) std::memcpy(v.data(), m_data.data() + m_pos, n * sizeof(float));
  m_pos += n * sizeof(float);
  return v;
}

std::vector<double> ArchiveReader::f64s() {
  const std::uint64_t n = u64();
  if (n > (m_data.size() - m_pos) / sizeof(double))
    fail(fmt::format("truncated or corrupted: double array of {} elements exceeds the {} bytes left", n,
                     m_data.size() - m_pos));
  std::vector<double> v(n);
  if (n) std::memcpy(v.data(), m_data.data() + m_pos, n * sizeof(double));
  m_pos += n * sizeof(double);
  return v;
}

std::string ArchiveReader::str() {
  const std::uint64_t n = u64();
  if (n > m_data.size() - m_pos)
    fail(fmt::format("truncated or corrupted: string of {} bytes exceeds the {} bytes left", n, m_data.size() - m_pos));
  std::string s(m_data.substr(m_pos, n));
  m_pos += n;
  return s;
}

std::string ArchiveReader::bytes() { return str(); }

std::map<std::string, double> ArchiveReader::f64_map() {
  const std::uint64_t n = u64();
  // Each entry takes at least 16 bytes (an empty name's length and the value).
  if (n > (m_data.size() - m_pos) / 16)
    fail(fmt::format("truncated or corrupted: map of {} entries exceeds the {} bytes left", n, m_data.size() - m_pos));
  std::map<std::string, double> m;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string name = str();
    m[std::move(name)] = f64();
  }
  return m;
}

}  // namespace gpuforecast
