#pragma once
// Cross-device calibration through model files, as `gpuforecast calibrate --rehearse` and
// `calibrate --cross-device` do it. Rehearsing is the expensive part (one refit of the model
// per GPU of its training data), and it does not depend on the new GPU, K or the seed, so it is
// made once and kept in the model file's "rehearsal" section: for each kernel and GPU of the
// training data, the forecasts of a model refitted without that GPU and the measured runtimes.
// Adapting to a new GPU then reads it back and costs a fraction of a second. Rehearsing also fits
// one model per GPU (view_models.hpp, the "views" section), and each stored GPU keeps its views:
// its configurations as forecast by the other GPUs' models of its vendor and kernel.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibration/cross_device_calibration.hpp"
#include "calibration/calibrate_model_file.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "internal_api.hpp"

namespace gpuforecast GPUFORECAST_INTERNAL_API {

// 2 added each space's views.
inline constexpr std::uint32_t rehearsal_section_version = 2;

struct RehearsalSpace {
  std::string kernel, device, vendor;
  RehearsalDevice data;  // candidates carry the kernel and the device's name only; views and forecasts both
  std::vector<std::string> view_devices;  // the GPUs whose models made data.views, in their order
};

struct StoredRehearsal {
  std::string surrogate;  // the kind refitted (make_surrogate's name)
  std::uint64_t seed = 0;
  std::vector<RehearsalSpace> spaces;
};

void set_rehearsal_section(ModelFile& file, const StoredRehearsal& rehearsal);
// nullopt without the section; model_file_error when it is damaged or of a newer version.
[[nodiscard]] std::optional<StoredRehearsal> rehearsal_from(const ModelFile& file, const std::string& origin);

struct RehearsalFitOptions {
  std::string surrogate;  // empty: the model file's own kind, with the registry's defaults
  std::uint64_t seed = 1;
  // Each space keeps at most this many configurations (a seeded sample): risk curves need a
  // few hundred, and the model file stays small.
  std::size_t max_configurations = 2000;
};

// Refits the surrogate once per GPU of data_files, leaving that GPU out, forecasts the GPU's
// spaces with it, fits the view models and the spaces' views, and writes the model to out_path
// with the "rehearsal" and "views" sections. Throws
// invalid_argument_error when the files hold fewer than two GPUs, model_file_error for a bad
// model file, and the readers' errors for bad measurement files.
StoredRehearsal rehearse_model_file(const std::string& model_path, std::span<const std::string> data_files,
                                    const std::string& out_path, const RehearsalFitOptions& options = {},
                                    const std::function<void(const std::string&)>& progress = {});

// `calibrate --device-samples K --cross-device`: K random runs of the new GPU's file (seeded by
// options.calibration.seed) adapt under the rule rehearsed on the stored GPUs of the new GPU's
// vendor (every vendor when all_vendors), and the file's other runs judge it. With views stored
// and a view model of the new GPU's vendor and kernel, the rule is rehearsed on views and the new
// GPU's forecasts are stacked (its calibration's device scope names the views; Model stacks them).
struct ModelFileCrossDevice {
  ModelFileDeviceAdaptation adaptation;
  CrossDeviceRule rule;
  DeviceCheck check;
  std::vector<std::string> left_out;  // stored spaces not used: the new GPU's own, other vendors, no views
  std::vector<std::string> view_devices;  // empty: single forecasts
  std::optional<ViewStacking> stacking;
};
// Throws invalid_argument_error when the model has no rehearsal section or the file holds more
// than one device or too few runs.
// `use_views` false: single forecasts even where views are stored.
ModelFileCrossDevice adapt_model_file_across_devices(const std::string& model_path, const std::string& data_file,
                                                     const std::string& out_path, const CrossDeviceOptions& options,
                                                     bool all_vendors = false, bool use_views = true);

}  // namespace gpuforecast
