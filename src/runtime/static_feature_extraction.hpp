#pragma once
// Computes the static features of many configurations of one kernel for one architecture
// (`gpuforecast features`, docs/features.md): each is compiled with NVRTC, its resource report
// and PTX read (static_features.hpp) and its launch geometry added. No GPU is needed.
//
// A run can be long (thousands of compiles), so it is made to be interrupted: each result is
// appended to a journal as it comes, and a run given a table that already holds some
// configurations compiles only the others.
#include <cstddef>
#include <functional>
#include <span>
#include <string>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/kernel_spec.hpp"
#include "data/static_feature_table.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct FeatureExtractionOptions {
  std::size_t jobs = 1;      // compiling threads
  // Rows are appended here as they finish (created with the table's head when missing); read
  // it back with read_static_feature_table(path, true). Empty: no journal.
  std::string journal_path;
  // Called after each configuration, from the compiling threads, one call at a time.
  std::function<void(std::size_t done, std::size_t total)> on_progress;
};

struct FeatureExtractionReport {
  std::size_t requested = 0;      // configurations asked for
  std::size_t already_known = 0;  // found in the table, not compiled again
  std::size_t compiled = 0;       // compiled now (or found in the compile cache)
  std::size_t failed = 0;         // of those, did not compile (recorded with the message)
  std::size_t nvrtc_compiles = 0; // compiles that reached NVRTC (the rest were cache hits)
  double seconds = 0;
  [[nodiscard]] double configurations_per_second() const noexcept {
    return seconds > 0 ? static_cast<double>(compiled) / seconds : 0.0;
  }
};

// The feature columns of a table made by this function, in order: the launch geometry
// (threads_per_block, grid_blocks, dynamic_shared_memory_bytes), then static_feature_names().
[[nodiscard]] const std::vector<std::string>& extracted_feature_names();

// Adds a row to `table` for every configuration of `configs` it does not hold yet, compiled
// for `target` ("sm_86"). `table.parameters` must be the configurations' parameters and
// `table.feature_names` extracted_feature_names() (an empty table is given both). A
// configuration that does not compile gets compiled = 0, its launch geometry and the compiler's
// message; one whose launch geometry cannot be evaluated is recorded the same way.
FeatureExtractionReport extract_static_features(NvrtcCompiler& compiler, const KernelSpec& spec,
                                                std::span<const Config> configs, const std::string& target,
                                                StaticFeatureTable& table, const FeatureExtractionOptions& options = {});

}  // namespace gpuforecast
