#pragma once
// Shared machinery of the tabular baselines (ridge, knn, xgboost): encoded training rows,
// per-(kernel, problem, device) normalisation of log-runtime, and turning a learner's output in
// normalised log space into Forecasts. Not installed.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/core/archive.hpp"
#include "surrogate/feature_encoder.hpp"

namespace gpuforecast::detail {

// "kernel|p0xp1|device": runtimes are comparable inside a group; offsets are learned per group.
[[nodiscard]] std::string group_key(const Candidate& c);
// "kernel|p0xp1": the fallback for a device never seen with this kernel.
[[nodiscard]] std::string kernel_key(const Candidate& c);

struct TrainingRows {
  std::size_t dim = 0;
  std::vector<double> x;            // row-major rows() x dim
  std::vector<double> log_ms;       // natural log of the median; NaN when the candidate failed
  std::vector<std::uint32_t> group; // index into group_keys
  std::vector<std::string> group_keys;
  std::vector<std::string> group_kernel_keys;

  [[nodiscard]] std::size_t rows() const noexcept { return log_ms.size(); }
  [[nodiscard]] bool ok(std::size_t i) const noexcept { return log_ms[i] == log_ms[i]; }
  [[nodiscard]] std::size_t ok_count() const noexcept;
  void append(const FeatureEncoder& encoder, std::span<const Observation> observations);
  void save(ArchiveWriter& w) const;
  static TrainingRows load(ArchiveReader& r);
};

// Log-runtime offset per group (mean of its ok rows); unseen groups fall back to the mean offset
// of the same kernel on other devices, then to the global mean.
class GroupNormaliser {
 public:
  void fit(const TrainingRows& rows);
  [[nodiscard]] double offset(const Candidate& c) const;
  [[nodiscard]] double row_offset(const TrainingRows& rows, std::size_t i) const { return m_group_offset[rows.group[i]]; }
  // Normalised targets of the rows (NaN stays NaN).
  [[nodiscard]] std::vector<double> targets(const TrainingRows& rows) const;
  void save(ArchiveWriter& w) const;
  static GroupNormaliser load(ArchiveReader& r, const TrainingRows& rows);
  // The offsets themselves, for a model that loads without decoding its training rows: enough
  // for offset(), not for targets() (fit() on the rows restores that).
  void save_offsets(ArchiveWriter& w) const;
  static GroupNormaliser load_offsets(ArchiveReader& r);

 private:
  std::vector<double> m_group_offset;
  std::unordered_map<std::string, double> m_by_group, m_by_kernel;
  double m_global = 0;
};

// A learner's answer for one row, in normalised natural-log space.
struct RowPrediction {
  double mean = 0;
  double lower = 0;  // 5% quantile
  double upper = 0;  // 95% quantile
  double p_fail = 0;
};

// Adds each candidate's group offset and exponentiates.
[[nodiscard]] std::vector<Forecast> to_forecasts(std::span<const Candidate> candidates, const GroupNormaliser& norm,
                                                 std::span<const RowPrediction> rows);

// Rows idx of a row-major matrix x with `cols` columns, in idx's order.
template <class T>
[[nodiscard]] std::vector<T> rows_at(std::span<const T> x, std::size_t cols, std::span<const std::size_t> idx) {
  std::vector<T> out;
  out.reserve(idx.size() * cols);
  for (const auto i : idx) out.insert(out.end(), x.begin() + i * cols, x.begin() + (i + 1) * cols);
  return out;
}

// Empirical q-quantile (linear interpolation) of a copy of v.
[[nodiscard]] double quantile(std::vector<double> v, double q);

// Column standardisation learned on some rows, applied to any matrix with the same columns.
struct Standardiser {
  std::vector<std::size_t> columns;  // which encoder columns are used
  std::vector<double> mean, scale;   // scale 0: constant column, encoded as 0
  void fit(const TrainingRows& rows, std::vector<std::size_t> cols);
  // rows x columns.size() row-major
  [[nodiscard]] std::vector<double> apply(const double* x, std::size_t rows, std::size_t dim) const;
  void save(ArchiveWriter& w) const;
  static Standardiser load(ArchiveReader& r);
};

// Laplace-smoothed failure rate of the rows: the p_fail of a model that has no classifier.
[[nodiscard]] double base_failure_rate(const TrainingRows& rows);
// 1 for each failed row, 0 for each successful one: a failure classifier's target. Empty when the
// rows hold fewer than three of either, too few to learn from (p_fail stays base_failure_rate).
[[nodiscard]] std::vector<float> failure_labels(const TrainingRows& rows);

// Names an ArchiveReader failure after the surrogate that was loading.
// Returns the stored version (<= version; newer ones are refused).
std::uint32_t expect_tag(ArchiveReader& r, const char* tag, std::uint32_t version);
void write_tag(ArchiveWriter& w, const char* tag, std::uint32_t version);

}  // namespace gpuforecast::detail

namespace gpuforecast::detail {

// What every tabular surrogate keeps: the vocabulary, the training rows (so update() can refit
// after a load) and the group offsets.
struct TabularBase {
  FeatureEncoder encoder;
  TrainingRows rows;
  GroupNormaliser norm;
};
// Fits the encoder on `observations`, encodes them, learns the offsets. Throws
// invalid_argument_error naming `who` when there is nothing to learn from.
[[nodiscard]] TabularBase make_base(std::span<const Observation> observations, const FeatureEncoderOptions& options,
                                    const char* who);
// Same vocabulary, more rows: what update() refits on.
[[nodiscard]] TabularBase extend_base(const TabularBase& base, std::span<const Observation> observations);
void save_base(ArchiveWriter& w, const TabularBase& base);
[[nodiscard]] TabularBase load_base(ArchiveReader& r);
// Indices of ok rows.
[[nodiscard]] std::vector<std::size_t> ok_rows(const TrainingRows& rows);

// fit() and update() of every tabular surrogate: these models train in seconds, so update()
// refits on everything seen so far (same vocabulary, more rows) rather than adjusting weights.
// `train(State&, options)` fits the model part of a State whose `base` is set.
template <class State, class Options, class Train>
[[nodiscard]] std::shared_ptr<const State> fit_tabular(std::span<const Observation> observations,
                                                       const Options& options, const char* who, Train train) {
  auto s = std::make_shared<State>();
  s->base = make_base(observations, options.encoder, who);
  train(*s, options);
  return s;
}
template <class State, class Options, class Train>
[[nodiscard]] std::shared_ptr<const State> refit_tabular(const State& previous,
                                                         std::span<const Observation> observations,
                                                         const Options& options, Train train) {
  auto s = std::make_shared<State>();
  s->base = extend_base(previous.base, observations);
  train(*s, options);
  return s;
}

}  // namespace gpuforecast::detail
