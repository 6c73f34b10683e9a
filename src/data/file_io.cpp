#include "data/file_io.hpp"

#include <fmt/core.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::detail::data {

bool is_gzip(std::string_view bytes) noexcept {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

bool ends_with_gz(std::string_view path) noexcept { return path.ends_with(".gz"); }

namespace {
std::string read_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw input_error(path, "", "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, "", fmt::format("cannot open: {}", std::strerror(errno)));
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0) throw input_error(path, "", "cannot determine the file size");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  in.read(bytes.data(), size);
  if (in.gcount() != size) throw input_error(path, "", "short read");
  return bytes;
}

struct InflateStream {
  z_stream z{};
  bool live = false;
  ~InflateStream() {
    if (live) inflateEnd(&z);
  }
};
}  // namespace

std::string gunzip(std::string_view bytes, const std::string& name) {
  std::string out;
  // The ISIZE trailer (uncompressed size mod 2^32) of the last member is a good first guess.
  if (bytes.size() >= 18) {
    const auto* t = reinterpret_cast<const unsigned char*>(bytes.data() + bytes.size() - 4);
    const std::uint32_t isize = t[0] | (t[1] << 8) | (t[2] << 16) | (static_cast<std::uint32_t>(t[3]) << 24);
    if (isize < (1u << 30)) out.reserve(isize + 1);
  }
  InflateStream s;
  // 16 + MAX_WBITS: gzip wrapper only, so a zlib or raw stream is reported as corrupt.
  if (inflateInit2(&s.z, 16 + MAX_WBITS) != Z_OK) throw input_error(name, "", "zlib initialisation failed");
  s.live = true;
  s.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  std::size_t consumed = 0;
  constexpr std::size_t chunk = 1 << 20;
  while (true) {
    const std::size_t in_left = bytes.size() - consumed;
    s.z.avail_in = static_cast<uInt>(std::min<std::size_t>(in_left, 1u << 30));
    s.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + consumed));
    const std::size_t old = out.size();
    if (out.capacity() - old < chunk) out.reserve(std::max(out.capacity() * 2, old + chunk));
    out.resize(out.capacity());
    s.z.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    s.z.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - old, 1u << 30));
    const uInt avail_in_before = s.z.avail_in;
    const uInt avail_out_before = s.z.avail_out;
    const int rc = inflate(&s.z, Z_NO_FLUSH);
    consumed += avail_in_before - s.z.avail_in;
    out.resize(old + (avail_out_before - s.z.avail_out));
    if (rc == Z_STREAM_END) {
      // Another member may follow (concatenated gzip files are one valid gzip file).
      if (consumed < bytes.size() && is_gzip(bytes.substr(consumed))) {
        inflateReset(&s.z);
        continue;
      }
      if (consumed < bytes.size()) {
        // Trailing zero padding is tolerated (as gzip(1) does); anything else is corrupt.
        for (std::size_t i = consumed; i < bytes.size(); ++i)
          if (bytes[i] != '\0')
            throw input_error(name, fmt::format("byte {}", i), "trailing garbage after the gzip stream");
      }
      return out;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) {
      if (consumed >= bytes.size())
        throw input_error(name, fmt::format("byte {}", consumed),
                          "truncated gzip: the compressed stream ends before its end marker");
      continue;  // output buffer full: grow and go on
    }
    const char* msg = s.z.msg ? s.z.msg : "corrupt data";
    throw input_error(name, fmt::format("byte {}", consumed), fmt::format("corrupt gzip: {}", msg));
  }
}

std::string read_maybe_gzip(const std::string& path) {
  std::string bytes = read_bytes(path);
  if (is_gzip(bytes)) return gunzip(bytes, path);
  return bytes;
}

namespace {
std::string gzip_bytes(std::string_view text, const std::string& path) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw error(fmt::format("{}: zlib initialisation failed", path));
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const auto produced = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw error(fmt::format("{}: gzip compression failed ({})", path, rc));
  out.resize(produced);
  return out;
}
}  // namespace

void write_text(const std::string& path, std::string_view text) {
  const std::string bytes = ends_with_gz(path) ? gzip_bytes(text, path) : std::string(text);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw error(fmt::format("{}: cannot open for writing: {}", tmp, std::strerror(errno)));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw error(fmt::format("{}: write failed", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw error(fmt::format("{}: cannot rename {} into place: {}", path, tmp, ec.message()));
}

}  // namespace gpuforecast::detail::data
