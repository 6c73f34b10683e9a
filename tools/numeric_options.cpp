#include "numeric_options.hpp"

#include <charconv>
#include <cmath>
#include <string>

namespace gpuforecast::cli {

namespace {

std::string check_whole(const std::string& text, bool allow_negative) {
  if (text.empty()) return "expected a whole number";
  if (!allow_negative && text.front() == '-') return "must not be negative, got " + text;
  long long signed_value = 0;
  unsigned long long value = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = allow_negative ? std::from_chars(text.data(), end, signed_value) : std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) return "out of range: " + text;
  if (ec != std::errc() || p != end) return "expected a whole number, got " + text;
  return {};
}

std::string shortest(double x) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(x);
}

std::string check_number(const std::string& text, double lo, double hi) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || p != end) return "expected a number, got " + text;
  if (!std::isfinite(value)) return "must be a finite number, got " + text;
  if (value < lo || value > hi) {
    if (std::isinf(hi)) return (lo == 0 ? "must not be negative, got " : "must be at least " + shortest(lo) + ", got ") + text;
    return "must be within [" + shortest(lo) + ", " + shortest(hi) + "], got " + text;
  }
  return {};
}

void add_checks(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if (type == "UINT") opt->check(CLI::Validator([](std::string& s) { return check_whole(s, false); }, "", "whole number >= 0"));
    else if (type == "INT") opt->check(CLI::Validator([](std::string& s) { return check_whole(s, true); }, "", "whole number"));
    else if (type == "FLOAT") opt->check(number_in(0, HUGE_VAL));
  }
  for (CLI::App* sub : app.get_subcommands({})) add_checks(*sub);
}

}  // namespace

CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator([lo, hi](std::string& s) { return check_number(s, lo, hi); }, "", "number");
}

void check_numeric_options(CLI::App& app) { add_checks(app); }

}  // namespace gpuforecast::cli
