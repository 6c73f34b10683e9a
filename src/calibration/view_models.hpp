#pragma once
// Where the views of cross-device calibration (view_stacking.hpp) come from: one model per
// training GPU, each fitted on that GPU's measurements alone. A model fitted on several GPUs
// together and asked to forecast as one of them blends them again: on the 24 shared spaces, left
// out one GPU at a time (benchmarks/new_device_trust), its views answered about half as much at
// a higher risk. `gpuforecast calibrate --rehearse` fits them once and keeps them in the model
// file's "views" section; a GPU's views are the models of the other GPUs of its vendor that
// measured its kernel, so a rehearsal GPU's views never saw it, as a new GPU's never saw it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "internal_api.hpp"

namespace gpuforecast GPUFORECAST_INTERNAL_API {

inline constexpr std::uint32_t views_section_version = 1;

struct ViewModel {
  std::string device, vendor;        // Device::name and vendor
  std::vector<std::string> kernels;  // measured on it, sorted
  AnySurrogate model;
};

struct ViewModels {
  std::string surrogate;  // the kind fitted (make_surrogate's name)
  std::uint64_t seed = 0;
  std::vector<ViewModel> models;  // sorted by device

  // The views of a GPU of `vendor` running `kernel`: the models of that vendor that measured the
  // kernel, `except` (the GPU's own, when it is a training GPU) left out, in the models' order.
  [[nodiscard]] std::vector<const ViewModel*> of(const std::string& kernel, const std::string& vendor,
                                                 const std::string& except = {}) const;
  // The views of a measured space's GPU: its vendor's other models that measured its kernel.
  // Throws invalid_argument_error naming the space's file when there is none.
  [[nodiscard]] std::vector<const ViewModel*> of_space(const SpaceData& space) const;
  // The model of a device by name; nullptr when there is none.
  [[nodiscard]] const ViewModel* find(const std::string& device) const;
};

// The device a view forecasts as: the registry's device of that name, or an unknown device of it.
[[nodiscard]] std::shared_ptr<const Device> view_device(const std::string& name);

// One model of `surrogate` per GPU of `data`, on that GPU's successful runs. Throws
// invalid_argument_error for an unknown surrogate kind.
[[nodiscard]] ViewModels fit_view_models(const Dataset& data, const std::string& surrogate, std::uint64_t seed,
                                         const std::function<void(const std::string&)>& progress = {});

// Each candidate forecast by every view, as running on that view's GPU: result[i][v].
[[nodiscard]] std::vector<ViewForecasts> forecast_views(std::span<const ViewModel* const> views,
                                                        std::span<const Candidate> candidates);

void set_views_section(ModelFile& file, const ViewModels& views);
// nullopt without the section; model_file_error when it is damaged or of a newer version.
[[nodiscard]] std::optional<ViewModels> views_from(const ModelFile& file, const std::string& origin);

}  // namespace gpuforecast
