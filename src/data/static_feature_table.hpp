#pragma once
// What the compiler did with each configuration of one kernel for one architecture, stored as a
// CSV so that it is computed once (`gpuforecast features`, docs/surrogates.md) and read back by
// training, evaluation, search and Python without a CUDA toolkit.
//
//   # gpuforecast static features
//   # kernel: pnpoly
//   # architecture: sm_86
//   # compiler: NVRTC 13.0
//   # sample: 1000 of 4092 configurations, seed 1
//   # from: RTX_3060_laptop.json.gz RTX_3090.json.gz
//   block_size_x,tile_size,...,compiled,threads_per_block,...,registers,...,ptx_total,compile_error
//   256,4,...,1,256,...,40,...,812,
//
// An empty cell is a feature that does not exist for that row: a configuration that failed to
// compile has `compiled` = 0, its launch geometry, and the compiler's message in the last
// column (the one quoted cell of the format, CSV quoting with "" for a quote).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/device.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class StaticFeatureTable {
 public:
  struct Row {
    std::vector<std::string> values;  // one per parameter, as written (Value::to_string)
    bool compiled = false;
    std::vector<double> features;     // one per feature column; NaN where absent
    std::string error;                // the compiler's message when it did not compile
  };

  std::string kernel;        // benchmark name, e.g. "pnpoly"
  std::string architecture;  // NVRTC target, e.g. "sm_86"
  std::string compiler;      // e.g. "NVRTC 13.0"
  // The stated sample: `sample_size` configurations drawn with `sample_seed` out of
  // `population` (sample_size == population: all of them), from the data files `sources`.
  std::size_t sample_size = 0;
  std::size_t population = 0;
  std::uint64_t sample_seed = 0;
  std::vector<std::string> sources;
  std::vector<std::string> parameters;
  std::vector<std::string> feature_names;  // columns after `compiled`

  // Adds or replaces the row of `config` (its parameters must be this table's, in any order).
  void add(const Config& config, bool compiled, const Features& features, std::string error = {});
  [[nodiscard]] const Row* find(const Config& config) const;
  // A row read back: its configuration and its features (absent ones left out).
  [[nodiscard]] Config config_of(const Row& row) const;
  [[nodiscard]] Features features_of(const Row& row) const;
  // The same header (kernel, architecture, sample...) and no rows.
  [[nodiscard]] StaticFeatureTable empty_copy() const;
  [[nodiscard]] const std::vector<Row>& rows() const noexcept { return m_rows; }
  [[nodiscard]] std::size_t size() const noexcept { return m_rows.size(); }
  [[nodiscard]] std::size_t compiled_count() const noexcept;

 private:
  [[nodiscard]] std::string key_of(const Config& config) const;  // throws naming a missing parameter
  std::vector<Row> m_rows;
  std::unordered_map<std::string, std::size_t> m_index;
};

// Throws input_error naming the file and line for a malformed or truncated table. A journal (a
// table being appended to by a run that may have been interrupted) may end in a torn line:
// with `torn_tail_allowed` a last line without its newline is ignored (it is computed again).
[[nodiscard]] StaticFeatureTable read_static_feature_table(const std::string& path, bool torn_tail_allowed = false);
// Written to a temporary file and renamed (gzip when the name ends in .gz): a crash never
// leaves half a table.
void write_static_feature_table(const StaticFeatureTable& table, const std::string& path);
// The comment and header lines, and one row, as written (each line with its newline): what a
// run appends to its journal as results come.
[[nodiscard]] std::string static_feature_table_head(const StaticFeatureTable& table);
[[nodiscard]] std::string static_feature_table_line(const StaticFeatureTable& table, const StaticFeatureTable::Row& row);

// Occupancy of one block shape on one NVIDIA device, by the rules of CUDA's occupancy
// calculator (register allocation per warp in units of 256, shared memory in units of 128 bytes
// plus 1 KiB reserved per block from sm_80 on). Per-SM limits come from the device table and the
// compute capability; a block that cannot launch (too many threads, registers or shared memory)
// has blocks_per_sm = 0.
struct Occupancy {
  int blocks_per_sm = 0;
  double occupancy = 0;  // active warps / maximum warps per SM
  double waves = 0;      // grid blocks / (blocks_per_sm * SMs); 0 when the block cannot launch
};
[[nodiscard]] Occupancy compute_occupancy(const Device& device, double threads_per_block, double registers_per_thread,
                                          double shared_bytes_per_block, double grid_blocks);

// Copies each observation's row into its candidate.features, adding the device-dependent
// "blocks_per_sm", "occupancy" and "waves" (NVIDIA devices with a compute capability),
// "compile_failed" and "static_features_known" = 1. An observation without a row (a table of a
// seeded sample covers only part of a space) keeps its other features and gets
// "static_features_known" = 0: missing, never dropped. Returns how many found a row. Throws
// invalid_argument_error when the table's parameters are not the space's.
std::size_t attach_static_features(SpaceData& space, const StaticFeatureTable& table);
// The same for one candidate (a search's proposal): true when the table has its configuration.
bool describe_with_static_features(Candidate& candidate, const StaticFeatureTable& table);

// "sm_XY" for an NVIDIA device with a compute capability in the device table; empty otherwise.
[[nodiscard]] std::string nvidia_architecture(const Device& device);

// The table of `kernel` for the architecture of `device`; nullptr when there is none (an AMD
// device, a device without a compute capability, no table for that kernel or architecture).
[[nodiscard]] const StaticFeatureTable* find_static_feature_table(std::span<const StaticFeatureTable> tables,
                                                                  const std::string& kernel, const Device* device);

// Reads one table, or every *.csv / *.csv.gz table in a directory (sorted by name).
[[nodiscard]] std::vector<StaticFeatureTable> read_static_feature_tables(const std::string& path);

// What joining tables to a dataset found, per space.
struct StaticFeatureCoverage {
  std::string path;          // the space's file
  std::string architecture;  // of its device; empty for a device without a CUDA compute capability
  std::size_t observations = 0;
  std::size_t with_features = 0;
  std::string note;  // why a space has none (an AMD device, no table for the kernel and architecture)
};
// Joins to each space the table of its kernel and its device's architecture (when there is
// one). Spaces without a table are listed with the reason; no observation is removed.
std::vector<StaticFeatureCoverage> attach_static_features(std::vector<SpaceData>& spaces,
                                                          std::span<const StaticFeatureTable> tables);
// One line per space and a total, for a command's report.
[[nodiscard]] std::string describe(std::span<const StaticFeatureCoverage> coverage);

}  // namespace gpuforecast
