#pragma once
// Internal helpers for messages about JSON input.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/config.hpp"

namespace gpuforecast::detail::data {

// A string as a JSON literal, for paths such as cache["16,1,1"].times[3].
inline std::string quote_json(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
inline std::string json_error_message(const nlohmann::detail::exception& ex) {
  std::string_view w = ex.what();
  if (w.starts_with("[json.exception.")) {
    if (auto close = w.find("] "); close != std::string_view::npos) w.remove_prefix(close + 2);
  }
  return std::string(w);
}

// A JSON number, string or boolean (as 1 / 0) as a parameter value; nullopt for anything else
// (null, an array, an object), which each reader refuses naming where it found it.
template <class Json>
std::optional<Value> scalar_value(const Json& j) {
  if (j.is_number_integer()) return Value(j.template get<std::int64_t>());
  if (j.is_number()) return Value(j.template get<double>());
  if (j.is_string()) return Value(j.template get<std::string>());
  if (j.is_boolean()) return Value(j.template get<bool>() ? 1 : 0);
  return std::nullopt;
}

// A whole JSON document, keys in file order; a parse error names the file and byte, and says
// when the text simply ends early.
inline nlohmann::ordered_json parse_json_document(std::string_view text, const std::string& file) {
  try {
    return nlohmann::ordered_json::parse(text.begin(), text.end());
  } catch (const nlohmann::ordered_json::parse_error& e) {
    std::string msg = json_error_message(e);
    if (e.byte >= text.size()) msg += " (the file is truncated)";
    throw input_error(file, fmt::format("byte {}", e.byte), msg);
  } catch (const nlohmann::ordered_json::exception& e) {
    // Not a syntax error but a value the parser refuses (a number overflowing a double, say):
    // nlohmann gives no offset, its message names the text.
    throw input_error(file, "", json_error_message(e));
  }
}

}  // namespace gpuforecast::detail::data
