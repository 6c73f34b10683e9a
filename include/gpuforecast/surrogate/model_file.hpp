#pragma once
// One versioned model file (.gfm): magic "GFMODEL\0", format version, payload length, named
// sections, CRC-32 of everything before it. Sections written by this library:
//   "surrogate"  kind + the surrogate's own archive (hyper-parameters, vocabulary, weights)
//   "training"   summary of the training data (kernels, devices, counts, parameters)
// Other parts add theirs (calibration adds "calibration"; `calibrate --rehearse` adds "rehearsal",
// the forecasts of each training GPU by a model that never saw it, and "views", one model per
// training GPU: calibration/rehearsal_file.hpp, view_models.hpp); unknown sections are kept.
// Truncated, corrupted (checksum) and future-version files raise model_file_error that says which.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/core/parameter_schema.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

inline constexpr std::uint32_t model_file_format_version = 1;

struct ModelFile {
  std::vector<std::pair<std::string, std::string>> sections;  // name, payload; names unique

  [[nodiscard]] const std::string* find(std::string_view name) const noexcept;
  // Replaces a section of the same name or appends.
  void set(std::string name, std::string payload);
};

// Whole file in memory and back; `origin` names the file in errors.
[[nodiscard]] std::string encode_model_file(const ModelFile& file);
[[nodiscard]] ModelFile decode_model_file(std::string_view bytes, const std::string& origin);
// Writes atomically (temporary file, then rename). Throws model_file_error on I/O failure.
void write_model_file(const std::string& path, const ModelFile& file);
[[nodiscard]] ModelFile read_model_file(const std::string& path);

struct TrainingSummary {
  std::vector<std::string> kernels;  // sorted, unique
  std::vector<std::string> devices;
  std::vector<std::string> sources;  // files the observations came from
  std::uint64_t observations = 0;
  std::uint64_t ok = 0;
  std::uint64_t failed = 0;
  // Each kernel's parameters and the values seen: forecast() checks configurations against
  // them. Absent in files written before format 2 of this section (nothing is checked then).
  std::vector<KernelSchema> schemas;

  [[nodiscard]] static TrainingSummary of(std::span<const Observation> observations);
};

// Section helpers.
void set_surrogate_section(ModelFile& file, const AnySurrogate& surrogate);
[[nodiscard]] AnySurrogate surrogate_from(const ModelFile& file, const std::string& origin);
void set_training_section(ModelFile& file, const TrainingSummary& summary);
// Empty summary when the section is absent.
[[nodiscard]] TrainingSummary training_summary_from(const ModelFile& file, const std::string& origin);

// One call each way: surrogate + training summary.
void save_surrogate(const std::string& path, const AnySurrogate& surrogate, const TrainingSummary& summary = {});
[[nodiscard]] AnySurrogate load_surrogate(const std::string& path);

}  // namespace gpuforecast
