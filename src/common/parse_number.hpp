#pragma once
// A number given on a command line, parsed whole: "12abc", "-1" for a count, or "1e999" are
// errors that name the option and the text, never a silently truncated or wrapped value.
#include <fmt/core.h>

#include <charconv>
#include <string_view>
#include <system_error>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::detail {

template <class T>
[[nodiscard]] T parse_number(std::string_view option, std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range)
    throw invalid_argument_error(fmt::format("{} {}: out of range", option, text));
  if (ec != std::errc() || ptr != end || text.empty())
    throw invalid_argument_error(fmt::format("{} {}: not a valid number", option, text));
  return value;
}

// Parses into `out`, a number of its own type.
template <class T>
void parse_number_into(T& out, std::string_view option, std::string_view text) {
  out = parse_number<T>(option, text);
}

}  // namespace gpuforecast::detail
