#include "farm/wire.hpp"

#include <memory>
#include <vector>

#include "core/value_archive.hpp"
#include "gpuforecast/core/archive.hpp"

namespace gpuforecast::detail::wire {

std::string encode_job(std::uint64_t id, const Config& config) {
  ArchiveWriter w;
  w.u64(id);
  w.u64(config.size());
  for (std::size_t i = 0; i < config.size(); ++i) {
    const Value& v = config[i];
    w.str(config.names()[i]);
    write_value(w, v);
  }
  return w.release();
}

Config decode_job(const std::string& bytes, std::uint64_t& id, ParameterNames& names) {
  ArchiveReader r(bytes, "farm job message");
  id = r.u64();
  const auto n = r.u64();
  if (n > bytes.size()) r.fail("parameter count larger than the message");
  std::vector<std::string> got;
  std::vector<Value> values;
  for (std::uint64_t i = 0; i < n; ++i) {
    got.push_back(r.str());
    values.push_back(read_value(r, "unknown value kind"));
  }
  if (!names || *names != got) names = std::make_shared<const std::vector<std::string>>(std::move(got));
  return Config(names, std::move(values));
}

std::string encode_result(std::uint64_t id, const Measurement& m) {
  ArchiveWriter w;
  w.u64(id);
  w.u64(static_cast<std::uint64_t>(m.status));
  w.f64s(m.samples_ms);
  w.f64(m.median_ms), w.f64(m.ci_low_ms), w.f64(m.ci_high_ms), w.f64(m.compile_ms), w.f64(m.benchmark_ms);
  w.f64(m.cost_s);
  w.str(m.reason), w.str(m.log);
  return w.release();
}

Measurement decode_result(const std::string& bytes, std::uint64_t& id) {
  ArchiveReader r(bytes, "farm result message");
  id = r.u64();
  Measurement m;
  const auto status = r.u64();
  if (status > static_cast<std::uint64_t>(Status::timeout)) r.fail("unknown status");
  m.status = static_cast<Status>(status);
  m.samples_ms = r.f64s();
  m.median_ms = r.f64(), m.ci_low_ms = r.f64(), m.ci_high_ms = r.f64(), m.compile_ms = r.f64(),
  m.benchmark_ms = r.f64();
  m.cost_s = r.f64();
  m.reason = r.str(), m.log = r.str();
  return m;
}

std::string encode_id(std::uint64_t id) {
  ArchiveWriter w;
  w.u64(id);
  return w.release();
}

std::uint64_t decode_id(const std::string& bytes) {
  ArchiveReader r(bytes, "farm message");
  return r.u64();
}

}  // namespace gpuforecast::detail::wire
