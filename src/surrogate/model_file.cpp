#include "gpuforecast/surrogate/model_file.hpp"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "core/value_archive.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace gpuforecast {

namespace {
constexpr std::string_view kMagic{"GFMODEL\0", 8};
constexpr std::size_t kHeader = 8 + 4 + 8;  // magic, version, payload length
constexpr std::size_t kTrailer = 4;         // CRC-32

std::uint32_t crc(std::string_view bytes) {
  uLong c = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large files in pieces.
  while (!bytes.empty()) {
    const std::size_t n = std::min<std::size_t>(bytes.size(), 1u << 30);
    c = crc32(c, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n));
    bytes.remove_prefix(n);
  }
  return static_cast<std::uint32_t>(c);
}
}  // namespace

const std::string* ModelFile::find(std::string_view name) const noexcept {
  for (const auto& [n, p] : sections)
    if (n == name) return &p;
  return nullptr;
}

void ModelFile::set(std::string name, std::string payload) {
  for (auto& [n, p] : sections)
    if (n == name) {
      p = std::move(payload);
      return;
    }
  sections.emplace_back(std::move(name), std::move(payload));
}

std::string encode_model_file(const ModelFile& file) {
  ArchiveWriter payload;
  payload.u64(file.sections.size());
  for (const auto& [name, data] : file.sections) {
    payload.str(name);
    payload.bytes(data);
  }
  ArchiveWriter out;
  std::string bytes(kMagic);
  out.u32(model_file_format_version);
  out.u64(payload.data().size());
  bytes += out.data();
  bytes += payload.data();
  ArchiveWriter tail;
  tail.u32(crc(bytes));
  bytes += tail.data();
  return bytes;
}

ModelFile decode_model_file(std::string_view bytes, const std::string& origin) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    if (bytes.size() < kMagic.size() && kMagic.substr(0, bytes.size()) == bytes)
      throw model_file_error(origin, fmt::format("truncated: {} bytes, shorter than the file header", bytes.size()));
    throw model_file_error(origin, "not a gpuforecast model file (bad magic number)");
  }
  if (bytes.size() < kHeader)
    throw model_file_error(origin, fmt::format("truncated: {} bytes, shorter than the {}-byte header", bytes.size(), kHeader));
  ArchiveReader head(bytes.substr(kMagic.size(), kHeader - kMagic.size()), origin);
  const std::uint32_t version = head.u32();
  const std::uint64_t length = head.u64();
  if (version > model_file_format_version)
    throw model_file_error(origin, fmt::format("written by a newer gpuforecast (model format version {}; this build reads "
                                               "up to version {}): upgrade gpuforecast to load it",
                                               version, model_file_format_version));
  if (version == 0) throw model_file_error(origin, "corrupted: model format version 0 does not exist");
  const std::uint64_t expected = kHeader + length + kTrailer;
  if (length > bytes.size() || bytes.size() < expected)
    throw model_file_error(origin, fmt::format("truncated: the header announces {} bytes but the file has {}",
                                               length > bytes.size() ? length : expected, bytes.size()));
  if (bytes.size() > expected)
    throw model_file_error(origin, fmt::format("corrupted: {} unexpected bytes after the end of the model",
                                               bytes.size() - expected));
  ArchiveReader tail(bytes.substr(kHeader + length, kTrailer), origin);
  const std::uint32_t stored = tail.u32();
  const std::uint32_t actual = crc(bytes.substr(0, kHeader + length));
  if (stored != actual)
    throw model_file_error(origin, fmt::format("corrupted: checksum mismatch (stored CRC-32 {:08x}, computed {:08x})",
                                               stored, actual));
  ArchiveReader r(bytes.substr(kHeader, length), origin);
  ModelFile file;
  const auto n = r.u64();
  if (n > length) r.fail("implausible section count");
  std::set<std::string> seen;
  for (std::uint64_t i = 0; i < n; ++i) {
    auto name = r.str();
    auto data = r.bytes();
    if (!seen.insert(name).second) r.fail(fmt::format("section \"{}\" appears twice", name));
    file.sections.emplace_back(std::move(name), std::move(data));
  }
  if (!r.at_end()) r.fail("unexpected bytes after the last section");
  return file;
}

void write_model_file(const std::string& path, const ModelFile& file) {
  const std::string bytes = encode_model_file(file);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw model_file_error(path, "cannot open for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw model_file_error(path, "write failed (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw model_file_error(path, "cannot replace the file: " + ec.message());
  }
}

ModelFile read_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw model_file_error(path, "cannot open (does the file exist?)");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw model_file_error(path, "read failed");
  return decode_model_file(bytes, path);
}

TrainingSummary TrainingSummary::of(std::span<const Observation> observations) {
  std::set<std::string> kernels, devices, sources;
  TrainingSummary s;
  for (const auto& o : observations) {
    kernels.insert(o.candidate.kernel);
    if (o.candidate.device) devices.insert(o.candidate.device->name);
    if (!o.source.empty()) sources.insert(o.source);
    ++s.observations;
    (o.measurement.ok() ? s.ok : s.failed) += 1;
  }
  s.kernels.assign(kernels.begin(), kernels.end());
  s.devices.assign(devices.begin(), devices.end());
  s.sources.assign(sources.begin(), sources.end());
  s.schemas = KernelSchema::of(observations);
  return s;
}

void set_surrogate_section(ModelFile& file, const AnySurrogate& surrogate) {
  ArchiveWriter w;
  save_surrogate_with_kind(w, surrogate);
  file.set("surrogate", w.data());
}

AnySurrogate surrogate_from(const ModelFile& file, const std::string& origin) {
  const std::string* s = file.find("surrogate");
  if (!s) throw model_file_error(origin, "has no \"surrogate\" section: not a trained model");
  // Named as the views section names its own: a truncated section says which, before its kind is read.
  ArchiveReader r(*s, origin + " [surrogate section]");
  return load_surrogate_with_kind(r, "surrogate");
}

namespace {

// Format 2 of the training section adds the parameter schemas after the counts.
constexpr std::uint32_t training_section_version = 2;

void write_schemas(ArchiveWriter& w, const std::vector<KernelSchema>& schemas) {
  w.u64(schemas.size());
  for (const auto& k : schemas) {
    w.str(k.kernel);
    w.u64(k.parameters.size());
    for (const auto& p : k.parameters) {
      w.str(p.name);
      w.u64(p.values.size());
      for (const auto& v : p.values) detail::write_value(w, v);
    }
  }
}

std::vector<KernelSchema> read_schemas(ArchiveReader& r, std::size_t bound) {
  auto count = [&] {
    const auto n = r.u64();
    if (n > bound) r.fail("implausible list length");
    return static_cast<std::size_t>(n);
  };
  std::vector<KernelSchema> out(count());
  for (auto& k : out) {
    k.kernel = r.str();
    k.parameters.resize(count());
    for (auto& p : k.parameters) {
      p.name = r.str();
      p.values.resize(count());
      for (auto& v : p.values) v = detail::read_value(r, "unknown parameter value type");
    }
  }
  return out;
}

}  // namespace

void set_training_section(ModelFile& file, const TrainingSummary& t) {
  ArchiveWriter w;
  w.u32(training_section_version);
  for (const auto* list : {&t.kernels, &t.devices, &t.sources}) {
    w.u64(list->size());
    for (const auto& s : *list) w.str(s);
  }
  w.u64(t.observations);
  w.u64(t.ok);
  w.u64(t.failed);
  write_schemas(w, t.schemas);
  file.set("training", w.data());
}

TrainingSummary training_summary_from(const ModelFile& file, const std::string& origin) {
  TrainingSummary t;
  const std::string* s = file.find("training");
  if (!s) return t;
  ArchiveReader r(*s, origin + " [training]");
  const auto version = r.u32();
  if (version > training_section_version)
    r.fail(fmt::format("training summary version {} is newer than this build reads", version));
  for (auto* list : {&t.kernels, &t.devices, &t.sources}) {
    const auto n = r.u64();
    if (n > s->size()) r.fail("implausible list length");
    for (std::uint64_t i = 0; i < n; ++i) list->push_back(r.str());
  }
  t.observations = r.u64();
  t.ok = r.u64();
  t.failed = r.u64();
  if (version >= 2) t.schemas = read_schemas(r, s->size());
  return t;
}

void save_surrogate(const std::string& path, const AnySurrogate& surrogate, const TrainingSummary& summary) {
  ModelFile file;
  set_surrogate_section(file, surrogate);
  set_training_section(file, summary);
  write_model_file(path, file);
}

AnySurrogate load_surrogate(const std::string& path) { return surrogate_from(read_model_file(path), path); }

}  // namespace gpuforecast
