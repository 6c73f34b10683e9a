#include "data/screening_pairs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <cmath>
#include <sstream>
#include <string_view>

#include "file_io.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

constexpr std::string_view header = "forecast_ms,measured_ms,incumbent_ms";

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

double positive_number(std::string_view field, const std::string& path, std::size_t line, std::string_view name) {
  field = trimmed(field);
  double value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc{} || end != field.data() + field.size())
    throw input_error(path, fmt::format("line {}", line), fmt::format("{} \"{}\" is not a number", name, field));
  if (!std::isfinite(value) || value <= 0)
    throw input_error(path, fmt::format("line {}", line), fmt::format("{} {} is not a positive finite number", name, field));
  return value;
}

}  // namespace

std::vector<ScreeningPair> read_screening_pairs(const std::string& path) {
  const std::string text = detail::data::read_maybe_gzip(path);
  std::istringstream in(text);
  std::vector<ScreeningPair> pairs;
  bool seen_header = false;
  std::string raw;
  for (std::size_t line = 1; std::getline(in, raw); ++line) {
    const std::string_view s = trimmed(raw);
    if (s.empty() || s.front() == '#') continue;
    if (!seen_header) {
      if (s != header)
        throw input_error(path, fmt::format("line {}", line), fmt::format("expected the header \"{}\"", header));
      seen_header = true;
      continue;
    }
    std::vector<std::string_view> fields;
    std::size_t from = 0;
    for (std::size_t comma; (comma = s.find(',', from)) != std::string_view::npos; from = comma + 1)
      fields.push_back(s.substr(from, comma - from));
    fields.push_back(s.substr(from));
    if (fields.size() != 3)
      throw input_error(path, fmt::format("line {}", line), fmt::format("expected 3 fields, found {}", fields.size()));
    pairs.push_back({positive_number(fields[0], path, line, "forecast_ms"),
                     positive_number(fields[1], path, line, "measured_ms"),
                     positive_number(fields[2], path, line, "incumbent_ms")});
  }
  if (pairs.empty()) throw input_error(path, "end", "no screening pairs");
  return pairs;
}

std::vector<std::vector<ScreeningPair>> read_screening_rehearsal(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(path)) return {read_screening_pairs(path)};
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && (name.ends_with(".csv") || name.ends_with(".csv.gz")))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw input_error(path, "folder", "no .csv or .csv.gz file of screening pairs in it");
  std::vector<std::vector<ScreeningPair>> groups;
  for (const auto& f : files) groups.push_back(read_screening_pairs(f));
  return groups;
}

void write_screening_pairs(std::span<const ScreeningPair> pairs, const std::string& path) {
  std::string text = "# gpuforecast screening rehearsal: forecast at proposal, stored time, incumbent then\n";
  text += header;
  text += '\n';
  for (const auto& p : pairs) text += fmt::format("{},{},{}\n", p.forecast_ms, p.measured_ms, p.incumbent_ms);
  detail::data::write_text(path, text);
}

}  // namespace gpuforecast
