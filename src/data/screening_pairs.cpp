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
// With the model's forecast of the incumbent (recorded with screen_reference=incumbent_forecast).
constexpr std::string_view header_with_forecast = "forecast_ms,measured_ms,incumbent_ms,incumbent_forecast_ms";

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
  std::size_t columns = 0;  // 0 until the header is read
  std::string raw;
  for (std::size_t line = 1; std::getline(in, raw); ++line) {
    const std::string_view s = trimmed(raw);
    if (s.empty() || s.front() == '#') continue;
    if (columns == 0) {
      if (s != header && s != header_with_forecast)
        throw input_error(path, fmt::format("line {}", line),
                          fmt::format("expected the header \"{}\" or \"{}\"", header, header_with_forecast));
      columns = s == header ? 3 : 4;
      continue;
    }
    std::vector<std::string_view> fields;
    std::size_t from = 0;
    for (std::size_t comma; (comma = s.find(',', from)) != std::string_view::npos; from = comma + 1)
      fields.push_back(s.substr(from, comma - from));
    fields.push_back(s.substr(from));
    if (fields.size() != columns)
      throw input_error(path, fmt::format("line {}", line),
                        fmt::format("expected {} fields, found {}", columns, fields.size()));
    pairs.push_back({positive_number(fields[0], path, line, "forecast_ms"),
                     positive_number(fields[1], path, line, "measured_ms"),
                     positive_number(fields[2], path, line, "incumbent_ms"),
                     columns == 4 ? positive_number(fields[3], path, line, "incumbent_forecast_ms") : 0.0});
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
  // The incumbent's forecasts are kept when every pair has one (recorded against them).
  const bool with_forecast = !pairs.empty() && std::all_of(pairs.begin(), pairs.end(), [](const ScreeningPair& p) {
    return std::isfinite(p.incumbent_forecast_ms) && p.incumbent_forecast_ms > 0;
  });
  std::string text = "# gpuforecast screening rehearsal: forecast at proposal, stored time, incumbent then";
  text += with_forecast ? ", the model's forecast of it\n" : "\n";
  text += with_forecast ? header_with_forecast : header;
  text += '\n';
  for (const auto& p : pairs)
    text += with_forecast ? fmt::format("{},{},{},{}\n", p.forecast_ms, p.measured_ms, p.incumbent_ms, p.incumbent_forecast_ms)
                          : fmt::format("{},{},{}\n", p.forecast_ms, p.measured_ms, p.incumbent_ms);
  detail::data::write_text(path, text);
}

}  // namespace gpuforecast
