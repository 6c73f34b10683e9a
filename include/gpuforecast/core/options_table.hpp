#pragma once
// One table per options struct, written once beside the struct: each field's name, range and
// description. The table parses NAME=VALUE text (the command line's --option, a preset), rejects
// values out of range (negative, NaN, infinite, not a number) with a message that names the
// option, lists the options for help and docs, and writes a struct back as NAME=VALUE text.
// A table of a part (an options struct held by a larger one) joins the larger table with
// include(), so a composed strategy keeps the flat option names its parts define.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Inclusive bounds of a numeric option.
struct OptionRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();

  [[nodiscard]] static OptionRange at_least(double lo) { return {lo, std::numeric_limits<double>::infinity()}; }
  [[nodiscard]] static OptionRange between(double lo, double hi) { return {lo, hi}; }
  [[nodiscard]] bool contains(double x) const { return x >= min && x <= max; }
  [[nodiscard]] std::string text() const;
};

// What help and docs show of one option.
struct OptionInfo {
  std::string name;
  std::string type;           // "integer", "number", "bool", "text", or "a | b | c"
  std::string range;          // "[0, 1]", ">= 1", or empty
  std::string default_value;  // as written by the table for a default-constructed struct
  std::string description;
  std::string part;           // the part's table it came from through include(), else empty
};

namespace detail::options {

inline std::string number_text(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

template <class T>
std::string to_text(const T& v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
  else if constexpr (std::is_same_v<T, std::string>) return v;
  else if constexpr (std::is_floating_point_v<T>) return number_text(static_cast<double>(v));
  else return std::to_string(v);
}

// Parses the whole of `text` as T, or returns why not.
template <class T>
std::string parse(std::string_view text, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (text == "1" || text == "true" || text == "on") out = true;
    else if (text == "0" || text == "false" || text == "off") out = false;
    else return "expected true/false, on/off or 1/0";
    return {};
  } else if constexpr (std::is_same_v<T, std::string>) {
    out = std::string(text);
    return {};
  } else {
    if (text.empty()) return "expected a number";
    if constexpr (std::is_unsigned_v<T>)
      if (text.front() == '-') return "must not be negative";
    T v{};
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) return "is out of range";
    if (ec != std::errc() || p != text.data() + text.size())
      return std::is_integral_v<T> ? "expected a whole number" : "expected a number";
    if constexpr (std::is_floating_point_v<T>)
      if (!std::isfinite(v)) return "must be a finite number";
    out = v;
    return {};
  }
}

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, std::string>) return "text";
  else if constexpr (std::is_integral_v<T>) return "integer";
  else return "number";
}

}  // namespace detail::options

template <class Options>
class OptionsTable {
 public:
  // `owner` opens every error message, e.g. `strategy "surrogate"`.
  explicit OptionsTable(std::string owner) : m_owner(std::move(owner)) {}

  // A field reached through `access` (a member pointer, or a callable returning a reference
  // into the struct, for fields of nested parts).
  template <class Access>
  OptionsTable& add(std::string name, Access access, std::string description, OptionRange range = {}) {
    using Field = std::remove_cvref_t<decltype(std::invoke(access, std::declval<Options&>()))>;
    static_assert(std::is_arithmetic_v<Field> || std::is_same_v<Field, std::string>,
                  "OptionsTable::add takes numbers, bools and strings; use add_choice for enumerations");
    Entry e;
    const bool ranged = std::is_arithmetic_v<Field> && !std::is_same_v<Field, bool>;
    e.info = {name, detail::options::type_name<Field>(), ranged ? range.text() : "", "", std::move(description), ""};
    e.parse = [access, range](Options& o, std::string_view text) -> std::string {
      Field v{};
      if (auto why = detail::options::parse(text, v); !why.empty()) return why;
      if constexpr (std::is_arithmetic_v<Field> && !std::is_same_v<Field, bool>)
        if (!range.contains(static_cast<double>(v))) return "must be in " + range.text();
      std::invoke(access, o) = v;
      return {};
    };
    e.format = [access](const Options& o) {
      return detail::options::to_text(std::invoke(access, const_cast<Options&>(o)));
    };
    m_entries.push_back(std::move(e));
    return *this;
  }

  // An enumeration written as one of `choices` (name, value).
  template <class Access, class E>
  OptionsTable& add_choice(std::string name, Access access, std::vector<std::pair<std::string, E>> choices,
                           std::string description) {
    Entry e;
    std::string names, listed;
    for (const auto& c : choices) {
      names += (names.empty() ? "one of " : ", ") + c.first;
      listed += (listed.empty() ? "" : ", ") + c.first;
    }
    e.info = {name, names, "", "", std::move(description), ""};
    e.parse = [access, choices, listed](Options& o, std::string_view text) -> std::string {
      for (const auto& [n, v] : choices)
        if (n == text) {
          std::invoke(access, o) = v;
          return {};
        }
      return "is not one of " + listed;
    };
    e.format = [access, choices](const Options& o) -> std::string {
      const auto& v = std::invoke(access, const_cast<Options&>(o));
      for (const auto& [n, c] : choices)
        if (c == v) return n;
      return "?";
    };
    m_entries.push_back(std::move(e));
    return *this;
  }

  // Every option of a part's table, reached through `member` of this struct.
  template <class Part>
  OptionsTable& include(Part Options::*member, const OptionsTable<Part>& part) {
    for (const auto& pe : part.m_entries) {
      Entry e;
      e.info = pe.info;
      if (e.info.part.empty()) e.info.part = part.owner();
      e.parse = [member, p = pe.parse](Options& o, std::string_view text) { return p(o.*member, text); };
      e.format = [member, f = pe.format](const Options& o) { return f(o.*member); };
      m_entries.push_back(std::move(e));
    }
    return *this;
  }

  // Sets one option; throws invalid_argument_error naming the owner, option and value.
  void set(Options& o, std::string_view name, std::string_view value) const {
    const Entry* e = find(name);
    if (!e) throw invalid_argument_error(m_owner + " has no option \"" + std::string(name) + "\" (options: " + names() + ")");
    if (auto why = e->parse(o, value); !why.empty())
      throw invalid_argument_error(m_owner + ": option " + std::string(name) + "=" + std::string(value) + ": " + why);
  }
  // Sets every option of `values`: all are checked, none is ignored.
  void set(Options& o, const std::map<std::string, std::string>& values) const {
    for (const auto& [k, v] : values) set(o, k, v);
  }
  [[nodiscard]] Options parse(const std::map<std::string, std::string>& values, Options start = {}) const {
    set(start, values);
    return start;
  }

  // NAME=VALUE of every option, in table order: what set() reads back to the same struct.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> write(const Options& o) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& e : m_entries) out.emplace_back(e.info.name, e.format(o));
    return out;
  }

  [[nodiscard]] std::vector<OptionInfo> info(const Options& defaults = {}) const {
    std::vector<OptionInfo> out;
    for (const auto& e : m_entries) {
      out.push_back(e.info);
      out.back().default_value = e.format(defaults);
    }
    return out;
  }

  // A Markdown table of the options with `defaults` (for docs; a test keeps docs in step),
  // with a column naming each option's part when some came through include().
  [[nodiscard]] std::string markdown(const Options& defaults = {}) const {
    const auto rows = info(defaults);
    const bool parts = std::any_of(rows.begin(), rows.end(), [](const OptionInfo& i) { return !i.part.empty(); });
    std::string s = parts ? "| part | option | default | values | what it does |\n|---|---|---|---|---|\n"
                          : "| option | default | values | what it does |\n|---|---|---|---|\n";
    for (const auto& i : rows) {
      const std::string values = i.range.empty() ? i.type : i.type + " " + i.range;
      if (parts) s += "| " + (i.part.empty() ? m_owner : i.part) + " ";
      s += "| `" + i.name + "` | " + i.default_value + " | " + values + " | " + i.description + " |\n";
    }
    return s;
  }

  [[nodiscard]] std::string names() const {
    std::string s;
    for (const auto& e : m_entries) s += (s.empty() ? "" : ", ") + e.info.name;
    return s;
  }
  [[nodiscard]] const std::string& owner() const noexcept { return m_owner; }

 private:
  template <class>
  friend class OptionsTable;
  struct Entry {
    OptionInfo info;
    std::function<std::string(Options&, std::string_view)> parse;  // empty string: accepted
    std::function<std::string(const Options&)> format;
  };
  [[nodiscard]] const Entry* find(std::string_view name) const {
    for (const auto& e : m_entries)
      if (e.info.name == name) return &e;
    return nullptr;
  }
  std::string m_owner;
  std::vector<Entry> m_entries;
};

inline std::string OptionRange::text() const {
  const bool lo = std::isfinite(min), hi = std::isfinite(max);
  if (lo && hi) return "[" + detail::options::number_text(min) + ", " + detail::options::number_text(max) + "]";
  if (lo) return ">= " + detail::options::number_text(min);
  if (hi) return "<= " + detail::options::number_text(max);
  return "";
}

}  // namespace gpuforecast
