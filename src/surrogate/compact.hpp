#pragma once
// The compact forecaster: a bag of boosted-tree models kept as flat float32 arrays. Forecasting
// and loading need neither XGBoost nor libtorch: a forecast is a few hundred branch-free tree
// walks per member, the file a few megabytes. Training uses XGBoost (when this build has it) and,
// optionally, a teacher: any surrogate by name, fitted on the observations and asked about
// synthetic candidates (observed configurations with some parameters swapped for values seen
// elsewhere), whose forecasts become extra training rows. The members' mean is the forecast,
// their disagreement the spread; the interval comes from a seeded held-out fifth; p_fail from a
// boosted classifier when training holds failures.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/options_table.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/core/archive.hpp"
#include "surrogate/feature_encoder.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct CompactOptions {
  std::size_t members = 3;  // boosted models, each with its own seed
  int rounds = 500;         // trees per member
  double eta = 0.05;
  int max_depth = 7;
  double min_child_weight = 1.0;
  double subsample = 0.8;
  double colsample_bytree = 0.9;
  double lambda = 1.0;
  int failure_rounds = 100;
  double holdout_fraction = 0.2;  // for the interval; 0: quantiles of training residuals
  // Weight of the fastest observations of each (kernel, problem, device) group: a row whose
  // runtime ranks at fraction u of its group (0: fastest) weighs 1 + fast_weight * exp(-u / fast_scale).
  // A search wants the fast end ranked right; the slow end only needs to stay out of the way
  // (measured: top-1% recall +0.006 to +0.009 at 2-10% of a space and on unseen devices at K = 0).
  // Groups with fewer than fast_min_group observations keep weight 1: 20 points of a new device,
  // weighted so, pulled the trees toward their fastest one (top-1% recall 0.57 instead of 0.68).
  double fast_weight = 2;
  double fast_scale = 0.1;
  std::size_t fast_min_group = 200;
  // Rows of small groups (a new device's first points) weigh (largest group / their group)^group_balance,
  // at most max_group_weight. Off: measured at 0.5 it helped K = 100 target points (top-1% recall
  // +0.004) and hurt K = 20 (-0.027).
  double group_balance = 0;
  double max_group_weight = 20;
  // Distillation: "" trains on the observations alone.
  std::string teacher;
  double synthetic_per_observation = 4;  // synthetic candidates the teacher labels, per observation
  std::size_t max_synthetic = 20000;
  double swap_probability = 0.3;  // chance that a synthetic candidate takes another value of a parameter
  // Keep the encoded training rows (compressed) in the model so that update() after a load
  // knows everything the first fit knew. Off: update() on a loaded model learns only the new rows.
  bool keep_training_rows = true;
  // Forecast from what means the same for every kernel: the static features (docs/features.md:
  // registers, spills, shared memory, occupancy, instruction mix, launch geometry), the problem
  // size and the device's numbers; neither the kernel's own parameters nor its identity. Trained
  // on several kernels, it forecasts one never measured. Off: the parameters are inputs too.
  bool kernel_independent = false;
  // With kernel_independent: a thinly measured kernel (below correction_below) gets a correction
  // of its own, boosted trees on its parameters fitted to what the kernel-independent forecast
  // got wrong on its observations; how much of that forecast to keep is chosen by cross-validation
  // on those observations, against a forecast that never saw the kernel (docs/surrogates.md).
  // Off: a kernel's forecast is the kernel-independent one whatever was measured of it.
  bool kernel_correction = true;
  // Kernels with fewer successful observations than this are corrected; the others are what the
  // corrections' prior weights are judged by. When every kernel is below it, none is corrected.
  std::size_t correction_below = 500;
  // Which static features (docs/features.md) are inputs when the observations carry them: "all",
  // "resources" (registers, spills, shared, local and constant memory, barriers, launch geometry,
  // occupancy; not the PTX instruction mix) or "none".
  std::string static_features = "all";
  // Share of the members that see the static features (the first ones, rounded up); the others
  // see the parameters alone, so the bag averages two views of a configuration. Chosen on
  // convolution_milo and dedispersion_milo, tested on the other kernels (docs/surrogates.md): all
  // members seeing them lost 0.02-0.12 Spearman on the first two; one in three lost nothing there
  // and led XGBoost on 12 of 12 spaces of the others. A kernel-independent model ignores it.
  double static_feature_share = 0.33;
  std::uint64_t seed = 0;
  FeatureEncoderOptions encoder;
};

// Names, ranges and descriptions of CompactOptions (the encoder's aside): what
// make_surrogate("compact(members=1,teacher=ensemble(xgboost,gp))") parses.
[[nodiscard]] const OptionsTable<CompactOptions>& compact_options_table();

class CompactSurrogate {
 public:
  explicit CompactSurrogate(CompactOptions options = {});

  void fit(std::span<const Observation> observations);
  void update(std::span<const Observation> observations);  // refits with every row seen so far
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> candidates) const;  // thread-safe, lock-free
  [[nodiscard]] std::string kind() const { return "compact"; }
  void save(ArchiveWriter& w) const;
  static CompactSurrogate load(ArchiveReader& r);

  [[nodiscard]] bool fitted() const noexcept { return m_state != nullptr; }
  [[nodiscard]] const CompactOptions& options() const noexcept { return m_options; }
  // Bytes of the flat trees (every member and the failure classifier).
  [[nodiscard]] std::size_t tree_bytes() const;

  struct State;

 private:
  CompactOptions m_options;
  std::shared_ptr<const State> m_state;
};

static_assert(Surrogate<CompactSurrogate>);
static_assert(PersistentSurrogate<CompactSurrogate>);

}  // namespace gpuforecast
