#pragma once
// Calibrating a trained model file, as `gpuforecast calibrate` and Python's
// gpuforecast.calibrate() both do: the successful runs of held-out measurement files, the
// surrogate's forecasts of them, a SelectiveCalibrator fitted on the two, and the model written
// again with that calibrator as its "calibration" section.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "calibration/device_adaptation.hpp"
#include "calibration/selective_calibrator.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct ModelFileCalibration {
  std::string surrogate_kind;
  std::size_t measurements = 0;  // successful runs the calibrator was fitted on
  std::size_t files = 0;         // measurement files they were read from
  SelectiveCalibrator calibrator;
  // Sentences for the caller to show as warnings (the library prints nothing): a calibration
  // file the surrogate was also trained on, because the guarantees assume unseen data.
  std::vector<std::string> warnings;
};

// Reads model_path, calibrates on data_files and writes the result to out_path (which may equal
// model_path). Throws model_file_error for a missing or damaged model file, the readers' errors
// for bad measurement files, and invalid_argument_error when the files hold no successful run or
// an option is out of range; nothing is written then.
ModelFileCalibration calibrate_model_file(const std::string& model_path, std::span<const std::string> data_files,
                                          const std::string& out_path, const CalibrationOptions& options = {});

// A new device after K measurements (`gpuforecast calibrate --device-samples K`): K successful
// runs drawn at random (options.calibration.seed) from one device's measurement file adapt and
// certify a calibration for that device (adapt_to_device); the model is written with it. The
// file's other successful runs took no part, so they judge it: the share answered without
// measuring and the realised risk among the answered, what the user of a brute-forced file can
// check before trusting the rule on a device they only have K measurements of.
struct ModelFileDeviceAdaptation {
  ModelFileCalibration calibration;
  std::string device;
  std::size_t held_out = 0;  // the file's other successful runs
  std::size_t answered = 0;  // of them, answered without measuring
  std::size_t losses = 0;    // of the answered, wrong under the calibration's loss
};
// When the model file holds views (calibrate --rehearse) of the device's kernel on other GPUs of
// its vendor, the K runs stack them (adapt_to_device with views) and the calibration's device
// scope keeps the stacking, so the model forecasts the device through it; `use_views` false
// corrects the model's single forecasts instead.
// Throws as calibrate_model_file, and invalid_argument_error when the file holds more than one
// device or fewer than K successful runs.
ModelFileDeviceAdaptation adapt_model_file(const std::string& model_path, const std::string& data_file,
                                           const std::string& out_path, std::size_t samples,
                                           const DeviceAdaptationOptions& options = {}, bool use_views = true);

}  // namespace gpuforecast
