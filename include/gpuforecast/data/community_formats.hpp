#pragma once
// The community's two formats. T1, the input: the tuning space (parameters, Conditions) and
// the kernel specification (file, launch geometry, problem size, arguments).
// T4, the results format: `results[]` with configuration, times.{compilation,
// runtimes, framework, search_algorithm, validation}, invalidity, measurements.
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/kernel_spec.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct T1File {
  std::string path;
  TuningSpace space;  // with the Conditions as constraints
  KernelSpec kernel;  // source loaded from KernelFile when the file exists beside the spec
};

// Throws input_error (file, JSON path) on malformed input and expression_error-derived
// input_error for bad conditions (naming the condition index and column).
[[nodiscard]] T1File read_t1(const std::string& path);
void write_t1(const T1File& file, const std::string& path);

struct T4Result {
  Config config;
  Measurement measurement;  // invalidity "correct" -> ok; "compile"/"runtime"/"constraints" -> failed
  std::string invalidity;   // as written
  std::string timestamp;
  double framework_ms = 0;
  double search_algorithm_ms = 0;
  double validation_ms = 0;
  std::vector<std::pair<std::string, double>> measurements;  // name, value
  // Measurements whose value is text, e.g. {"name": "time", "value": "RuntimeFailedConfig"}.
  std::vector<std::pair<std::string, std::string>> text_measurements;
  std::vector<std::string> objectives;  // e.g. {"time"}
};

struct T4File {
  std::string path;
  std::string schema_version = "1.0.0";
  std::string time_unit = "milliseconds";
  std::vector<T4Result> results;
};

[[nodiscard]] T4File read_t4(const std::string& path);            // .json or .json.gz
// The same from bytes in memory (gzip or plain JSON); `name` stands for the file in messages.
[[nodiscard]] T4File parse_t4(std::string_view bytes, const std::string& name);
void write_t4(const T4File& file, const std::string& path);      // gzip when path ends in .gz

}  // namespace gpuforecast
