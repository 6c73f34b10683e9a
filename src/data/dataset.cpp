#include "gpuforecast/data/dataset.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "common/parallel_indices.hpp"
#include "data/cache_parse.hpp"
#include "data/file_io.hpp"
#include "gpuforecast/core/device.hpp"
#include "gpuforecast/core/error.hpp"
#include "core/warning.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"

namespace gpuforecast {

std::size_t SpaceData::valid_count() const {
  return static_cast<std::size_t>(
      std::count_if(observations.begin(), observations.end(), [](const Observation& o) { return o.measurement.ok(); }));
}

double SpaceData::best_ms() const {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& o : observations)
    if (o.measurement.ok()) best = std::min(best, o.measurement.median_ms);
  if (best == std::numeric_limits<double>::infinity())
    throw invalid_argument_error(fmt::format("{}: no valid observation, so no best time", path));
  return best;
}

namespace {

// "A100.json.gz" -> "A100"; "A100_T4.json.gz" -> "A100" when the file is a T4 file.
std::string device_from_stem(const std::string& path, bool t4) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".json"})
    if (name.ends_with(ext)) name.resize(name.size() - std::string_view(ext).size());
  if (t4 && name.ends_with("_T4")) name.resize(name.size() - 3);
  return name;
}

// A GPU the registry does not know still loads (files from the wild name GPUs in many ways):
// as a device with its name and no numbers, with one warning for the file.
std::shared_ptr<const Device> resolve_device(const std::string& path, const std::string& device_name, bool t4,
                                             std::vector<std::string>& warnings) {
  const bool from_file = !device_name.empty();
  const std::string name = from_file ? device_name : device_from_stem(path, t4);
  try {
    return find_device(name);
  } catch (const unknown_device_error& e) {
    std::string close;
    for (const auto& c : e.get_close_names()) close += (close.empty() ? "" : ", ") + c;
    std::string message = fmt::format(
        "{}: device \"{}\"{} is not in the device table (closest: {}); read as a device without numbers, so "
        "surrogates leave its device features out (add it from JSON: docs/devices.md)",
        path, name, from_file ? "" : " (the file has no device_name, so its name was used)", close);
    warn(message);
    warnings.push_back(std::move(message));
    return std::make_shared<const Device>(Device::unknown(name));
  }
}

Candidate make_candidate(const SpaceData& s, Config config) {
  Candidate c;
  c.kernel = s.kernel;
  c.problem_size = s.problem_size;
  c.config = std::move(config);
  c.device = s.device;
  return c;
}

SpaceData from_cache(CacheFile&& f) {
  SpaceData s;
  s.path = f.path;
  s.kernel = f.benchmark;
  s.kernel_name = f.kernel_name;
  s.device = resolve_device(f.path, f.device_name, false, s.warnings);
  s.problem_size = f.problem_size;
  s.space = std::move(f.space);
  s.observations.reserve(f.entries.size());
  for (auto& e : f.entries) {
    Observation o;
    o.candidate = make_candidate(s, std::move(e.config));
    o.measurement = std::move(e.measurement);
    o.source = s.path;
    s.observations.push_back(std::move(o));
  }
  return s;
}

SpaceData from_t4(T4File&& f) {
  SpaceData s;
  s.path = f.path;
  s.kernel = detail::data::parent_folder_name(f.path);
  s.device = resolve_device(f.path, "", true, s.warnings);
  // T4 files carry no value lists: the values seen, ascending.
  ParameterNames names;
  if (!f.results.empty()) names = f.results.front().config.shared_names();
  std::vector<Parameter> params;
  if (names) {
    for (std::size_t i = 0; i < names->size(); ++i) {
      Parameter p{(*names)[i], {}};
      for (std::size_t r = 0; r < f.results.size(); ++r) {
        const Config& c = f.results[r].config;
        if (c.names() != *names)
          throw input_error(f.path, fmt::format("results[{}].configuration", r),
                            "the parameters differ from those of results[0]");
        p.values.push_back(c[i]);
      }
      std::sort(p.values.begin(), p.values.end(), [](const Value& a, const Value& b) { return a < b; });
      p.values.erase(std::unique(p.values.begin(), p.values.end()), p.values.end());
      params.push_back(std::move(p));
    }
  }
  try {
    s.space = TuningSpace(std::move(params), {});
  } catch (const input_error&) {
    throw;
  } catch (const error& e) {
    throw input_error(f.path, "results[0].configuration", e.what());
  }
  s.observations.reserve(f.results.size());
  for (auto& r : f.results) {
    Observation o;
    o.candidate = make_candidate(s, Config(s.space.names(), std::move(r.config.values())));
    o.measurement = std::move(r.measurement);
    o.source = s.path;
    s.observations.push_back(std::move(o));
  }
  return s;
}

}  // namespace

SpaceData load_space(const std::string& path) {
  const std::string text = detail::data::read_maybe_gzip(path);
  if (auto cache = detail::data::parse_cache_or_t4(text, path)) return from_cache(std::move(*cache));
  return from_t4(parse_t4(text, path));
}

Dataset Dataset::load(std::span<const std::string> paths) {
  std::vector<SpaceData> spaces(paths.size());
  // Files are independent: read them on all cores (decompression and parsing dominate).
  detail::parallel_for_each_index(paths.size(), detail::parallel_threads(paths.size(), 0),
                                  [&](std::size_t i) { spaces[i] = load_space(paths[i]); });
  Dataset d;
  for (auto& s : spaces) d.add(std::move(s));
  return d;
}

void Dataset::add(SpaceData space) { m_spaces.push_back(std::move(space)); }

std::size_t Dataset::size() const noexcept {
  std::size_t n = 0;
  for (const auto& s : m_spaces) n += s.observations.size();
  return n;
}

std::vector<Observation> Dataset::observations(bool ok_only) const {
  std::vector<Observation> out;
  out.reserve(size());
  for (const auto& s : m_spaces)
    for (const auto& o : s.observations)
      if (!ok_only || o.measurement.ok()) out.push_back(o);
  return out;
}

namespace {

// SplitMix64: a fixed, documented generator, so a seed gives the same split on every platform
// and standard library (std::shuffle and the std distributions are implementation-defined).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by rejection (no modulo bias).
  std::uint64_t below(std::uint64_t n) noexcept {
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
    std::uint64_t x;
    do x = next();
    while (x >= limit);
    return x % n;
  }
};

bool same_device(const Device& d, const std::string& name, const std::shared_ptr<const Device>& resolved) {
  if (resolved && resolved->name == d.name) return true;
  auto eq = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  if (eq(d.name, name)) return true;
  return std::any_of(d.aliases.begin(), d.aliases.end(), [&](const std::string& a) { return eq(a, name); });
}

}  // namespace

Dataset::Split Dataset::split_random(double train_fraction, std::uint64_t seed, bool ok_only) const {
  if (!(train_fraction >= 0.0 && train_fraction <= 1.0))
    throw invalid_argument_error(fmt::format("train fraction {} is outside [0, 1]", train_fraction));
  Split split;
  for (std::size_t si = 0; si < m_spaces.size(); ++si) {
    const auto& obs = m_spaces[si].observations;
    std::vector<std::size_t> idx;
    idx.reserve(obs.size());
    for (std::size_t i = 0; i < obs.size(); ++i)
      if (!ok_only || obs[i].measurement.ok()) idx.push_back(i);
    // One stream per space, so adding a file does not reshuffle the others.
    SplitMix64 rng{seed ^ (0xd1b54a32d192ed03ULL * (si + 1))};
    for (std::size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[rng.below(i)]);
    const auto n_train = static_cast<std::size_t>(std::llround(train_fraction * static_cast<double>(idx.size())));
    std::vector<char> in_train(obs.size(), 0);
    for (std::size_t k = 0; k < n_train; ++k) in_train[idx[k]] = 1;
    std::sort(idx.begin(), idx.end());  // file order inside each side
    for (std::size_t i : idx) (in_train[i] ? split.train : split.test).push_back(obs[i]);
  }
  return split;
}

Dataset::Split Dataset::split_by_device(const std::string& held_out_device, bool ok_only) const {
  const auto resolved = DeviceRegistry::global().try_find(held_out_device);
  Split split;
  std::set<std::string> present;
  for (const auto& s : m_spaces) {
    const bool test = s.device && same_device(*s.device, held_out_device, resolved);
    if (s.device) present.insert(s.device->name);
    for (const auto& o : s.observations)
      if (!ok_only || o.measurement.ok()) (test ? split.test : split.train).push_back(o);
  }
  if (split.test.empty()) {
    std::string list;
    for (const auto& p : present) list += (list.empty() ? "" : ", ") + p;
    throw invalid_argument_error(
        fmt::format("no observation on device \"{}\" to hold out; devices present: {}", held_out_device, list));
  }
  return split;
}

Dataset::Split Dataset::split_by_kernel(const std::string& held_out_kernel, bool ok_only) const {
  Split split;
  std::set<std::string> present;
  for (const auto& s : m_spaces) {
    present.insert(s.kernel);
    for (const auto& o : s.observations)
      if (!ok_only || o.measurement.ok()) (o.candidate.kernel == held_out_kernel ? split.test : split.train).push_back(o);
  }
  if (split.test.empty()) {
    std::string list;
    for (const auto& p : present) list += (list.empty() ? "" : ", ") + p;
    throw invalid_argument_error(
        fmt::format("no observation of kernel \"{}\" to hold out; kernels present: {}", held_out_kernel, list));
  }
  return split;
}

Dataset::Split Dataset::split_by_group(const std::function<std::string(const Observation&)>& group,
                                       const std::string& held_out, bool ok_only) const {
  Split split;
  for (const auto& s : m_spaces)
    for (const auto& o : s.observations)
      if (!ok_only || o.measurement.ok()) (group(o) == held_out ? split.test : split.train).push_back(o);
  if (split.test.empty())
    throw invalid_argument_error(fmt::format("no observation in group \"{}\" to hold out", held_out));
  return split;
}

}  // namespace gpuforecast
