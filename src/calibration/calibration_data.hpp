#pragma once
// What every calibration of a model file does with its measurement files: warn when they trained
// the surrogate (the guarantees assume measurements it has not seen), and draw the K runs of a
// new device in one seeded order, so that `--device-samples K --seed S` picks the same runs
// whichever way the device is then calibrated.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/surrogate/model_file.hpp"

namespace gpuforecast {

// Appends one sentence per file of `data_files` among the training summary's sources (compared
// as canonical paths).
void warn_if_trained_on(const TrainingSummary& trained, std::span<const std::string> data_files,
                        std::vector<std::string>& warnings);

// A seeded permutation of 0..n-1: its first K are the runs drawn.
[[nodiscard]] std::vector<std::size_t> device_sample_order(std::size_t n, std::uint64_t seed);

}  // namespace gpuforecast
