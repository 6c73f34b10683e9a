#pragma once
// The model bundle: surrogate + calibrator + metadata in one model file. The calibrator lives
// in the file's "calibration" section next to the surrogate's own sections.
#include <optional>
#include <string>

#include "calibration/selective_calibrator.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

inline constexpr std::uint32_t calibration_section_version = calibrator_archive_version;

void set_calibration_section(ModelFile& file, const SelectiveCalibrator& calibrator);
// Leaves the file uncalibrated (when what it forecasts changes).
void remove_calibration_section(ModelFile& file);
// nullopt when the file has no "calibration" section; model_file_error when it is damaged or
// from a newer version.
[[nodiscard]] std::optional<SelectiveCalibrator> calibration_from(const ModelFile& file, const std::string& origin);

// Writes surrogate, training summary and calibrator to one file.
void save_model_bundle(const std::string& path, const AnySurrogate& surrogate, const SelectiveCalibrator& calibrator,
                       const TrainingSummary& summary = {});

}  // namespace gpuforecast
