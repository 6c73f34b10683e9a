#include "gpuforecast/data/kernel_tuner_cache.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "data/cache_parse.hpp"
#include "data/file_io.hpp"
#include "data/json_util.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {
namespace detail::data {

std::string parent_folder_name(const std::string& path) {
  const std::filesystem::path p(path);
  auto parent = p.parent_path();
  if (parent.empty()) parent = std::filesystem::absolute(p).parent_path();
  return parent.filename().string();
}

namespace {

// Thrown inside the parser when the first top-level keys say "T4 results file".
struct LooksLikeT4 {};

enum class Role : std::uint8_t {
  top, problem_size, tune_keys, tune_params, tune_values, cache, entry, entry_times, skip
};

struct Frame {
  Role role;
  bool is_array;
  std::string key;          // key being read (objects)
  std::size_t index = 0;    // element being read (arrays)
  bool awaiting_value = false;
};

struct Scalar {
  enum Kind : std::uint8_t { null, boolean, integer, floating, string } kind = null;
  std::int64_t i = 0;
  double d = 0;
  const std::string* s = nullptr;

  [[nodiscard]] bool is_number() const noexcept { return kind == integer || kind == floating; }
  [[nodiscard]] double number() const noexcept { return kind == integer ? static_cast<double>(i) : d; }
  [[nodiscard]] const char* type_name() const noexcept {
    switch (kind) {
      case null: return "null";
      case boolean: return "a boolean";
      case integer: return "an integer";
      case floating: return "a number";
      case string: return "a string";
    }
    return "?";
  }
};

// One cache entry while it is being read; buffers are reused from entry to entry.
struct EntryScratch {
  std::string key;
  std::optional<double> time_number;
  std::string time_string;
  bool has_time = false;
  bool has_times = false;
  std::vector<double> times;
  double compile_ms = 0;
  double benchmark_ms = 0;
  std::string timestamp;
  std::vector<Value> values;       // by parameter index, when names are known
  std::vector<char> have;
  std::vector<std::pair<std::string, Value>> unresolved;  // names not known yet
  std::map<std::string, double> extra;

  void reset(std::size_t n_params) {
    time_number.reset();
    time_string.clear();
    has_time = has_times = false;
    times.clear();
    compile_ms = benchmark_ms = 0;
    timestamp.clear();
    values.assign(n_params, Value{});
    have.assign(n_params, 0);
    unresolved.clear();
    extra.clear();
  }
};

// An entry whose parameter names were not known when it was read (tune_params_keys after
// cache): resolved at the end of the document.
struct Stashed {
  std::size_t entry_index;
  std::string key;
  std::vector<std::pair<std::string, Value>> fields;
};

Value to_value(const Scalar& v) {
  switch (v.kind) {
    case Scalar::integer: return Value(v.i);
    case Scalar::floating: return Value(v.d);
    case Scalar::string: return Value(*v.s);
    case Scalar::boolean: return Value(v.i);
    case Scalar::null: break;
  }
  return Value{};
}

class CacheSax {
 public:
  CacheSax(const std::string& path, std::string_view text) : m_path(path), m_text(text) {
    m_content_end = text.size();
    while (m_content_end > 0 && is_space(text[m_content_end - 1])) --m_content_end;
    m_file.path = path;
    m_file.benchmark = parent_folder_name(path);
  }

  // nlohmann SAX interface.
  bool null() { return on_scalar(Scalar{}); }
  bool boolean(bool b) {
    Scalar s;
    s.kind = Scalar::boolean;
    s.i = b ? 1 : 0;
    return on_scalar(s);
  }
  bool number_integer(std::int64_t i) {
    Scalar s;
    s.kind = Scalar::integer;
    s.i = i;
    return on_scalar(s);
  }
  bool number_unsigned(std::uint64_t u) {
    Scalar s;
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      s.kind = Scalar::integer;
      s.i = static_cast<std::int64_t>(u);
    } else {
      s.kind = Scalar::floating;
      s.d = static_cast<double>(u);
    }
    return on_scalar(s);
  }
  bool number_float(double d, const std::string& /*text*/) {
    Scalar s;
    s.kind = Scalar::floating;
    s.d = d;
    return on_scalar(s);
  }
  bool string(std::string& str) {
    Scalar s;
    s.kind = Scalar::string;
    s.s = &str;
    return on_scalar(s);
  }
  bool binary(nlohmann::json::binary_t& /*unused*/) { fail("binary values are not JSON"); }
  bool start_object(std::size_t /*n*/) { return start_container(false); }
  bool start_array(std::size_t /*n*/) { return start_container(true); }
  bool end_object() { return end_container(); }
  bool end_array() { return end_container(); }
  bool key(std::string& k) {
    Frame& f = m_stack.back();
    f.key.assign(k);
    f.awaiting_value = true;
    if (f.role == Role::top && (k == "results" || k == "schema_version") && !m_saw_cache) throw LooksLikeT4{};
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& ex) {
    if (can_repair(position)) {
      m_repaired = true;
      return false;
    }
    const bool torn = m_may_drop_torn_line && position >= m_content_end && m_stack.size() >= 2 &&
                      m_stack[1].role == Role::cache;
    std::string msg = json_error_message(ex);
    // The lexer stops at the first letter of NaN / Infinity / -Infinity (last_token ends there).
    if (!last_token.empty() && (last_token.back() == 'N' || last_token.back() == 'I'))
      msg += " (NaN and Infinity are not JSON; a runtime must be a finite number)";
    else if (position >= m_content_end)
      msg += " (the file is truncated)";
    const std::string where = path_string();
    input_error e(m_path, where.empty() ? fmt::format("byte {}", position) : fmt::format("byte {} ({})", position, where),
                  msg);
    if (!torn) throw e;
    m_torn_error = std::make_exception_ptr(std::move(e));
    return false;
  }

  // The file ends inside the cache in the middle of a line: a write cut short (a killed search
  // appending its cache). The caller may drop that line, or report this error.
  [[nodiscard]] const std::exception_ptr& torn_error() const noexcept { return m_torn_error; }
  void forbid_dropping_torn_line() noexcept { m_may_drop_torn_line = false; }

  CacheFile finish() {
    if (m_torn_error) std::rethrow_exception(m_torn_error);
    if (!m_stack.empty() && !m_repaired) fail_at("", "the document ended early");
    if (!m_saw_cache) fail_at("", "missing key \"cache\": not a Kernel Tuner cache file");
    resolve_names();
    for (auto& s : m_stashed) {
      m_entry.reset(m_names->size());
      m_entry.key = s.key;
      m_entry.unresolved = std::move(s.fields);
      resolve_unresolved();
      CacheEntry& e = m_file.entries[s.entry_index];
      check_all_params_present(s.key);
      e.config = Config(m_names, m_entry.values);
      for (auto& [k, v] : m_entry.extra) e.extra[k] = v;
    }
    std::vector<Parameter> params;
    params.reserve(m_names->size());
    for (std::size_t i = 0; i < m_names->size(); ++i) {
      const std::string& name = (*m_names)[i];
      auto it = std::find_if(m_params.begin(), m_params.end(), [&](const Parameter& p) { return p.name == name; });
      if (it != m_params.end()) {
        params.push_back(std::move(*it));
      } else {
        // No value list in the header: the values seen in the entries, in ascending order.
        Parameter p{name, {}};
        for (const auto& e : m_file.entries) p.values.push_back(e.config[i]);
        std::sort(p.values.begin(), p.values.end(), [](const Value& a, const Value& b) { return a < b; });
        p.values.erase(std::unique(p.values.begin(), p.values.end()), p.values.end());
        params.push_back(std::move(p));
      }
    }
    try {
      m_file.space = TuningSpace(std::move(params), {});
    } catch (const input_error&) {
      throw;
    } catch (const error& e) {
      fail_at("tune_params_keys", e.what());  // e.g. a name given twice
    }
    // Configs share the space's names (one vector for the whole file).
    const ParameterNames& shared = m_file.space.names();
    for (auto& e : m_file.entries) e.config = Config(shared, std::move(e.config.values()));
    return std::move(m_file);
  }

 private:
  static bool is_space(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

  // Kernel Tuner appends one entry line at a time and closes the file at the end of a run; a
  // crash leaves it open after an entry line (with or without the trailing comma). Kernel
  // Tuner's correct_open_cache appends the closing braces; we accept exactly that case.
  bool can_repair(std::size_t position) const {
    if (position < m_content_end || m_content_end == 0) return false;
    if (m_stack.size() != 2 || m_stack[1].role != Role::cache || m_stack[1].awaiting_value) return false;
    const char last = m_text[m_content_end - 1];
    if (last == ',') {
      // Only a comma after the last entry: `"16,1,` is the start of a key cut short, not one.
      const std::size_t brace = m_text.find_last_of("{}", m_content_end - 1);
      if (brace == std::string_view::npos) return false;
      for (std::size_t i = brace + 1; i + 1 < m_content_end; ++i)
        if (!is_space(m_text[i])) return false;
      return true;
    }
    return last == '}' || (last == '{' && m_file.entries.empty() && m_stashed.empty());
  }

  [[noreturn]] void fail(const std::string& message) const { throw input_error(m_path, path_string(), message); }
  [[noreturn]] void fail_at(const std::string& where, const std::string& message) const {
    throw input_error(m_path, where, message);
  }

  std::string path_string() const {
    std::string out;
    for (std::size_t d = 0; d < m_stack.size(); ++d) {
      const Frame& f = m_stack[d];
      const bool has_child = d + 1 < m_stack.size();
      if (f.is_array) {
        out += fmt::format("[{}]", f.index);
      } else if (f.awaiting_value || has_child) {
        if (d == 0)
          out += f.key;
        else if (f.role == Role::entry)
          out.append(".").append(f.key);
        else
          out.append("[").append(quote_json(f.key)).append("]");
      }
    }
    return out;
  }

  std::string entry_path(const std::string& field) const {
    return fmt::format("cache[{}]{}{}", quote_json(m_entry.key), field.empty() ? "" : ".", field);
  }

  Role child_role(bool is_array) {
    if (m_stack.empty()) {
      if (is_array) fail_at("byte 0", "the top level is a list; a Kernel Tuner cache file is an object");
      return Role::top;
    }
    Frame& parent = m_stack.back();
    switch (parent.role) {
      case Role::top: {
        const std::string& k = parent.key;
        if (k == "cache") {
          if (is_array) fail("\"cache\" must be an object");
          m_saw_cache = true;
          if (m_keys_done) m_names = std::make_shared<const std::vector<std::string>>(m_keys);
          return Role::cache;
        }
        if (k == "tune_params") {
          if (is_array) fail("\"tune_params\" must be an object of value lists");
          return Role::tune_params;
        }
        if (k == "tune_params_keys") {
          if (!is_array) fail("\"tune_params_keys\" must be a list of names");
          m_keys.clear();
          return Role::tune_keys;
        }
        if (k == "problem_size") {
          if (!is_array) fail("\"problem_size\" must be a list of integers or an integer");
          m_file.problem_size.clear();
          return Role::problem_size;
        }
        return Role::skip;
      }
      case Role::tune_params:
        if (!is_array) fail("a parameter's values must be a list");
        m_params.push_back(Parameter{parent.key, {}});
        return Role::tune_values;
      case Role::cache:
        if (is_array) fail("a cache entry must be an object");
        m_entry.reset(m_names ? m_names->size() : 0);
        m_entry.key = parent.key;
        return Role::entry;
      case Role::entry:
        if (parent.key == "times") {
          if (!is_array) fail("\"times\" must be a list of runtimes");
          m_entry.has_times = true;
          return Role::entry_times;
        }
        if (param_index(parent.key) != npos) fail("a parameter value must be a number or a string");
        return Role::skip;
      case Role::problem_size:
      case Role::tune_keys:
      case Role::tune_values:
      case Role::entry_times:
        fail(fmt::format("expected a scalar, found {}", is_array ? "a list" : "an object"));
      case Role::skip:
        return Role::skip;
    }
    return Role::skip;
  }

  bool start_container(bool is_array) {
    const Role role = child_role(is_array);
    if (!m_stack.empty() && !m_stack.back().is_array) m_stack.back().awaiting_value = false;
    m_stack.push_back(Frame{role, is_array, {}, 0, false});
    return true;
  }

  bool end_container() {
    const Role role = m_stack.back().role;
    if (role == Role::entry) finish_entry();
    if (role == Role::tune_keys) m_keys_done = true;
    m_stack.pop_back();
    if (!m_stack.empty() && m_stack.back().is_array) ++m_stack.back().index;
    return true;
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::size_t param_index(const std::string& name) const noexcept {
    if (!m_names) return npos;
    const auto& n = *m_names;
    for (std::size_t i = 0; i < n.size(); ++i)
      if (n[i] == name) return i;
    return npos;
  }

  double runtime_number(const Scalar& v, const char* what) const {
    if (!v.is_number()) fail(fmt::format("{} must be a number, found {}", what, v.type_name()));
    const double d = v.number();
    if (!std::isfinite(d)) fail(fmt::format("{} is not finite", what));
    if (d < 0) fail(fmt::format("{} is negative ({})", what, d));
    return d;
  }

  bool on_scalar(const Scalar& v) {
    if (m_stack.empty()) fail_at("byte 0", "the document is not an object");
    Frame& f = m_stack.back();
    switch (f.role) {
      case Role::top: top_scalar(f.key, v); break;
      case Role::problem_size:
        if (v.kind == Scalar::integer) {
          m_file.problem_size.push_back(v.i);
        } else if (v.kind == Scalar::floating && std::floor(v.d) == v.d && std::abs(v.d) < 9e18) {
          m_file.problem_size.push_back(static_cast<std::int64_t>(v.d));
        } else {
          fail(fmt::format("a problem size must be an integer, found {}", v.type_name()));
        }
        break;
      case Role::tune_keys:
        if (v.kind != Scalar::string) fail(fmt::format("a parameter name must be a string, found {}", v.type_name()));
        m_keys.push_back(*v.s);
        break;
      case Role::tune_values:
        if (v.kind == Scalar::null) fail("a parameter value must be a number or a string, found null");
        m_params.back().values.push_back(to_value(v));
        break;
      case Role::tune_params: fail("a parameter's values must be a list");
      case Role::cache: fail(fmt::format("a cache entry must be an object, found {}", v.type_name()));
      case Role::entry: entry_scalar(f.key, v); break;
      case Role::entry_times: m_entry.times.push_back(runtime_number(v, "a runtime")); break;
      case Role::skip: break;
    }
    if (f.is_array)
      ++f.index;
    else
      f.awaiting_value = false;
    return true;
  }

  void top_scalar(const std::string& k, const Scalar& v) {
    auto text = [&](std::string& out) {
      if (v.kind == Scalar::string)
        out = *v.s;
      else if (v.kind != Scalar::null)
        fail(fmt::format("expected a string, found {}", v.type_name()));
    };
    if (k == "device_name") {
      text(m_file.device_name);
    } else if (k == "kernel_name") {
      text(m_file.kernel_name);
    } else if (k == "objective") {
      text(m_file.objective);
    } else if (k == "problem_size") {
      if (v.kind != Scalar::integer) fail(fmt::format("\"problem_size\" must be integers, found {}", v.type_name()));
      m_file.problem_size = {v.i};
    } else if (k == "cache" || k == "tune_params" || k == "tune_params_keys") {
      fail(fmt::format("expected {}, found {}", k == "tune_params_keys" ? "a list" : "an object", v.type_name()));
    }
  }

  void entry_scalar(const std::string& k, const Scalar& v) {
    if (k == "time") {
      m_entry.has_time = true;
      if (v.kind == Scalar::string) {
        m_entry.time_string = *v.s;
      } else {
        m_entry.time_number = runtime_number(v, "\"time\"");
      }
      return;
    }
    if (k == "times") {
      if (v.kind != Scalar::null) fail(fmt::format("\"times\" must be a list of runtimes, found {}", v.type_name()));
      return;
    }
    if (k == "compile_time") {
      if (v.kind != Scalar::null) m_entry.compile_ms = runtime_number(v, "\"compile_time\"");
      return;
    }
    if (k == "benchmark_time") {
      if (v.kind != Scalar::null) m_entry.benchmark_ms = runtime_number(v, "\"benchmark_time\"");
      return;
    }
    if (k == "timestamp") {
      if (v.kind == Scalar::string) m_entry.timestamp = *v.s;
      return;
    }
    if (!m_names) {
      if (v.kind != Scalar::null) m_entry.unresolved.emplace_back(k, to_value(v));
      return;
    }
    const std::size_t i = param_index(k);
    if (i != npos) {
      if (v.kind == Scalar::null) fail("a parameter value must be a number or a string, found null");
      m_entry.values[i] = to_value(v);
      m_entry.have[i] = 1;
    } else if (v.is_number()) {
      m_entry.extra[k] = v.number();
    }
  }

  void resolve_unresolved() {
    for (auto& [k, v] : m_entry.unresolved) {
      const std::size_t i = param_index(k);
      if (i != npos) {
        m_entry.values[i] = std::move(v);
        m_entry.have[i] = 1;
      } else if (v.is_number()) {
        m_entry.extra[k] = v.as_double();
      }
    }
    m_entry.unresolved.clear();
  }

  void check_all_params_present(const std::string& key) const {
    for (std::size_t i = 0; i < m_entry.have.size(); ++i)
      if (!m_entry.have[i])
        fail_at(fmt::format("cache[{}]", quote_json(key)), fmt::format("missing parameter \"{}\"", (*m_names)[i]));
  }

  void finish_entry() {
    if (!m_entry.has_time) fail_at(entry_path(""), "missing key \"time\"");
    CacheEntry e;
    e.timestamp = m_entry.timestamp;
    Measurement& m = e.measurement;
    m.samples_ms = m_entry.times;
    m.compile_ms = m_entry.compile_ms;
    m.benchmark_ms = m_entry.benchmark_ms;
    if (m_entry.time_number) {
      m.status = Status::ok;
      e.mean_ms = *m_entry.time_number;
      if (m.samples_ms.empty()) {
        m.median_ms = m.ci_low_ms = m.ci_high_ms = e.mean_ms;
      } else {
        summarise_samples(m);  // samples were checked finite and non-negative above
      }
    } else {
      try {
        m.status = parse_status(m_entry.time_string);
      } catch (const invalid_argument_error&) {
        fail_at(entry_path("time"),
                fmt::format("\"time\" is \"{}\": neither a number nor a known failure (RuntimeFailedConfig, "
                            "CompilationFailedConfig, InvalidConfig)",
                            m_entry.time_string));
      }
      if (m.status == Status::ok)
        fail_at(entry_path("time"), fmt::format("\"time\" is the string \"{}\", not a number", m_entry.time_string));
      m.reason = m_entry.time_string;
    }
    if (m_names) {
      resolve_unresolved();
      check_all_params_present(m_entry.key);
      e.config = Config(m_names, m_entry.values);
    } else {
      m_stashed.push_back(Stashed{m_file.entries.size(), m_entry.key, std::move(m_entry.unresolved)});
    }
    e.extra = std::move(m_entry.extra);
    // What the measurement cost when it was taken, as Kernel Tuner's simulation mode counts it.
    double verification = 0;
    if (auto it = e.extra.find("verification_time"); it != e.extra.end()) verification = it->second;
    m.cost_s = (m.compile_ms + m.benchmark_ms + verification) / 1000.0;
    m_file.entries.push_back(std::move(e));
  }

  void resolve_names() {
    if (m_names) return;
    std::vector<std::string> names;
    if (m_keys_done) {
      names = m_keys;
    } else if (!m_params.empty()) {
      for (const auto& p : m_params) names.push_back(p.name);
    } else {
      fail_at("", "missing key \"tune_params_keys\" (the parameter names)");
    }
    m_names = std::make_shared<const std::vector<std::string>>(std::move(names));
  }

  const std::string& m_path;
  std::string_view m_text;
  std::size_t m_content_end = 0;
  std::vector<Frame> m_stack;
  CacheFile m_file;
  std::vector<std::string> m_keys;
  bool m_keys_done = false;
  bool m_saw_cache = false;
  bool m_repaired = false;
  bool m_may_drop_torn_line = true;
  std::exception_ptr m_torn_error;
  std::vector<Parameter> m_params;
  ParameterNames m_names;
  EntryScratch m_entry;
  std::vector<Stashed> m_stashed;
};

}  // namespace

std::optional<CacheFile> parse_cache_or_t4(std::string_view json, const std::string& path) {
  CacheSax sax(path, json);
  try {
    nlohmann::json::sax_parse(json.begin(), json.end(), &sax, nlohmann::json::input_format_t::json, true);
  } catch (const LooksLikeT4&) {
    return std::nullopt;
  }
  if (!sax.torn_error()) return sax.finish();
  // A torn last line: keep what comes before it when that is a complete open cache.
  std::size_t end = json.size();
  while (end > 0 && (json[end - 1] == ' ' || json[end - 1] == '\n' || json[end - 1] == '\r' || json[end - 1] == '\t')) --end;
  const std::size_t cut = json.rfind('\n', end == 0 ? 0 : end - 1);
  if (cut == std::string_view::npos) std::rethrow_exception(sax.torn_error());
  const std::string_view kept = json.substr(0, cut);
  CacheSax prefix(path, kept);
  prefix.forbid_dropping_torn_line();
  CacheFile file;
  try {
    nlohmann::json::sax_parse(kept.begin(), kept.end(), &prefix, nlohmann::json::input_format_t::json, true);
    file = prefix.finish();
  } catch (...) {
    std::rethrow_exception(sax.torn_error());  // the line before is no better: report the first error
  }
  const auto line = static_cast<std::size_t>(std::count(kept.begin(), kept.end(), '\n')) + 2;
  file.warnings.push_back(fmt::format("{}: line {} is an incomplete cache entry (a write cut short); dropped it, "
                                      "kept the {} complete entries before it",
                                      path, line, file.entries.size()));
  fmt::print(stderr, "gpuforecast: warning: {}\n", file.warnings.back());
  return file;
}

}  // namespace detail::data

CacheFile parse_kernel_tuner_cache(std::string_view bytes, const std::string& name) {
  std::string inflated;
  if (detail::data::is_gzip(bytes)) {
    inflated = detail::data::gunzip(bytes, name);
    bytes = inflated;
  }
  auto file = detail::data::parse_cache_or_t4(bytes, name);
  if (!file) throw input_error(name, "", "this is a T4 results file, not a Kernel Tuner cache file (use read_t4)");
  return std::move(*file);
}

CacheFile read_kernel_tuner_cache(const std::string& path) {
  const std::string text = detail::data::read_maybe_gzip(path);
  auto file = detail::data::parse_cache_or_t4(text, path);
  if (!file) throw input_error(path, "", "this is a T4 results file, not a Kernel Tuner cache file (use read_t4)");
  return std::move(*file);
}

namespace {

nlohmann::ordered_json value_json(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_float()) return v.as_double();
  return v.as_string();
}

// The reason when it is a failure name the reader turns back into the same status (a compiler
// log or "absent from FILE" is not), else Kernel Tuner's name of the status.
std::string failure_name(const Measurement& m) {
  if (!m.reason.empty()) {
    try {
      if (parse_status(m.reason) == m.status) return m.reason;
    } catch (const invalid_argument_error&) {
    }
  }
  switch (m.status) {
    case Status::compile_failed: return "CompilationFailedConfig";
    case Status::invalid: return "InvalidConfig";
    default: return "RuntimeFailedConfig";
  }
}

}  // namespace

namespace detail::data {

std::string cache_header_text(const CacheFile& file) {
  using ojson = nlohmann::ordered_json;
  const auto& params = file.space.parameters();
  ojson header;
  header["device_name"] = file.device_name;
  header["kernel_name"] = file.kernel_name;
  header["problem_size"] = file.problem_size;
  ojson keys = ojson::array();
  ojson lists = ojson::object();
  for (const auto& p : params) {
    keys.push_back(p.name);
    ojson values = ojson::array();
    for (const auto& v : p.values) values.push_back(value_json(v));
    lists[p.name] = std::move(values);
  }
  header["tune_params_keys"] = std::move(keys);
  header["tune_params"] = std::move(lists);
  header["objective"] = file.objective;
  // Kernel Tuner's layout: the header, then one line per entry, so the file can be appended to.
  std::string out = header.dump(0);
  out.pop_back();  // the closing brace
  while (!out.empty() && out.back() == '\n') out.pop_back();
  out += ",\n\"cache\": {";
  return out;
}

std::string cache_entry_text(const CacheEntry& e, const TuningSpace& space, const std::string& path) {
  using ojson = nlohmann::ordered_json;
  const auto& params = space.parameters();
  if (e.config.size() != params.size())
    throw invalid_argument_error(fmt::format("{}: entry [{}] has {} values for {} parameters", path,
                                             e.config.to_string(), e.config.size(), params.size()));
  ojson entry = ojson::object();
  for (std::size_t i = 0; i < params.size(); ++i) entry[params[i].name] = value_json(e.config[i]);
  const Measurement& m = e.measurement;
  if (m.ok()) {
    double mean = e.mean_ms;
    if (mean == 0 && !m.samples_ms.empty()) {
      for (double s : m.samples_ms) mean += s;
      mean /= static_cast<double>(m.samples_ms.size());
    } else if (mean == 0) {
      mean = m.median_ms;
    }
    entry["time"] = mean;
  } else {
    entry["time"] = failure_name(m);
  }
  if (!m.samples_ms.empty()) entry["times"] = m.samples_ms;
  entry["compile_time"] = m.compile_ms;
  entry["benchmark_time"] = m.benchmark_ms;
  for (const auto& [k, v] : e.extra) entry[k] = v;
  if (!e.timestamp.empty()) entry["timestamp"] = e.timestamp;
  return ojson(e.config.key()).dump() + ": " + entry.dump();
}

}  // namespace detail::data

void write_kernel_tuner_cache(const CacheFile& file, const std::string& path) {
  std::string out = detail::data::cache_header_text(file);
  bool first = true;
  for (const auto& e : file.entries) {
    out += first ? "\n" : ",\n";
    first = false;
    out += detail::data::cache_entry_text(e, file.space, path);
  }
  out += "}\n}\n";
  detail::data::write_text(path, out);
}

}  // namespace gpuforecast
