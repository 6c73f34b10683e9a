#include "calibration/model_bundle.hpp"

#include <fmt/core.h>

#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/archive.hpp"

namespace gpuforecast {

namespace {
constexpr const char* calibration_section = "calibration";
}  // namespace

void remove_calibration_section(ModelFile& file) {
  std::erase_if(file.sections, [](const auto& s) { return s.first == calibration_section; });
}

void set_calibration_section(ModelFile& file, const SelectiveCalibrator& calibrator) {
  if (!calibrator.fitted()) throw invalid_argument_error("refusing to store a calibrator that was never fitted");
  ArchiveWriter w;
  w.u32(calibration_section_version);
  calibrator.save(w);
  file.set(calibration_section, w.data());
}

std::optional<SelectiveCalibrator> calibration_from(const ModelFile& file, const std::string& origin) {
  const std::string* payload = file.find(calibration_section);
  if (!payload) return std::nullopt;
  ArchiveReader r(*payload, origin + " [calibration section]");
  const auto version = r.u32();
  if (version > calibration_section_version)
    throw model_file_error(origin, fmt::format("calibration section version {} is newer than this gpuforecast "
                                               "understands ({}): upgrade gpuforecast",
                                               version, calibration_section_version));
  auto c = SelectiveCalibrator::load(r, version);
  if (!r.at_end()) r.fail("trailing bytes after the calibration");
  return c;
}

void save_model_bundle(const std::string& path, const AnySurrogate& surrogate, const SelectiveCalibrator& calibrator,
                       const TrainingSummary& summary) {
  ModelFile f;
  set_surrogate_section(f, surrogate);
  set_training_section(f, summary);
  set_calibration_section(f, calibrator);
  write_model_file(path, f);
}

}  // namespace gpuforecast
