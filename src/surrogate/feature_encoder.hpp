#pragma once
// Tabular encoding of a Candidate for the baseline surrogates: device numbers, log2 problem
// sizes, per-parameter log2(value), raw value and one-hot of small categorical sets, kernel
// identity and static features. The vocabulary (parameter names, categories, kernels, feature
// names) is fixed by fit(); what was not seen in training encodes as 0.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct FeatureEncoderOptions {
  // Parameters with at most this many distinct values in training also get one-hot columns;
  // string-valued parameters always do (they have no other encoding).
  std::size_t max_one_hot = 8;
};

// What a column means; learners pick the roles that suit them (trees need no log2 of what they
// already see raw, distances should not count a parameter three times).
enum class FeatureRole : std::uint8_t {
  device,
  problem,
  kernel,
  parameter_log,
  parameter_raw,
  parameter_one_hot,  // a numeric parameter's value as a category
  parameter_category, // a string parameter's value (its only encoding)
  feature,
};

class FeatureEncoder {
 public:
  explicit FeatureEncoder(FeatureEncoderOptions options = {});

  // Learns the vocabulary: union of parameter names over all kernels, categories, kernels,
  // problem-size rank and static feature names.
  void fit(std::span<const Observation> observations);
  void fit(std::span<const Candidate> candidates);

  [[nodiscard]] std::size_t dimension() const noexcept { return m_names.size(); }
  [[nodiscard]] const std::vector<std::string>& feature_names() const noexcept { return m_names; }
  [[nodiscard]] const std::vector<FeatureRole>& roles() const noexcept { return m_roles; }
  // Columns with the given roles, in column order.
  [[nodiscard]] std::vector<std::size_t> columns(std::initializer_list<FeatureRole> roles) const;

  // Row-major candidates.size() x dimension(). Thread-safe (no caches are shared).
  [[nodiscard]] std::vector<double> encode(std::span<const Candidate> candidates) const;
  [[nodiscard]] std::vector<double> encode(const Candidate& candidate) const;

  void save(ArchiveWriter& w) const;
  static FeatureEncoder load(ArchiveReader& r);

  // The device numbers used as features (log2 of sizes and rates, compute capability, vendor).
  [[nodiscard]] static std::vector<double> device_features(const Device* device);
  [[nodiscard]] static const std::vector<std::string>& device_feature_names();

 private:
  struct ParameterColumns {
    std::string name;
    std::int64_t log_column = -1;   // -1: none (string parameter)
    std::int64_t raw_column = -1;
    std::int64_t one_hot_first = -1;
    std::vector<Value> categories;  // one-hot order
  };
  void build(const std::vector<const Candidate*>& candidates);
  void encode_into(const Candidate& c, const std::vector<std::int64_t>& param_map, double* out) const;

  FeatureEncoderOptions m_options;
  std::vector<std::string> m_names;
  std::vector<FeatureRole> m_roles;
  std::size_t m_device_first = 0;
  std::size_t m_problem_first = 0, m_problem_rank = 0;
  std::size_t m_kernel_first = 0;
  std::vector<std::string> m_kernels;  // one-hot only when more than one kernel was seen
  std::vector<ParameterColumns> m_parameters;
  std::size_t m_feature_first = 0;
  std::vector<std::string> m_feature_names;
};

// Signed log2(1 + |v|): defined for 0 and negatives, monotone, ~log2 for large values.
[[nodiscard]] double signed_log2(double v) noexcept;

}  // namespace gpuforecast
