#include "tabular.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <cmath>
#include <limits>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::detail {

namespace {
std::string problem_key(const Candidate& c) {
  std::string s;
  for (std::size_t i = 0; i < c.problem_size.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(c.problem_size[i]);
  }
  return s;
}
}  // namespace

std::string kernel_key(const Candidate& c) { return c.kernel + "|" + problem_key(c); }
std::string group_key(const Candidate& c) { return kernel_key(c) + "|" + (c.device ? c.device->name : std::string()); }

std::size_t TrainingRows::ok_count() const noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < rows(); ++i) n += ok(i) ? 1 : 0;
  return n;
}

void TrainingRows::append(const FeatureEncoder& encoder, std::span<const Observation> observations) {
  if (dim == 0) dim = encoder.dimension();
  if (dim != encoder.dimension()) throw invalid_argument_error("training rows and feature encoder disagree on width");
  std::vector<Candidate> candidates;
  candidates.reserve(observations.size());
  for (const auto& o : observations) candidates.push_back(o.candidate);
  const auto encoded = encoder.encode(candidates);
  x.insert(x.end(), encoded.begin(), encoded.end());
  std::unordered_map<std::string, std::uint32_t> index;
  for (std::size_t g = 0; g < group_keys.size(); ++g) index.emplace(group_keys[g], static_cast<std::uint32_t>(g));
  for (const auto& o : observations) {
    const auto& m = o.measurement;
    if (m.ok()) {
      if (!(m.median_ms > 0) || !std::isfinite(m.median_ms))
        throw invalid_argument_error(fmt::format("observation {} from {} is ok but its median {} ms is not positive",
                                                 o.candidate.describe(), o.source, m.median_ms));
      log_ms.push_back(std::log(m.median_ms));
    } else {
      log_ms.push_back(std::numeric_limits<double>::quiet_NaN());
    }
    const auto key = group_key(o.candidate);
    auto [it, inserted] = index.try_emplace(key, static_cast<std::uint32_t>(group_keys.size()));
    if (inserted) {
      group_keys.push_back(key);
      group_kernel_keys.push_back(kernel_key(o.candidate));
    }
    group.push_back(it->second);
  }
}

void TrainingRows::save(ArchiveWriter& w) const {
  write_tag(w, "rows", 1);
  w.u64(dim);
  w.f32s(std::vector<float>(x.begin(), x.end()));
  w.f64s(log_ms);
  std::vector<double> g(group.begin(), group.end());
  w.f64s(g);
  w.u64(group_keys.size());
  for (std::size_t i = 0; i < group_keys.size(); ++i) {
    w.str(group_keys[i]);
    w.str(group_kernel_keys[i]);
  }
}

TrainingRows TrainingRows::load(ArchiveReader& r) {
  expect_tag(r, "rows", 1);
  TrainingRows t;
  t.dim = r.u64();
  const auto xf = r.f32s();
  t.x.assign(xf.begin(), xf.end());
  t.log_ms = r.f64s();
  const auto g = r.f64s();
  const auto ng = r.u64();
  if (ng > g.size() + 1) r.fail("implausible group count in training rows");
  for (std::uint64_t i = 0; i < ng; ++i) {
    t.group_keys.push_back(r.str());
    t.group_kernel_keys.push_back(r.str());
  }
  if (t.dim == 0 || t.x.size() != t.log_ms.size() * t.dim || g.size() != t.log_ms.size())
    r.fail("training rows have inconsistent sizes");
  for (double v : g) {
    if (!(v >= 0) || v >= static_cast<double>(ng)) r.fail("training row names a group that does not exist");
    t.group.push_back(static_cast<std::uint32_t>(v));
  }
  return t;
}

void GroupNormaliser::fit(const TrainingRows& rows) {
  const std::size_t ng = rows.group_keys.size();
  std::vector<double> sum(ng, 0.0);
  std::vector<std::size_t> n(ng, 0);
  double total = 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    if (!rows.ok(i)) continue;
    sum[rows.group[i]] += rows.log_ms[i];
    ++n[rows.group[i]];
    total += rows.log_ms[i];
    ++count;
  }
  m_global = count ? total / static_cast<double>(count) : 0.0;
  std::unordered_map<std::string, std::pair<double, std::size_t>> kernel_sum;
  m_group_offset.assign(ng, m_global);
  m_by_group.clear();
  m_by_kernel.clear();
  for (std::size_t g = 0; g < ng; ++g) {
    if (!n[g]) continue;
    m_group_offset[g] = sum[g] / static_cast<double>(n[g]);
    m_by_group[rows.group_keys[g]] = m_group_offset[g];
    auto& ks = kernel_sum[rows.group_kernel_keys[g]];
    ks.first += m_group_offset[g];
    ++ks.second;
  }
  for (const auto& [k, v] : kernel_sum) m_by_kernel[k] = v.first / static_cast<double>(v.second);
  // Groups with failures only: use the kernel fallback so they are not pulled to the global mean.
  for (std::size_t g = 0; g < ng; ++g)
    if (!n[g]) {
      auto it = m_by_kernel.find(rows.group_kernel_keys[g]);
      if (it != m_by_kernel.end()) m_group_offset[g] = it->second;
    }
}

double GroupNormaliser::offset(const Candidate& c) const {
  if (auto it = m_by_group.find(group_key(c)); it != m_by_group.end()) return it->second;
  if (auto it = m_by_kernel.find(kernel_key(c)); it != m_by_kernel.end()) return it->second;
  return m_global;
}

std::vector<double> GroupNormaliser::targets(const TrainingRows& rows) const {
  std::vector<double> y(rows.rows());
  for (std::size_t i = 0; i < rows.rows(); ++i) y[i] = rows.log_ms[i] - m_group_offset[rows.group[i]];
  return y;
}

void GroupNormaliser::save(ArchiveWriter& w) const {
  write_tag(w, "norm", 1);
  w.f64(m_global);
}

GroupNormaliser GroupNormaliser::load(ArchiveReader& r, const TrainingRows& rows) {
  expect_tag(r, "norm", 1);
  GroupNormaliser n;
  n.fit(rows);  // offsets are a pure function of the rows; only check they agree
  const double g = r.f64();
  if (!(std::abs(g - n.m_global) <= 1e-6 * (1.0 + std::abs(g)))) r.fail("group offsets do not match the training rows");
  return n;
}

void GroupNormaliser::save_offsets(ArchiveWriter& w) const {
  write_tag(w, "offsets", 1);
  w.f64(m_global);
  w.f64_map(std::map<std::string, double>(m_by_group.begin(), m_by_group.end()));
  w.f64_map(std::map<std::string, double>(m_by_kernel.begin(), m_by_kernel.end()));
}

GroupNormaliser GroupNormaliser::load_offsets(ArchiveReader& r) {
  expect_tag(r, "offsets", 1);
  GroupNormaliser n;
  n.m_global = r.f64();
  for (const auto& [k, v] : r.f64_map()) n.m_by_group.emplace(k, v);
  for (const auto& [k, v] : r.f64_map()) n.m_by_kernel.emplace(k, v);
  const auto finite = [](double v) { return std::isfinite(v); };
  if (!finite(n.m_global) || !std::all_of(n.m_by_group.begin(), n.m_by_group.end(), [&](auto& p) { return finite(p.second); }) ||
      !std::all_of(n.m_by_kernel.begin(), n.m_by_kernel.end(), [&](auto& p) { return finite(p.second); }))
    r.fail("group offsets: a stored offset is not finite");
  return n;
}

std::vector<Forecast> to_forecasts(std::span<const Candidate> candidates, const GroupNormaliser& norm,
                                   std::span<const RowPrediction> rows) {
  std::vector<Forecast> out(candidates.size());
  std::unordered_map<std::string, double> cache;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    const auto key = group_key(c);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, norm.offset(c)).first;
    const double o = it->second;
    const auto& p = rows[i];
    Forecast& f = out[i];
    f.median_ms = std::exp(o + p.mean);
    f.lower_ms = std::exp(o + std::min(p.lower, p.mean));
    f.upper_ms = std::exp(o + std::max(p.upper, p.mean));
    f.p_fail = std::clamp(p.p_fail, 0.0, 1.0);
    f.spread = std::max(0.0, (p.upper - p.lower) / (2.0 * 1.6448536269514722));
  }
  return out;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

void Standardiser::fit(const TrainingRows& rows, std::vector<std::size_t> cols) {
  columns = std::move(cols);
  mean.assign(columns.size(), 0.0);
  scale.assign(columns.size(), 0.0);
  const std::size_t n = rows.rows();
  if (!n) return;
  for (std::size_t j = 0; j < columns.size(); ++j) {
    double s = 0, ss = 0;
    for (std::size_t i = 0; i < n; ++i) s += rows.x[i * rows.dim + columns[j]];
    const double m = s / static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double d = rows.x[i * rows.dim + columns[j]] - m;
      ss += d * d;
    }
    const double sd = std::sqrt(ss / static_cast<double>(n));
    mean[j] = m;
    scale[j] = sd > 1e-12 ? 1.0 / sd : 0.0;
  }
}

std::vector<double> Standardiser::apply(const double* x, std::size_t rows, std::size_t dim) const {
  std::vector<double> out(rows * columns.size());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < columns.size(); ++j)
      out[i * columns.size() + j] = (x[i * dim + columns[j]] - mean[j]) * scale[j];
  return out;
}

void Standardiser::save(ArchiveWriter& w) const {
  std::vector<double> c(columns.begin(), columns.end());
  w.f64s(c);
  w.f64s(mean);
  w.f64s(scale);
}

Standardiser Standardiser::load(ArchiveReader& r) {
  Standardiser s;
  const auto c = r.f64s();
  s.mean = r.f64s();
  s.scale = r.f64s();
  if (s.mean.size() != c.size() || s.scale.size() != c.size()) r.fail("standardiser sizes disagree");
  for (double v : c) {
    if (!(v >= 0) || v > 1e8) r.fail("standardiser column out of range");
    s.columns.push_back(static_cast<std::size_t>(v));
  }
  return s;
}

double base_failure_rate(const TrainingRows& rows) {
  const double failed = static_cast<double>(rows.rows() - rows.ok_count());
  return (failed + 0.5) / (static_cast<double>(rows.rows()) + 1.0);
}

std::vector<float> failure_labels(const TrainingRows& rows) {
  const std::size_t ok = rows.ok_count(), failed = rows.rows() - ok;
  if (failed < 3 || ok < 3) return {};
  std::vector<float> label(rows.rows());
  for (std::size_t i = 0; i < rows.rows(); ++i) label[i] = rows.ok(i) ? 0.0f : 1.0f;
  return label;
}

void write_tag(ArchiveWriter& w, const char* tag, std::uint32_t version) {
  w.str(tag);
  w.u32(version);
}

std::uint32_t expect_tag(ArchiveReader& r, const char* tag, std::uint32_t version) {
  const auto t = r.str();
  if (t != tag) r.fail(fmt::format("expected a \"{}\" block, found \"{}\"", tag, t.substr(0, 40)));
  const auto v = r.u32();
  if (v > version)
    r.fail(fmt::format("\"{}\" block has version {}, newer than this build reads ({}): upgrade gpuforecast", tag, v, version));
  return v;
}

}  // namespace gpuforecast::detail

namespace gpuforecast::detail {

TabularBase make_base(std::span<const Observation> observations, const FeatureEncoderOptions& options, const char* who) {
  if (observations.empty()) throw invalid_argument_error(fmt::format("{}: fit() needs observations", who));
  TabularBase b{FeatureEncoder(options), {}, {}};
  b.encoder.fit(observations);
  b.rows.append(b.encoder, observations);
  if (b.rows.ok_count() == 0)
    throw invalid_argument_error(fmt::format("{}: all {} observations failed; at least one successful measurement is needed",
                                             who, observations.size()));
  b.norm.fit(b.rows);
  return b;
}

TabularBase extend_base(const TabularBase& base, std::span<const Observation> observations) {
  TabularBase b = base;
  b.rows.append(b.encoder, observations);
  b.norm.fit(b.rows);
  return b;
}

void save_base(ArchiveWriter& w, const TabularBase& base) {
  base.encoder.save(w);
  base.rows.save(w);
  base.norm.save(w);
}

TabularBase load_base(ArchiveReader& r) {
  TabularBase b;
  b.encoder = FeatureEncoder::load(r);
  b.rows = TrainingRows::load(r);
  if (b.rows.dim != b.encoder.dimension()) r.fail("training rows and feature vocabulary disagree on width");
  b.norm = GroupNormaliser::load(r, b.rows);
  return b;
}

std::vector<std::size_t> ok_rows(const TrainingRows& rows) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < rows.rows(); ++i)
    if (rows.ok(i)) idx.push_back(i);
  return idx;
}

}  // namespace gpuforecast::detail
