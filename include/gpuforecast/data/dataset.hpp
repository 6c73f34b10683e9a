#pragma once
// Many measurement files as one collection of Observations, with seeded splits.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// One file's worth of observations: one kernel on one device.
struct SpaceData {
  std::string path;
  std::string kernel;  // Candidate::kernel of every observation
  std::string kernel_name;
  std::shared_ptr<const Device> device;
  std::vector<std::int64_t> problem_size;
  TuningSpace space;   // parameters (+ constraints when a T1 file was attached)
  std::vector<Observation> observations;  // every entry, failed ones included, file order
  // What reading the file warned about (also passed to gpuforecast::warn), e.g. a device not in
  // the device table, which is then a Device::unknown() with no numbers.
  std::vector<std::string> warnings;

  [[nodiscard]] std::size_t valid_count() const;
  // Fastest median among ok observations; throws if none.
  [[nodiscard]] double best_ms() const;
};

class Dataset {
 public:
  Dataset() = default;
  // Reads Kernel Tuner cache files (.json/.json.gz) and T4 files (detected by content).
  // Device from the file's device_name, or the file stem when that is empty (MI250X.json.gz);
  // a device not in the registry loads as Device::unknown(name), with a warning for the file.
  static Dataset load(std::span<const std::string> paths);
  void add(SpaceData space);

  [[nodiscard]] const std::vector<SpaceData>& spaces() const noexcept { return m_spaces; }
  // For what joins more to the observations (static features); the spaces are never removed.
  [[nodiscard]] std::vector<SpaceData>& spaces() noexcept { return m_spaces; }
  [[nodiscard]] std::size_t size() const noexcept;  // observations over all spaces
  // All observations of all spaces (copies), optionally only status ok.
  [[nodiscard]] std::vector<Observation> observations(bool ok_only = false) const;

  struct Split {
    std::vector<Observation> train;
    std::vector<Observation> test;
  };
  // Random fraction of every space's observations into train (stratified per space), seeded.
  [[nodiscard]] Split split_random(double train_fraction, std::uint64_t seed, bool ok_only = true) const;
  // Everything whose key (device name / kernel / any function) equals `held_out` goes to test.
  [[nodiscard]] Split split_by_device(const std::string& held_out_device, bool ok_only = true) const;
  [[nodiscard]] Split split_by_kernel(const std::string& held_out_kernel, bool ok_only = true) const;
  [[nodiscard]] Split split_by_group(const std::function<std::string(const Observation&)>& group,
                                     const std::string& held_out, bool ok_only = true) const;

 private:
  std::vector<SpaceData> m_spaces;
};

// Reads one file into a SpaceData (cache file or T4, by content).
[[nodiscard]] SpaceData load_space(const std::string& path);

}  // namespace gpuforecast
