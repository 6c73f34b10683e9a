#include "surrogate/feature_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "core/value_archive.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

double signed_log2(double v) noexcept {
  if (!std::isfinite(v)) return 0.0;
  return v >= 0 ? std::log2(1.0 + v) : -std::log2(1.0 - v);
}

const std::vector<std::string>& FeatureEncoder::device_feature_names() {
  static const std::vector<std::string> names{
      "device.log2_sm_count",        "device.log2_core_clock_mhz", "device.log2_memory_bandwidth_gbs",
      "device.log2_memory_gib",      "device.log2_l2_cache_mib",   "device.log2_shared_memory_per_sm_kib",
      "device.log2_registers_per_sm", "device.log2_peak_fp32_tflops", "device.compute_capability",
      "device.warp_size_over_32",    "device.is_nvidia"};
  return names;
}

std::vector<double> FeatureEncoder::device_features(const Device* d) {
  if (!d) return std::vector<double>(device_feature_names().size(), 0.0);
  return {signed_log2(d->sm_count),
          signed_log2(d->core_clock_mhz),
          signed_log2(d->memory_bandwidth_gbs),
          signed_log2(d->memory_gib),
          signed_log2(d->l2_cache_mib),
          signed_log2(d->shared_memory_per_sm_kib),
          signed_log2(d->registers_per_sm),
          signed_log2(d->peak_fp32_tflops),
          d->compute_capability_major + d->compute_capability_minor / 10.0,
          d->warp_size / 32.0,
          d->vendor == "NVIDIA" ? 1.0 : 0.0};
}

FeatureEncoder::FeatureEncoder(FeatureEncoderOptions options) : m_options(options) {}

void FeatureEncoder::fit(std::span<const Observation> observations) {
  std::vector<const Candidate*> c;
  c.reserve(observations.size());
  for (const auto& o : observations) c.push_back(&o.candidate);
  build(c);
}

void FeatureEncoder::fit(std::span<const Candidate> candidates) {
  std::vector<const Candidate*> c;
  c.reserve(candidates.size());
  for (const auto& x : candidates) c.push_back(&x);
  build(c);
}

void FeatureEncoder::build(const std::vector<const Candidate*>& candidates) {
  if (candidates.empty()) throw invalid_argument_error("FeatureEncoder::fit: no observations to learn a vocabulary from");
  // Parameter names in first-seen order, with their distinct values; candidates of one space
  // share their name list, so visit each list once.
  std::vector<std::string> param_order;
  std::map<std::string, std::set<Value>> values;
  std::map<std::string, bool> has_string;
  std::set<std::string> kernels;
  std::set<std::string> features;
  std::size_t rank = 0;
  for (const Candidate* c : candidates) {
    const auto& names = c->config.names();
    for (std::size_t i = 0; i < c->config.size(); ++i) {
      auto [it, inserted] = values.try_emplace(names[i]);
      if (inserted) param_order.push_back(names[i]);
      if (it->second.size() <= 4096) it->second.insert(c->config[i]);
      if (c->config[i].is_string()) has_string[names[i]] = true;
    }
    kernels.insert(c->kernel);
    rank = std::max(rank, c->problem_size.size());
    for (const auto& [k, v] : c->features) features.insert(k);
  }

  m_names.clear();
  m_roles.clear();
  m_parameters.clear();
  auto add = [&](std::string name, FeatureRole role) {
    m_names.push_back(std::move(name));
    m_roles.push_back(role);
    return static_cast<std::int64_t>(m_names.size() - 1);
  };
  m_device_first = m_names.size();
  for (const auto& n : device_feature_names()) add(n, FeatureRole::device);
  m_problem_first = m_names.size();
  m_problem_rank = rank;
  for (std::size_t i = 0; i < rank; ++i) add("problem.log2_size_" + std::to_string(i), FeatureRole::problem);
  m_kernel_first = m_names.size();
  m_kernels.clear();
  if (kernels.size() > 1) {
    m_kernels.assign(kernels.begin(), kernels.end());
    for (const auto& k : m_kernels) add("kernel=" + k, FeatureRole::kernel);
  }
  for (const auto& name : param_order) {
    ParameterColumns p;
    p.name = name;
    const auto& vals = values[name];
    const bool strings = has_string[name];
    if (!strings) {
      p.log_column = add("param." + name + ".log2", FeatureRole::parameter_log);
      p.raw_column = add("param." + name, FeatureRole::parameter_raw);
    }
    if ((strings || vals.size() <= m_options.max_one_hot) && vals.size() > 1) {
      p.categories.assign(vals.begin(), vals.end());
      p.one_hot_first = static_cast<std::int64_t>(m_names.size());
      for (const auto& v : p.categories) add("param." + name + "=" + v.to_string(),
                                       strings ? FeatureRole::parameter_category : FeatureRole::parameter_one_hot);
    }
    m_parameters.push_back(std::move(p));
  }
  m_feature_first = m_names.size();
  m_feature_names.assign(features.begin(), features.end());
  for (const auto& f : m_feature_names) add("feature." + f + ".log2", FeatureRole::feature);
}

std::vector<std::size_t> FeatureEncoder::columns(std::initializer_list<FeatureRole> roles) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < m_roles.size(); ++i)
    if (std::find(roles.begin(), roles.end(), m_roles[i]) != roles.end()) out.push_back(i);
  return out;
}

void FeatureEncoder::encode_into(const Candidate& c, const std::vector<std::int64_t>& param_map, double* out) const {
  std::fill(out, out + dimension(), 0.0);
  const auto dev = device_features(c.device.get());
  std::copy(dev.begin(), dev.end(), out + m_device_first);
  for (std::size_t i = 0; i < std::min(m_problem_rank, c.problem_size.size()); ++i)
    out[m_problem_first + i] = signed_log2(static_cast<double>(c.problem_size[i]));
  if (!m_kernels.empty()) {
    auto it = std::lower_bound(m_kernels.begin(), m_kernels.end(), c.kernel);
    if (it != m_kernels.end() && *it == c.kernel) out[m_kernel_first + (it - m_kernels.begin())] = 1.0;
  }
  for (std::size_t i = 0; i < c.config.size() && i < param_map.size(); ++i) {
    if (param_map[i] < 0) continue;
    const ParameterColumns& p = m_parameters[static_cast<std::size_t>(param_map[i])];
    const Value& v = c.config[i];
    if (v.is_number() && p.log_column >= 0) {
      const double x = v.as_double();
      out[p.log_column] = signed_log2(x);
      out[p.raw_column] = std::isfinite(x) ? x : 0.0;
    }
    if (p.one_hot_first >= 0) {
      for (std::size_t k = 0; k < p.categories.size(); ++k)
        if (p.categories[k] == v) {
          out[p.one_hot_first + static_cast<std::int64_t>(k)] = 1.0;
          break;
        }
    }
  }
  if (!m_feature_names.empty()) {
    for (const auto& [k, v] : c.features) {
      auto it = std::lower_bound(m_feature_names.begin(), m_feature_names.end(), k);
      if (it != m_feature_names.end() && *it == k) out[m_feature_first + (it - m_feature_names.begin())] = signed_log2(v);
    }
  }
}

std::vector<double> FeatureEncoder::encode(std::span<const Candidate> candidates) const {
  if (m_names.empty()) throw invalid_argument_error("FeatureEncoder::encode before fit");
  const std::size_t d = dimension();
  std::vector<double> out(candidates.size() * d);
  // Candidates of a space share one name list: map it to parameter slots once per batch.
  std::unordered_map<const void*, std::vector<std::int64_t>> maps;
  std::unordered_map<std::string, std::int64_t> by_name;
  for (std::size_t i = 0; i < m_parameters.size(); ++i) by_name.emplace(m_parameters[i].name, static_cast<std::int64_t>(i));
  std::vector<std::int64_t> scratch;
  for (std::size_t r = 0; r < candidates.size(); ++r) {
    const Candidate& c = candidates[r];
    const void* key = c.config.shared_names().get();
    const std::vector<std::int64_t>* map = nullptr;
    if (key) {
      auto it = maps.find(key);
      if (it == maps.end()) {
        std::vector<std::int64_t> m;
        for (const auto& n : c.config.names()) {
          auto f = by_name.find(n);
          m.push_back(f == by_name.end() ? -1 : f->second);
        }
        it = maps.emplace(key, std::move(m)).first;
      }
      map = &it->second;
    } else {
      scratch.assign(c.config.size(), -1);
      map = &scratch;
    }
    encode_into(c, *map, out.data() + r * d);
  }
  return out;
}

std::vector<double> FeatureEncoder::encode(const Candidate& candidate) const {
  return encode(std::span<const Candidate>(&candidate, 1));
}


void FeatureEncoder::save(ArchiveWriter& w) const {
  w.u32(1);  // encoder layout version
  w.u64(m_options.max_one_hot);
  w.u64(m_names.size());
  for (std::size_t i = 0; i < m_names.size(); ++i) {
    w.str(m_names[i]);
    w.u32(static_cast<std::uint32_t>(m_roles[i]));
  }
  w.u64(m_device_first);
  w.u64(m_problem_first);
  w.u64(m_problem_rank);
  w.u64(m_kernel_first);
  w.u64(m_kernels.size());
  for (const auto& k : m_kernels) w.str(k);
  w.u64(m_parameters.size());
  for (const auto& p : m_parameters) {
    w.str(p.name);
    w.i64(p.log_column);
    w.i64(p.raw_column);
    w.i64(p.one_hot_first);
    w.u64(p.categories.size());
    for (const auto& v : p.categories) detail::write_value(w, v);
  }
  w.u64(m_feature_first);
  w.u64(m_feature_names.size());
  for (const auto& f : m_feature_names) w.str(f);
}

FeatureEncoder FeatureEncoder::load(ArchiveReader& r) {
  if (const auto v = r.u32(); v != 1) r.fail("feature encoder layout version " + std::to_string(v) + " is not supported");
  FeatureEncoder e;
  e.m_options.max_one_hot = r.u64();
  const auto n = r.u64();
  if (n > (1u << 24)) r.fail("implausible feature count");
  for (std::uint64_t i = 0; i < n; ++i) {
    e.m_names.push_back(r.str());
    const auto role = r.u32();
    if (role > static_cast<std::uint32_t>(FeatureRole::feature)) r.fail("unknown feature role");
    e.m_roles.push_back(static_cast<FeatureRole>(role));
  }
  e.m_device_first = r.u64();
  e.m_problem_first = r.u64();
  e.m_problem_rank = r.u64();
  e.m_kernel_first = r.u64();
  const auto nk = r.u64();
  if (nk > n) r.fail("implausible kernel count");
  for (std::uint64_t i = 0; i < nk; ++i) e.m_kernels.push_back(r.str());
  const auto np = r.u64();
  if (np > n) r.fail("implausible parameter count");
  for (std::uint64_t i = 0; i < np; ++i) {
    ParameterColumns p;
    p.name = r.str();
    p.log_column = r.i64();
    p.raw_column = r.i64();
    p.one_hot_first = r.i64();
    const auto nc = r.u64();
    if (nc > n) r.fail("implausible category count");
    for (std::uint64_t k = 0; k < nc; ++k)
      p.categories.push_back(detail::read_value(r, "unknown parameter value type in feature vocabulary"));
    auto in_range = [&](std::int64_t c, std::size_t width) {
      return c == -1 || (c >= 0 && static_cast<std::uint64_t>(c) + width <= n);
    };
    if (!in_range(p.log_column, 1) || !in_range(p.raw_column, 1) || !in_range(p.one_hot_first, p.categories.size()))
      r.fail("feature column of parameter " + p.name + " out of range");
    e.m_parameters.push_back(std::move(p));
  }
  e.m_feature_first = r.u64();
  const auto nf = r.u64();
  if (nf > n) r.fail("implausible static feature count");
  for (std::uint64_t i = 0; i < nf; ++i) e.m_feature_names.push_back(r.str());
  if (e.m_device_first + device_feature_names().size() > n || e.m_problem_first + e.m_problem_rank > n ||
      e.m_kernel_first + e.m_kernels.size() > n || e.m_feature_first + e.m_feature_names.size() > n)
    r.fail("feature layout out of range");
  return e;
}

}  // namespace gpuforecast
