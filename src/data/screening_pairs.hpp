#pragma once
// A screening rehearsal on file: the pairs a search recorded on devices other than the one it
// will screen on (run.hpp, SeedRun::rehearsal), one per candidate its model forecast, whether
// measured or not: the forecast made when the candidate was proposed, the candidate's stored
// time, and the incumbent of that moment, with the model's forecast of that incumbent when the
// search recorded it (screen_reference=incumbent_forecast). Plain CSV:
//
//   forecast_ms,measured_ms,incumbent_ms[,incumbent_forecast_ms]
//   1.84,2.03,1.71[,1.77]
//
// Lines starting with '#' are comments. docs/calibration.md says how a search screens with it.
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/stats/screening.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Throws input_error naming the file and line for a missing header, a wrong number of fields, or
// a time that is not a finite positive number; and for a file without pairs.
[[nodiscard]] std::vector<ScreeningPair> read_screening_pairs(const std::string& path);
// A rehearsal: one group of pairs per device. `path` is a file (one group), or a folder whose .csv
// and .csv.gz files are a group each, read in name order (throws input_error for a folder without
// any).
[[nodiscard]] std::vector<std::vector<ScreeningPair>> read_screening_rehearsal(const std::string& path);
// Gzip-compressed when the path ends in ".gz"; written beside and renamed (never half a file).
// The incumbent's forecasts are written when every pair has one.
void write_screening_pairs(std::span<const ScreeningPair> pairs, const std::string& path);

}  // namespace gpuforecast
