#pragma once
// SHA-256 (FIPS 180-4) of a file's bytes, as hex: how a benchmark checks that a recorded result
// was made from the very data file it reads now (the peers' records name each file's digest).
#include <fmt/core.h>

#include <array>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::bench {

class Sha256 {
 public:
  void update(std::string_view bytes) {
    for (const char c : bytes) {
      m_block[m_used++] = static_cast<std::uint8_t>(c);
      if (m_used == 64) compress_block();
    }
    m_length_bits += static_cast<std::uint64_t>(bytes.size()) * 8;
  }

  // The digest as 64 lowercase hex digits; the object is spent afterwards.
  [[nodiscard]] std::string hex() {
    const std::uint64_t length = m_length_bits;
    m_block[m_used++] = 0x80;
    if (m_used > 56) {
      while (m_used < 64) m_block[m_used++] = 0;
      compress_block();
    }
    while (m_used < 56) m_block[m_used++] = 0;
    for (int i = 7; i >= 0; --i) m_block[m_used++] = static_cast<std::uint8_t>(length >> (8 * i));
    compress_block();
    std::string out;
    for (const std::uint32_t word : m_state) out += fmt::format("{:08x}", word);
    return out;
  }

 private:
  static constexpr std::array<std::uint32_t, 64> round_constants{
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

  void compress_block() {
    std::array<std::uint32_t, 64> w{};
    for (int i = 0; i < 16; ++i)
      w[i] = (std::uint32_t{m_block[4 * i]} << 24) | (std::uint32_t{m_block[4 * i + 1]} << 16) |
             (std::uint32_t{m_block[4 * i + 2]} << 8) | std::uint32_t{m_block[4 * i + 3]};
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = std::rotr(w[i - 15], 7) ^ std::rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = std::rotr(w[i - 2], 17) ^ std::rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, h] = m_state;
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 = h + (std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                               round_constants[i] + w[i];
      const std::uint32_t t2 = (std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    const std::array<std::uint32_t, 8> add{a, b, c, d, e, f, g, h};
    for (int i = 0; i < 8; ++i) m_state[i] += add[i];
    m_used = 0;
  }

  std::array<std::uint32_t, 8> m_state{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<std::uint8_t, 64> m_block{};
  std::size_t m_used = 0;
  std::uint64_t m_length_bits = 0;
};

inline std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex();
}

// The digest of a file's bytes as stored (a .gz file's compressed bytes); an unreadable file is
// an error naming it.
inline std::string sha256_of_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw input_error(path.string(), "0", "cannot open to compute its SHA-256");
  Sha256 h;
  std::string chunk(1 << 16, '\0');
  while (f.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || f.gcount() > 0)
    h.update(std::string_view(chunk.data(), static_cast<std::size_t>(f.gcount())));
  if (f.bad()) throw input_error(path.string(), "0", "read failed while computing its SHA-256");
  return h.hex();
}

}  // namespace gpuforecast::bench
