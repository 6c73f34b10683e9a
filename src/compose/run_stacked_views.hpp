#pragma once
// A pre-trained Model's per-GPU views (calibration/view_models.hpp), stacked by the search's own
// measurements as they land. One model fitted on several GPUs together forecasts a blend of them;
// the GPU a search runs on is mostly like one or two of them (a sibling card, the same
// architecture), and its first measurements say which: log t = b + sum_v w_v log t_hat_v, w_v >= 0
// (view_stacking.hpp), refitted on every measurement. The same stacking picks the sibling for
// calibrate --cross-device (docs/calibration.md); here it ranks the children of screened evolution
// and the candidates of any search that starts from a Model with views.
//
// The views of a run are those of its kernel's GPUs of the run's vendor other than the run's own
// GPU, as calibrate defines them: a rehearsal on a training GPU then stacks exactly what a search
// on a new GPU stacks, so a rule certified by the rehearsal meets the same forecaster.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibration/view_models.hpp"
#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/forecast.hpp"

namespace gpuforecast::detail::compose {

struct RunStackedViewsOptions {
  // Measurements before the stacking is trusted: the intercept and one weight per view are fitted
  // on them, and a run's first few are a random population, so a handful is enough.
  std::size_t min_measurements = 8;
};

class RunStackedViews {
 public:
  // `base` must hold views (Model::Impl::views); see has_views().
  explicit RunStackedViews(Model base, RunStackedViewsOptions options = {});

  [[nodiscard]] static bool has_views(const Model& m);

  // Stacked forecasts of `c`, or nullopt while there is no stacking to apply: too few measurements
  // yet, no view of the run's kernel and vendor, every weight 0 (no view follows this GPU), or
  // candidates of another kernel or GPU than the run's. Candidates one of whose weighted views has
  // no positive forecast are left as nullopt in the vector.
  [[nodiscard]] std::optional<std::vector<std::optional<Forecast>>> predict(std::span<const Candidate> c) const;
  // The same, from the views' forecasts of `c` taken before (view_forecasts): the views are
  // frozen, so a search keeps those of its measured points and only the stacking moves.
  [[nodiscard]] std::optional<std::vector<std::optional<Forecast>>> predict(std::span<const Candidate> c,
                                                                             std::span<const ViewForecasts> views) const;
  // What each of the run's views forecasts for `c` (no view before the run's first measurement).
  [[nodiscard]] std::vector<ViewForecasts> view_forecasts(std::span<const Candidate> c) const;
  // The same for each successful measurement among `o`, in o's order (empty for the others),
  // choosing the run's views first if `o` is the first to fix them: what update(o, views) takes,
  // for a caller that keeps the forecasts too.
  [[nodiscard]] std::vector<ViewForecasts> view_forecasts_of(std::span<const Observation> o);

  // Fixes the run's kernel, GPU and views by the first successful measurement among `o` (once).
  void choose_views_from(std::span<const Observation> o);
  // Records the successful measurements among `o` and refits the stacking.
  void update(std::span<const Observation> o);
  // The same with the views' forecasts of each of `o` taken by the caller, who needs them too
  // (view_forecasts, after choose_views_from): views[i] belongs to o[i]; those not recorded (failed,
  // another GPU's) may be empty.
  void update(std::span<const Observation> o, std::span<const ViewForecasts> views);

  [[nodiscard]] bool fitted() const noexcept { return m_stacking.has_value(); }
  // The GPUs whose views the run stacks (none before its first measurement).
  [[nodiscard]] std::vector<std::string> view_devices() const;
  [[nodiscard]] const std::optional<ViewStacking>& stacking() const noexcept { return m_stacking; }

 private:
  Model m_base;
  RunStackedViewsOptions m_options;
  // Fixed by the first candidate measured: the run's kernel and GPU, and its views.
  bool m_chosen = false;
  std::string m_kernel, m_device;
  std::vector<const ViewModel*> m_views;
  std::vector<ViewForecasts> m_measured_views;
  std::vector<double> m_measured_ms;
  std::optional<ViewStacking> m_stacking;

  [[nodiscard]] bool is_run_candidate(const Candidate& c) const;
  [[nodiscard]] bool records(const Observation& o) const;
  [[nodiscard]] bool applies_to(std::span<const Candidate> c) const;
  [[nodiscard]] std::vector<std::optional<Forecast>> stack(std::span<const ViewForecasts> views) const;
};

}  // namespace gpuforecast::detail::compose
