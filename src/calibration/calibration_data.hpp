#pragma once
// What every calibration of a model file does with its measurement files: warn when they trained
// the surrogate (the guarantees assume measurements it has not seen), and draw the K runs of a
// new device in one seeded order, so that `--device-samples K --seed S` picks the same runs
// whichever way the device is then calibrated.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "calibration/calibrate_model_file.hpp"
#include "calibration/view_models.hpp"
#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/model_file.hpp"

namespace gpuforecast {

// Appends one sentence per file of `data_files` among the training summary's sources (compared
// as canonical paths).
void warn_if_trained_on(const TrainingSummary& trained, std::span<const std::string> data_files,
                        std::vector<std::string>& warnings);

// A seeded permutation of 0..n-1: its first K are the runs drawn.
[[nodiscard]] std::vector<std::size_t> device_sample_order(std::size_t n, std::uint64_t seed);

// One device's measurement file: the loaded data and its successful runs. Throws
// invalid_argument_error naming the file when it holds more than one space.
struct DeviceFile {
  Dataset data;
  TimedCandidates runs;
  [[nodiscard]] const std::shared_ptr<const Device>& device() const { return data.spaces().front().device; }
};
[[nodiscard]] DeviceFile load_device_file(const std::string& data_file);

// The runs at the first `samples` places of `order`, with their forecasts: one Forecast each, or
// one per view (ViewForecasts).
template <class F>
struct DrawnRuns {
  std::vector<Candidate> candidates;
  std::vector<F> forecasts;
  std::vector<double> times;
};
template <class F>
[[nodiscard]] DrawnRuns<F> drawn_runs(const TimedCandidates& runs, const std::vector<F>& forecasts,
                                      std::span<const std::size_t> order, std::size_t samples) {
  DrawnRuns<F> d;
  for (std::size_t k = 0; k < samples; ++k) {
    d.candidates.push_back(runs.candidates[order[k]]);
    d.forecasts.push_back(forecasts[order[k]]);
    d.times.push_back(runs.median_ms[order[k]]);
  }
  return d;
}

// Keeps in the calibrator's device scope the views its device is forecast from and their
// stacking, so that a Model forecasts the device through them.
void scope_to_views(SelectiveCalibrator& calibrator, std::span<const ViewModel* const> views, ViewStacking stacking);

// Decides the runs after the first `samples` of `order` with the calibrator and counts, in
// `out`, those judged, answered and wrong under its loss: what the user of a brute-forced file
// reads before trusting the rule.
void judge_held_out(const SelectiveCalibrator& calibrator, const TimedCandidates& runs,
                    std::span<const Forecast> forecasts, std::span<const std::size_t> order, std::size_t samples,
                    ModelFileDeviceAdaptation& out);

}  // namespace gpuforecast
