#include "data/static_feature_table.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include "data/file_io.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {
constexpr const char* kMagic = "# gpuforecast static features";
constexpr double kAbsent = std::numeric_limits<double>::quiet_NaN();

// Numbers compare by value ("1" and "1.0" are one configuration), strings by text.
std::string canonical(const Value& v) {
  if (v.is_number()) return fmt::format("{:.17g}", v.as_double());
  return v.as_string();
}
// A cell as written by Value::to_string: an integer, a number with a point or exponent
// ("1.0" stays a float, as Python wrote it), or text.
Value value_from_text(const std::string& text) {
  const auto* end = text.data() + text.size();
  std::int64_t i = 0;
  if (auto [p, ec] = std::from_chars(text.data(), end, i); ec == std::errc() && p == end) return Value(i);
  double x = 0;
  if (auto [p, ec] = std::from_chars(text.data(), end, x); ec == std::errc() && p == end) return Value(x);
  return Value(text);
}

ParameterNames names_of(const std::vector<std::string>& parameters) {
  return std::make_shared<const std::vector<std::string>>(parameters);
}

// CSV cells of one line: plain cells (numbers and identifiers) and quoted cells with "" for a
// quote (the compiler's message). Returns false for an unterminated quote.
bool split_csv_line(const std::string& line, std::vector<std::string>& cells) {
  cells.clear();
  std::string cell;
  std::size_t i = 0;
  while (true) {
    cell.clear();
    if (i < line.size() && line[i] == '"') {
      for (++i;; ++i) {
        if (i >= line.size()) return false;
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            ++i;
          } else {
            ++i;
            break;
          }
        } else {
          cell += line[i];
        }
      }
      if (i < line.size() && line[i] != ',') return false;
    } else {
      const std::size_t comma = line.find(',', i);
      cell = line.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
      i = comma == std::string::npos ? line.size() : comma;
    }
    cells.push_back(cell);
    if (i >= line.size()) return true;
    ++i;  // the comma
  }
}

std::string quote_csv(const std::string& text) {
  if (text.empty()) return {};
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += "\"\"";
    else if (c == '\n') out += " | ";
    else if (c != '\r') out += c;
  }
  return out + '"';
}

std::string format_number(double x) {
  if (std::isnan(x)) return "";
  if (x == std::floor(x) && std::abs(x) < 1e15) return fmt::format("{}", static_cast<long long>(x));
  return fmt::format("{:.9g}", x);
}

// Per-SM limits CUDA documents per compute capability (the Programming Guide's table of
// technical specifications); shared memory from the device table when it has it.
struct SmLimits {
  int max_warps = 64, max_blocks = 32;
  double shared_kib = 0;
  bool reserves_per_block = true;  // 1 KiB of shared memory per block from sm_80 on
};
SmLimits limits_of(const Device& d) {
  SmLimits l;
  const int cc = d.compute_capability_major * 10 + d.compute_capability_minor;
  if (cc == 75) l = {32, 16, 64, false};
  else if (cc >= 70 && cc < 75) l = {64, 32, 96, false};
  else if (cc == 80 || cc == 87) l = {64, 32, 164, true};
  else if (cc == 86) l = {48, 16, 100, true};
  else if (cc == 89) l = {48, 24, 100, true};
  else if (cc >= 120) l = {48, 24, 100, true};
  else if (cc >= 90) l = {64, 32, 228, true};
  if (d.shared_memory_per_sm_kib > 0) l.shared_kib = d.shared_memory_per_sm_kib;
  return l;
}
}  // namespace

std::string StaticFeatureTable::key_of(const Config& config) const {
  std::string key;
  for (const auto& p : parameters) {
    const Value* v = config.find(p);
    if (!v)
      throw invalid_argument_error(fmt::format("static features of {} ({}): configuration [{}] has no parameter {}",
                                               kernel, architecture, config.to_string(), p));
    key += canonical(*v);
    key += '\x1f';
  }
  return key;
}

void StaticFeatureTable::add(const Config& config, bool compiled, const Features& features, std::string error) {
  if (parameters.empty())
    throw invalid_argument_error(fmt::format("static features of {} ({}): the table names no parameters", kernel, architecture));
  Row row;
  row.error = std::move(error);
  for (const auto& p : parameters) row.values.push_back(config.at(p).to_string());
  row.compiled = compiled;
  for (const auto& [name, value] : features)
    if (std::find(feature_names.begin(), feature_names.end(), name) == feature_names.end()) {
      feature_names.push_back(name);
      for (auto& r : m_rows) r.features.push_back(kAbsent);
    }
  row.features.assign(feature_names.size(), kAbsent);
  for (std::size_t i = 0; i < feature_names.size(); ++i)
    if (auto it = features.find(feature_names[i]); it != features.end()) row.features[i] = it->second;
  const std::string key = key_of(config);
  if (auto it = m_index.find(key); it != m_index.end()) {
    m_rows[it->second] = std::move(row);
  } else {
    m_index.emplace(key, m_rows.size());
    m_rows.push_back(std::move(row));
  }
}

const StaticFeatureTable::Row* StaticFeatureTable::find(const Config& config) const {
  auto it = m_index.find(key_of(config));
  return it == m_index.end() ? nullptr : &m_rows[it->second];
}

Config StaticFeatureTable::config_of(const Row& row) const {
  std::vector<Value> values;
  for (const auto& v : row.values) values.push_back(value_from_text(v));
  return Config(names_of(parameters), std::move(values));
}

Features StaticFeatureTable::features_of(const Row& row) const {
  Features f;
  for (std::size_t i = 0; i < feature_names.size() && i < row.features.size(); ++i)
    if (!std::isnan(row.features[i])) f[feature_names[i]] = row.features[i];
  return f;
}

StaticFeatureTable StaticFeatureTable::empty_copy() const {
  StaticFeatureTable t;
  t.kernel = kernel;
  t.architecture = architecture;
  t.compiler = compiler;
  t.sample_size = sample_size;
  t.population = population;
  t.sample_seed = sample_seed;
  t.sources = sources;
  t.parameters = parameters;
  t.feature_names = feature_names;
  return t;
}

std::size_t StaticFeatureTable::compiled_count() const noexcept {
  return static_cast<std::size_t>(std::count_if(m_rows.begin(), m_rows.end(), [](const Row& r) { return r.compiled; }));
}

StaticFeatureTable read_static_feature_table(const std::string& path, bool torn_tail_allowed) {
  const std::string text = detail::data::read_maybe_gzip(path);
  std::istringstream in(text);
  StaticFeatureTable t;
  std::string line;
  std::size_t line_no = 0;
  auto fail = [&](const std::string& message) -> void {
    throw input_error(path, fmt::format("line {}", line_no), message);
  };
  auto number = [&](const std::string& key, const std::string& value) -> std::uint64_t {
    std::uint64_t x = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
    if (ec != std::errc() || p != value.data() + value.size()) fail(fmt::format("{}: \"{}\" is not a count", key, value));
    return x;
  };
  bool header = false;
  std::size_t compiled_column = 0, error_column = 0;
  std::vector<std::string> names, cells;
  Features features;
  std::size_t consumed = 0;
  while (std::getline(in, line)) {
    ++line_no;
    consumed += line.size() + 1;
    if (torn_tail_allowed && consumed > text.size()) break;  // the last line lost its newline
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1 && line != kMagic) fail(fmt::format("expected \"{}\": not a static feature table", kMagic));
    if (line.empty()) continue;
    if (line[0] == '#') {
      const auto colon = line.find(':');
      if (colon == std::string::npos || colon < 2) continue;
      const std::string key = line.substr(2, colon - 2), value = line.substr(std::min(line.size(), colon + 2));
      if (key == "kernel") t.kernel = value;
      else if (key == "architecture") t.architecture = value;
      else if (key == "compiler") t.compiler = value;
      else if (key == "from") {
        std::istringstream words(value);
        for (std::string w; words >> w;) t.sources.push_back(w);
      } else if (key == "sample") {
        // "<size> of <population> configurations, seed <seed>"
        std::istringstream words(value);
        std::string size, of, population, configurations, seed_word, seed;
        words >> size >> of >> population >> configurations >> seed_word >> seed;
        if (of != "of" || seed_word != "seed") fail(fmt::format("sample: expected \"N of M configurations, seed S\", not \"{}\"", value));
        t.sample_size = number("sample", size);
        t.population = number("sample", population);
        t.sample_seed = number("sample", seed);
      }
      continue;
    }
    if (!split_csv_line(line, cells)) fail("unterminated quoted cell");
    if (!header) {
      auto it = std::find(cells.begin(), cells.end(), "compiled");
      if (it == cells.end()) fail("the header has no \"compiled\" column");
      if (cells.back() != "compile_error") fail("the header's last column is not \"compile_error\"");
      compiled_column = static_cast<std::size_t>(it - cells.begin());
      error_column = cells.size() - 1;
      t.parameters.assign(cells.begin(), it);
      t.feature_names.assign(it + 1, cells.end() - 1);
      names = cells;
      header = true;
      continue;
    }
    if (cells.size() != names.size())
      fail(fmt::format("{} cells where the header has {} (truncated or malformed row)", cells.size(), names.size()));
    std::vector<Value> values;
    for (std::size_t i = 0; i < compiled_column; ++i) {
      if (cells[i].empty()) fail(fmt::format("empty value of parameter {}", names[i]));
      values.push_back(value_from_text(cells[i]));
    }
    if (cells[compiled_column] != "0" && cells[compiled_column] != "1")
      fail(fmt::format("column compiled must be 0 or 1, not \"{}\"", cells[compiled_column]));
    features.clear();
    for (std::size_t i = compiled_column + 1; i < error_column; ++i) {
      if (cells[i].empty()) continue;
      double x = 0;
      const auto* end = cells[i].data() + cells[i].size();
      const auto [p, ec] = std::from_chars(cells[i].data(), end, x);
      if (ec != std::errc() || p != end || !std::isfinite(x))
        fail(fmt::format("column {}: \"{}\" is not a finite number", names[i], cells[i]));
      features[names[i]] = x;
    }
    const bool compiled = cells[compiled_column] == "1";
    if (!compiled && cells[error_column].empty()) fail("a configuration that did not compile has no compile_error");
    Config c(names_of(t.parameters), std::move(values));
    t.add(c, compiled, features, cells[error_column]);
  }
  if (!header) fail("no header row: empty or truncated table");
  if (t.kernel.empty() || t.architecture.empty()) fail("the comment lines name no kernel or architecture");
  return t;
}

std::string static_feature_table_head(const StaticFeatureTable& t) {
  std::string out = fmt::format("{}\n# kernel: {}\n# architecture: {}\n# compiler: {}\n", kMagic, t.kernel, t.architecture,
                                t.compiler);
  if (t.population > 0)
    out += fmt::format("# sample: {} of {} configurations, seed {}\n", t.sample_size, t.population, t.sample_seed);
  if (!t.sources.empty()) out += fmt::format("# from: {}\n", fmt::join(t.sources, " "));
  std::vector<std::string> header = t.parameters;
  header.push_back("compiled");
  header.insert(header.end(), t.feature_names.begin(), t.feature_names.end());
  header.push_back("compile_error");
  return out + fmt::format("{}\n", fmt::join(header, ","));
}

std::string static_feature_table_line(const StaticFeatureTable&, const StaticFeatureTable::Row& r) {
  std::string out;
  for (const auto& v : r.values) out += v + ',';
  out += r.compiled ? '1' : '0';
  for (double x : r.features) out += ',' + format_number(x);
  out += ',' + quote_csv(r.error) + '\n';
  return out;
}

void write_static_feature_table(const StaticFeatureTable& t, const std::string& path) {
  std::string out = static_feature_table_head(t);
  for (const auto& r : t.rows()) out += static_feature_table_line(t, r);
  detail::data::write_text(path, out);
}

Occupancy compute_occupancy(const Device& d, double threads_per_block, double registers_per_thread,
                            double shared_bytes_per_block, double grid_blocks) {
  Occupancy o;
  if (d.compute_capability_major == 0 || threads_per_block <= 0) return o;
  const SmLimits l = limits_of(d);
  const int warp = d.warp_size > 0 ? d.warp_size : 32;
  const double max_threads = d.max_threads_per_block > 0 ? d.max_threads_per_block : 1024;
  if (threads_per_block > max_threads) return o;
  const int warps_per_block = static_cast<int>(std::ceil(threads_per_block / warp));
  int blocks = std::min(l.max_blocks, l.max_warps / warps_per_block);
  const int regs_per_sm = d.registers_per_sm > 0 ? d.registers_per_sm : 65536;
  if (registers_per_thread > 0) {
    const double per_warp = std::ceil(registers_per_thread * warp / 256.0) * 256.0;
    blocks = std::min(blocks, static_cast<int>(std::floor(regs_per_sm / per_warp)) / warps_per_block);
  }
  if (shared_bytes_per_block > 0 || l.reserves_per_block) {
    const double per_block = std::ceil(shared_bytes_per_block / 128.0) * 128.0 + (l.reserves_per_block ? 1024.0 : 0.0);
    blocks = std::min(blocks, static_cast<int>(std::floor(l.shared_kib * 1024.0 / per_block)));
  }
  o.blocks_per_sm = std::max(0, blocks);
  if (o.blocks_per_sm == 0) return o;
  o.occupancy = static_cast<double>(o.blocks_per_sm * warps_per_block) / l.max_warps;
  if (d.sm_count > 0 && grid_blocks > 0) o.waves = grid_blocks / (static_cast<double>(o.blocks_per_sm) * d.sm_count);
  return o;
}

std::size_t attach_static_features(SpaceData& space, const StaticFeatureTable& table) {
  for (const auto& p : table.parameters)
    if (const auto& names = space.space.names();
        names && !names->empty() && std::find(names->begin(), names->end(), p) == names->end())
      throw invalid_argument_error(fmt::format("{}: the static feature table of {} ({}) has parameter {}, the space has not",
                                               space.path, table.kernel, table.architecture, p));
  std::size_t found = 0;
  for (auto& o : space.observations)
    if (describe_with_static_features(o.candidate, table)) ++found;
  return found;
}

bool describe_with_static_features(Candidate& candidate, const StaticFeatureTable& table) {
  Features& f = candidate.features;
  const auto* row = table.find(candidate.config);
  if (!row) {
    f["static_features_known"] = 0.0;
    return false;
  }
  f["static_features_known"] = 1.0;
  for (std::size_t i = 0; i < table.feature_names.size(); ++i)
    if (!std::isnan(row->features[i])) f[table.feature_names[i]] = row->features[i];
  f["compile_failed"] = row->compiled ? 0.0 : 1.0;
  if (!row->compiled || !candidate.device || candidate.device->compute_capability_major == 0) return true;
  auto get = [&](const char* name) {
    auto it = f.find(name);
    return it == f.end() ? 0.0 : it->second;
  };
  const Occupancy occ = compute_occupancy(*candidate.device, get("threads_per_block"), get("registers"),
                                          get("static_shared_memory_bytes") + get("dynamic_shared_memory_bytes"),
                                          get("grid_blocks"));
  f["blocks_per_sm"] = occ.blocks_per_sm;
  f["occupancy"] = occ.occupancy;
  f["waves"] = occ.waves;
  return true;
}

const StaticFeatureTable* find_static_feature_table(std::span<const StaticFeatureTable> tables, const std::string& kernel,
                                                    const Device* device) {
  const std::string architecture = device ? nvidia_architecture(*device) : std::string{};
  if (architecture.empty()) return nullptr;
  for (const auto& t : tables)
    if (t.kernel == kernel && t.architecture == architecture) return &t;
  return nullptr;
}

std::string nvidia_architecture(const Device& d) {
  if (d.compute_capability_major == 0 || d.vendor != "NVIDIA") return {};
  return fmt::format("sm_{}{}", d.compute_capability_major, d.compute_capability_minor);
}

std::vector<StaticFeatureTable> read_static_feature_tables(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(path)) return {read_static_feature_table(path)};
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && (name.ends_with(".csv") || name.ends_with(".csv.gz"))) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw input_error(path, "directory", "holds no static feature tables (*.csv, *.csv.gz)");
  std::vector<StaticFeatureTable> tables;
  std::map<std::pair<std::string, std::string>, std::string> file_of;  // (kernel, architecture)
  for (const auto& f : files) {
    tables.push_back(read_static_feature_table(f));
    const auto [it, added] = file_of.emplace(std::pair{tables.back().kernel, tables.back().architecture}, f);
    if (!added)
      throw input_error(f, "header", fmt::format("a second table for {} on {} in {} (the other: {}): one per kernel and "
                                                 "architecture",
                                                 tables.back().kernel, tables.back().architecture, path, it->second));
  }
  return tables;
}

std::vector<StaticFeatureCoverage> attach_static_features(std::vector<SpaceData>& spaces,
                                                          std::span<const StaticFeatureTable> tables) {
  std::vector<StaticFeatureCoverage> coverage;
  for (auto& space : spaces) {
    StaticFeatureCoverage c;
    c.path = space.path;
    c.observations = space.observations.size();
    if (space.device) c.architecture = nvidia_architecture(*space.device);
    const StaticFeatureTable* table = find_static_feature_table(tables, space.kernel, space.device.get());
    if (c.architecture.empty()) {
      c.note = fmt::format("{} is not an NVIDIA GPU with a compute capability in the device table: no static features "
                           "(there is no HIP compiler here)",
                           space.device ? space.device->name : "an unknown device");
    } else if (!table) {
      c.note = fmt::format("no table for {} on {}", space.kernel, c.architecture);
    }
    if (table) {
      c.with_features = attach_static_features(space, *table);
    } else {
      for (auto& o : space.observations) o.candidate.features["static_features_known"] = 0.0;
    }
    coverage.push_back(std::move(c));
  }
  return coverage;
}

std::string describe(std::span<const StaticFeatureCoverage> coverage) {
  std::string out;
  std::size_t total = 0, with = 0;
  for (const auto& c : coverage) {
    total += c.observations;
    with += c.with_features;
    out += fmt::format("  {}: {} of {} configurations with static features{}\n", c.path, c.with_features, c.observations,
                       c.note.empty() ? "" : " (" + c.note + ")");
  }
  return fmt::format("static features: {} of {} configurations\n", with, total) + out;
}

}  // namespace gpuforecast
