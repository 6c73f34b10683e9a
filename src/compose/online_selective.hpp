#pragma once
// A Model learning online, as a search uses it (compose/search_model.hpp): a surrogate and its
// calibration kept up to date during the search. The surrogate is either trained online from
// the search's own measurements, or the Model's own (from a model file, or one in memory)
// refined online by a small correction model learned on the ratio measured / forecast, so that
// a pre-trained model of many thousand rows is never refitted inside the loop, blended with a
// target-only model by their prequential rank correlations on the target. The calibrator (the
// Model's to begin with) is refitted every round on prequential residuals: forecasts made
// before the surrogate learned the point they forecast.
#include <cstdint>
#include <optional>
#include <string>

#include "calibration/selective_calibrator.hpp"
#include "compose/run_stacked_views.hpp"
#include "gpuforecast/core/any_selective_predictor.hpp"
#include "gpuforecast/forecast.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"

namespace gpuforecast::detail::compose {

// A fresh surrogate of `kind` configured for use inside a search (small, fast refits):
// "default" is a random forest; "ensemble" is XGBoost + knn.
[[nodiscard]] AnySurrogate make_search_surrogate(const std::string& kind, std::uint64_t seed);

// Surrogate concept: `base` (optional, pre-trained and frozen) times an online correction. With
// `views` (a base Model that holds per-GPU views), the base's forecasts are its views stacked by
// the run's measurements once they can be (run_stacked_views.hpp), the base surrogate's until then.
class SearchSurrogate {
 public:
  SearchSurrogate(std::optional<AnySurrogate> base, AnySurrogate online, std::size_t min_rows = 5,
                  std::optional<AnySurrogate> fresh = std::nullopt, std::optional<RunStackedViews> views = std::nullopt);
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> c);
  void update(std::span<const Observation> o);
  [[nodiscard]] bool ready() const noexcept { return m_base.has_value() || m_online_fitted; }

 private:
  std::optional<AnySurrogate> m_base;
  std::optional<RunStackedViews> m_views;
  AnySurrogate m_online;
  bool m_online_fitted = false;
  std::size_t m_min_rows;
  std::vector<Observation> m_rows;  // what the online model learns from (ratios when stacked)
  // With a base (and no views): a second online model on the raw target measurements, blended in
  // once it has `fresh_min_rows` ok rows, so that a target whose optimum lies where the base
  // devices were slow is not held to the base's ranking.
  std::optional<AnySurrogate> m_fresh;
  bool m_fresh_fitted = false;
  std::vector<Observation> m_raw;
  // With views, for each of m_raw that succeeded: the base surrogate's forecast and the views'
  // (both frozen, so taken once); the stacking that weighs the views moves with every measurement.
  std::vector<Forecast> m_raw_base;
  std::vector<ViewForecasts> m_raw_views;
  static constexpr std::size_t fresh_min_rows = 10;
  // Prequential forecasts of the corrected base and of the target-only model, and the measured
  // times: the blend weighs each by its rank correlation with the target's measurements.
  std::vector<double> m_pq_base, m_pq_fresh, m_pq_measured;
  [[nodiscard]] double fresh_weight() const;
  // The base's forecasts: stacked views where the stacking applies, the base surrogate's elsewhere.
  [[nodiscard]] std::vector<Forecast> base_predict(std::span<const Candidate> c) const;
  // The online correction's rows: each measurement divided by the base's forecast of it.
  [[nodiscard]] std::vector<Observation> ratio_rows(std::span<const Observation> o) const;
  // Keeps the base's and the views' forecasts of each point added to m_raw since the last call
  // (`new_views`: the views' forecasts of those points, RunStackedViews::view_forecasts_of).
  void remember_raw_forecasts(std::span<const ViewForecasts> new_views);
  // The online correction's rows for all of m_raw against the current stacking, from the
  // forecasts kept of them.
  [[nodiscard]] std::vector<Observation> ratio_rows_of_raw() const;
};
static_assert(Surrogate<SearchSurrogate>);

class OnlineSelective {
 public:
  // Wraps `base` (none: learns from nothing), with online models of `online_kind`.
  OnlineSelective(std::optional<Model> base, const std::string& online_kind, std::uint64_t seed);
  [[nodiscard]] std::vector<Decision> decide(std::span<const Candidate> c);
  void update(std::span<const Observation> o);
  [[nodiscard]] bool ready() const noexcept { return m_surrogate.ready(); }

 private:
  SearchSurrogate m_surrogate;
  CalibrationOptions m_options;
  std::optional<SelectiveCalibrator> m_calibrator;
  std::vector<Candidate> m_cal_candidates;
  std::vector<Forecast> m_cal_forecasts;
  std::vector<double> m_cal_ms;
};
static_assert(SelectivePredictor<OnlineSelective>);

// Calibration settings for searches: intervals at 80%, deferral at risk 0.2.
[[nodiscard]] CalibrationOptions search_calibration_options(std::uint64_t seed);

}  // namespace gpuforecast::detail::compose
