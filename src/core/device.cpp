#include "gpuforecast/core/device.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/edit_distance.hpp"
#include "core/device_table.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_separator(char c) { return c == ' ' || c == '-' || c == '_' || c == '\t'; }

// The words of a device name, lower-case, split at spaces, dashes and underscores.
std::vector<std::string> lower_words(std::string_view name) {
  std::vector<std::string> words;
  std::string cur;
  for (char c : name) {
    if (is_separator(c)) {
      if (!cur.empty()) words.push_back(lower(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) words.push_back(lower(cur));
  return words;
}

// Dataset files write the same GPU as "NVIDIA GeForce RTX 3060 Laptop GPU", "RTX_3060_laptop"
// or "rtx 3060 laptop": words are compared lower-case and joined, and the marketing words that
// vendors put in front ("NVIDIA", "GeForce", "Radeon PRO", ...) or a trailing "GPU" are dropped.
std::string normalise(std::string_view name) {
  const std::vector<std::string> words = lower_words(name);
  static const std::set<std::string> leading = {"nvidia", "amd", "ati", "geforce", "tesla", "quadro",
                                                "radeon", "pro", "instinct"};
  std::size_t first = 0;
  while (first < words.size() && leading.count(words[first])) ++first;
  std::size_t last = words.size();
  if (last > first + 1 && words[last - 1] == "gpu") --last;
  std::string out;
  for (std::size_t i = first; i < last; ++i) out += words[i];
  return out;
}

// Files from the wild name one board in many ways: "Tesla V100-PCIE-32GB", "A100 80GB PCIe",
// "NVIDIA H100 80GB HBM3". The words that tell boards of one chip apart (form factor, memory
// size, memory type) are split off, so that the rest (the family: "v100", "a100") can be
// matched, and the split-off words then pick the closest board of that family.
struct NameParts {
  std::string family;
  std::string form_factor;  // "pcie", "sxm", "nvl" or empty
  int memory_gb = 0;        // 0: not in the name
};

int memory_size_word(const std::string& w) {  // "32gb" -> 32, anything else -> 0
  if (w.size() < 3 || !w.ends_with("gb")) return 0;
  int v = 0;
  for (std::size_t i = 0; i + 2 < w.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(w[i])) || v > 100000) return 0;
    v = v * 10 + (w[i] - '0');
  }
  return v;
}

std::string form_factor_word(const std::string& w) {
  if (w == "pcie" || w == "pci" || w == "fhhl") return "pcie";  // FHHL: a PCIe card, full height half length
  if (w.starts_with("sxm") && std::all_of(w.begin() + 3, w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return "sxm";
  if (w == "nvl") return "nvl";
  return {};
}

bool is_memory_type_word(const std::string& w) {
  return w == "hbm" || w == "hbm2" || w == "hbm2e" || w == "hbm3" || w == "hbm3e" || w == "gddr6" || w == "gddr6x";
}

NameParts name_parts(std::string_view name) {
  const std::vector<std::string> words = lower_words(name);
  NameParts parts;
  bool leading = true;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (leading && normalise(w).empty()) continue;  // a vendor word in front
    leading = false;
    if (i + 1 == words.size() && w == "gpu" && !parts.family.empty()) continue;
    // "32 GB" written as two words.
    if (w == "gb" && i > 0 && memory_size_word(words[i - 1] + "gb") > 0 && parts.family.ends_with(words[i - 1])) {
      parts.family.resize(parts.family.size() - words[i - 1].size());
      parts.memory_gb = memory_size_word(words[i - 1] + "gb");
      continue;
    }
    if (const int gb = memory_size_word(w); gb > 0) {
      parts.memory_gb = gb;
    } else if (auto ff = form_factor_word(w); !ff.empty()) {
      parts.form_factor = std::move(ff);
    } else if (!is_memory_type_word(w)) {
      parts.family += w;
    }
  }
  return parts;
}

using detail::edit_distance;

bool matches(const Device& d, const std::string& key) {
  if (key.empty()) return false;
  if (normalise(d.name) == key) return true;
  return std::any_of(d.aliases.begin(), d.aliases.end(), [&](const std::string& a) { return normalise(a) == key; });
}

}  // namespace

Device Device::unknown(std::string name) {
  Device d;
  // The vendor is the one number-free fact a name can give; the rest stays 0 (not known).
  const std::string first = lower(name.substr(0, name.find_first_of(" -_\t")));
  if (first == "nvidia" || first == "tesla" || first == "geforce" || first == "quadro") d.vendor = "NVIDIA";
  else if (first == "amd" || first == "radeon" || first == "instinct") d.vendor = "AMD";
  d.name = std::move(name);
  d.max_threads_per_block = 0;
  d.warp_size = 0;
  return d;
}

bool Device::has_numbers() const noexcept { return sm_count > 0; }

std::string Device::sm_arch() const {
  if (lower(vendor) != "nvidia" || compute_capability_major <= 0) return {};
  return fmt::format("sm_{}{}", compute_capability_major, compute_capability_minor);
}

std::vector<double> Device::numeric_features() const {
  return {static_cast<double>(compute_capability_major) + 0.1 * compute_capability_minor,
          static_cast<double>(sm_count),
          core_clock_mhz,
          memory_bandwidth_gbs,
          memory_gib,
          l2_cache_mib,
          shared_memory_per_sm_kib,
          static_cast<double>(registers_per_sm),
          static_cast<double>(max_threads_per_block),
          static_cast<double>(warp_size),
          peak_fp32_tflops,
          lower(vendor) == "nvidia" ? 1.0 : 0.0};
}

const std::vector<std::string>& Device::numeric_feature_names() {
  static const std::vector<std::string> names = {
      "compute_capability", "sm_count",          "core_clock_mhz",        "memory_bandwidth_gbs",
      "memory_gib",         "l2_cache_mib",      "shared_memory_per_sm_kib", "registers_per_sm",
      "max_threads_per_block", "warp_size",      "peak_fp32_tflops",      "vendor_is_nvidia"};
  return names;
}

DeviceRegistry& DeviceRegistry::global() {
  static DeviceRegistry registry;
  return registry;
}

DeviceRegistry::DeviceRegistry() {
  for (auto& d : detail::builtin_devices()) m_devices.push_back(std::make_shared<const Device>(std::move(d)));
}

std::shared_ptr<const Device> DeviceRegistry::try_find(std::string_view name) const noexcept {
  try {
    const std::string key = normalise(name);
    if (key.empty()) return nullptr;
    // Newest first: a device a user added wins over a built-in one that shares an alias.
    for (auto it = m_devices.rbegin(); it != m_devices.rend(); ++it)
      if (normalise((*it)->name) == key) return *it;
    for (auto it = m_devices.rbegin(); it != m_devices.rend(); ++it)
      if (matches(**it, key)) return *it;
    return find_by_family(name);
  } catch (...) {
    // Only allocation can fail here; "not found" is the honest answer for a noexcept lookup.
  }
  return nullptr;
}

std::shared_ptr<const Device> DeviceRegistry::find_by_family(std::string_view name) const {
  const NameParts want = name_parts(name);
  if (want.family.empty()) return nullptr;
  // Of the devices of that family, the one whose form factor (worth more: it sets the clocks)
  // and memory size agree; among equals, the newest (a user's device wins).
  std::shared_ptr<const Device> best;
  int best_score = -1;
  for (auto it = m_devices.rbegin(); it != m_devices.rend(); ++it) {
    const Device& d = **it;
    std::vector<NameParts> names{name_parts(d.name)};
    for (const auto& a : d.aliases) names.push_back(name_parts(a));
    bool same_family = false;
    std::string form_factor;
    for (const auto& n : names) {
      if (n.family != want.family) continue;
      same_family = true;
      if (form_factor.empty()) form_factor = n.form_factor;
    }
    if (!same_family) continue;
    int score = 0;
    if (!want.form_factor.empty() && want.form_factor == form_factor) score += 2;
    if (want.memory_gb > 0 && std::lround(d.memory_gib) == want.memory_gb) score += 1;
    if (score > best_score) {
      best = *it;
      best_score = score;
    }
  }
  return best;
}

std::shared_ptr<const Device> DeviceRegistry::find(std::string_view name) const {
  if (auto d = try_find(name)) return d;
  const std::string key = normalise(name).empty() ? lower(name) : normalise(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& d : m_devices) {
    std::size_t best = edit_distance(key, normalise(d->name));
    for (const auto& a : d->aliases) best = std::min(best, edit_distance(key, normalise(a)));
    scored.emplace_back(best, d->name);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> close;
  for (const auto& [dist, n] : scored) {
    if (close.size() == 5) break;
    if (std::find(close.begin(), close.end(), n) == close.end()) close.push_back(n);
  }
  throw unknown_device_error(std::string(name), std::move(close));
}

std::vector<std::shared_ptr<const Device>> DeviceRegistry::all() const { return m_devices; }

void DeviceRegistry::add(Device device) {
  if (normalise(device.name).empty())
    throw invalid_argument_error(fmt::format("device name \"{}\" is empty after normalisation", device.name));
  const std::string key = normalise(device.name);
  auto shared = std::make_shared<const Device>(std::move(device));
  for (auto& d : m_devices) {
    if (normalise(d->name) == key) {
      d = std::move(shared);
      return;
    }
  }
  m_devices.push_back(std::move(shared));
}

namespace {

using nlohmann::json;

double number_field(const json& j, const std::string& file, const std::string& where, double lo) {
  if (!j.is_number()) throw input_error(file, where, "expected a number");
  const double v = j.get<double>();
  if (!std::isfinite(v) || v < lo) throw input_error(file, where, fmt::format("expected a finite number >= {}", lo));
  return v;
}

int int_field(const json& j, const std::string& file, const std::string& where, int lo) {
  if (!j.is_number_integer()) throw input_error(file, where, "expected an integer");
  const auto v = j.get<std::int64_t>();
  if (v < lo || v > 1'000'000'000) throw input_error(file, where, fmt::format("expected an integer >= {}", lo));
  return static_cast<int>(v);
}

std::string string_field(const json& j, const std::string& file, const std::string& where) {
  if (!j.is_string()) throw input_error(file, where, "expected a string");
  return j.get<std::string>();
}

Device parse_device(const json& e, const std::string& file, const std::string& at) {
  if (!e.is_object()) throw input_error(file, at, "device entry must be an object");
  Device d;
  for (const char* required : {"name", "vendor"})
    if (!e.contains(required)) throw input_error(file, at, fmt::format("missing key \"{}\"", required));
  for (const auto& [key, v] : e.items()) {
    const std::string where = at + "/" + key;
    if (key == "name") d.name = string_field(v, file, where);
    else if (key == "vendor") d.vendor = string_field(v, file, where);
    else if (key == "architecture") d.architecture = string_field(v, file, where);
    else if (key == "compute_capability_major") d.compute_capability_major = int_field(v, file, where, 0);
    else if (key == "compute_capability_minor") d.compute_capability_minor = int_field(v, file, where, 0);
    else if (key == "sm_count") d.sm_count = int_field(v, file, where, 1);
    else if (key == "core_clock_mhz") d.core_clock_mhz = number_field(v, file, where, 0);
    else if (key == "memory_bandwidth_gbs") d.memory_bandwidth_gbs = number_field(v, file, where, 0);
    else if (key == "memory_gib") d.memory_gib = number_field(v, file, where, 0);
    else if (key == "l2_cache_mib") d.l2_cache_mib = number_field(v, file, where, 0);
    else if (key == "shared_memory_per_sm_kib") d.shared_memory_per_sm_kib = number_field(v, file, where, 0);
    else if (key == "registers_per_sm") d.registers_per_sm = int_field(v, file, where, 0);
    else if (key == "max_threads_per_block") d.max_threads_per_block = int_field(v, file, where, 1);
    else if (key == "warp_size") d.warp_size = int_field(v, file, where, 1);
    else if (key == "peak_fp32_tflops") d.peak_fp32_tflops = number_field(v, file, where, 0);
    else if (key == "aliases") {
      if (!v.is_array()) throw input_error(file, where, "expected an array of strings");
      for (std::size_t i = 0; i < v.size(); ++i)
        d.aliases.push_back(string_field(v[i], file, where + "/" + std::to_string(i)));
    } else {
      throw input_error(file, where, fmt::format("unknown key \"{}\" (see docs/devices.md)", key));
    }
  }
  if (normalise(d.name).empty()) throw input_error(file, at + "/name", "device name is empty");
  const std::string vendor = lower(d.vendor);
  if (vendor != "nvidia" && vendor != "amd" && vendor != "intel")
    throw input_error(file, at + "/vendor", fmt::format("vendor \"{}\" is not NVIDIA, AMD or Intel", d.vendor));
  return d;
}

}  // namespace

void DeviceRegistry::add_from_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, "", "cannot open device file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  json doc;
  try {
    doc = json::parse(buffer.str());
  } catch (const json::parse_error& e) {
    throw input_error(path, fmt::format("byte {}", e.byte), fmt::format("malformed JSON: {}", e.what()));
  } catch (const json::exception& e) {  // e.g. a number that overflows a double
    throw input_error(path, "", fmt::format("malformed JSON: {}", e.what()));
  }
  if (!doc.is_object() || !doc.contains("devices"))
    throw input_error(path, "/devices", "expected an object with a \"devices\" array");
  const json& list = doc["devices"];
  if (!list.is_array()) throw input_error(path, "/devices", "expected an array");
  std::vector<Device> parsed;
  for (std::size_t i = 0; i < list.size(); ++i)
    parsed.push_back(parse_device(list[i], path, fmt::format("/devices/{}", i)));
  // All or nothing: a bad entry leaves the registry as it was.
  for (auto& d : parsed) add(std::move(d));
}

std::shared_ptr<const Device> find_device(std::string_view name) { return DeviceRegistry::global().find(name); }

}  // namespace gpuforecast
