#pragma once
// Little-endian length-prefixed byte records: the compile cache files and the messages between
// the benchmarker and its worker processes. Readers throw std::runtime_error on truncation.
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuforecast::detail {

class ByteWriter {
 public:
  void u64(std::uint64_t v) { m_out.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f64(double v) { m_out.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) { u64(s.size()); m_out += s; }
  void doubles(const std::vector<double>& v) { u64(v.size()); for (double d : v) f64(d); }
  void features(const std::map<std::string, double>& f) { u64(f.size()); for (const auto& [k, v] : f) { str(k); f64(v); } }
  [[nodiscard]] std::string& bytes() noexcept { return m_out; }

 private:
  std::string m_out;
};

class ByteReader {
 public:
  explicit ByteReader(const std::string& in) : m_in(in) {}
  std::uint64_t u64() { std::uint64_t v; take(&v, sizeof v); return v; }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  double f64() { double v; take(&v, sizeof v); return v; }
  std::string str() {
    const std::uint64_t n = u64();
    if (n > m_in.size() - m_pos) throw std::runtime_error("truncated record");
    std::string s = m_in.substr(m_pos, n);
    m_pos += n;
    return s;
  }
  std::vector<double> doubles() {
    const std::uint64_t n = u64();
    if (n > (m_in.size() - m_pos) / 8) throw std::runtime_error("truncated record");
    std::vector<double> v(n);
    for (auto& d : v) d = f64();
    return v;
  }
  std::map<std::string, double> features() {
    const std::uint64_t n = u64();
    std::map<std::string, double> f;
    for (std::uint64_t i = 0; i < n; ++i) { std::string k = str(); f[k] = f64(); }
    return f;
  }
  [[nodiscard]] bool done() const noexcept { return m_pos == m_in.size(); }

 private:
  void take(void* p, std::size_t n) {
    if (n > m_in.size() - m_pos) throw std::runtime_error("truncated record");
    std::memcpy(p, m_in.data() + m_pos, n);
    m_pos += n;
  }
  const std::string& m_in;
  std::size_t m_pos = 0;
};

}  // namespace gpuforecast::detail
