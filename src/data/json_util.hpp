#pragma once
// Internal helpers for messages about JSON input.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gpuforecast::data_detail {

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

}  // namespace gpuforecast::data_detail
