#include "online_selective.hpp"

#include <algorithm>
#include <cmath>

#include "compose/complete_forecasts.hpp"
#include "compose/model_impl.hpp"
#include "gpuforecast/core/error.hpp"
#include "surrogate/ensemble.hpp"
#include "surrogate/metrics.hpp"
#include "surrogate/random_forest.hpp"
#include "surrogate/ratio_correction.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/xgboost.hpp"

namespace gpuforecast::detail::compose {

AnySurrogate make_search_surrogate(const std::string& kind, std::uint64_t seed) {
  std::string k = kind;
  // A random forest measured best inside searches (docs/search.md): like boosted trees it
  // combines what each parameter does, so it points at regions no measured point is close to,
  // and its trees' disagreement is an uncertainty the optimistic ranking can use, which
  // XGBoost's single model does not have; k-nearest neighbours only interpolates.
  if (k.empty() || k == "default") k = "forest";
  if (k == "ensemble") {
    // Trees and neighbours generalise differently; their disagreement is the spread that
    // exploration feeds on.
    std::vector<AnySurrogate> members;
    if (xgboost_available()) members.push_back(make_search_surrogate("xgboost", seed));
    members.push_back(make_surrogate("knn", seed));
    if (members.size() == 1) members.push_back(make_surrogate("ridge", seed));
    return AnyEnsemble(std::move(members));
  }
  if (k == "xgboost" && xgboost_available()) {
    // Refitted every round on at most a few hundred rows: fewer, shallower trees than the
    // offline defaults, one thread (searches run side by side in benchmarks).
    XgboostOptions o;
    o.rounds = 120;
    o.eta = 0.1;
    o.max_depth = 5;
    o.subsample = 1.0;
    o.holdout_fraction = 0.0;
    o.failure_rounds = 30;
    o.threads = 1;
    o.seed = seed;
    return XgboostSurrogate(o);
  }
  if (k == "forest") {
    // All rows per tree: a search has a few hundred at most.
    RandomForestOptions o;
    o.seed = seed;
    return RandomForestSurrogate(o);
  }
  return make_surrogate(k, seed);
}

SearchSurrogate::SearchSurrogate(std::optional<AnySurrogate> base, AnySurrogate online, std::size_t min_rows,
                                 std::optional<AnySurrogate> fresh, std::optional<RunStackedViews> views)
    : m_base(std::move(base)),
      m_views(std::move(views)),
      m_online(std::move(online)),
      m_min_rows(std::max<std::size_t>(1, min_rows)),
      m_fresh(std::move(fresh)) {}

std::vector<Forecast> SearchSurrogate::base_predict(std::span<const Candidate> c) const {
  auto stacked = m_views ? m_views->predict(c) : std::nullopt;
  if (!stacked) return m_base->predict(c);
  return complete_forecasts(c, std::move(*stacked), [&](std::span<const Candidate> rest) { return m_base->predict(rest); });
}

std::vector<Observation> SearchSurrogate::ratio_rows(std::span<const Observation> observations) const {
  std::vector<Candidate> cands;
  for (const auto& o : observations) cands.push_back(o.candidate);
  const auto f = base_predict(cands);
  std::vector<Observation> rows;
  for (std::size_t i = 0; i < observations.size(); ++i) rows.push_back(ratio_observation(observations[i], f[i].median_ms));
  return rows;
}

void SearchSurrogate::remember_raw_forecasts(std::span<const ViewForecasts> new_views) {
  const std::size_t first = m_raw_base.size();
  std::vector<Candidate> cands;
  for (std::size_t i = first; i < m_raw.size(); ++i)
    if (m_raw[i].measurement.ok()) cands.push_back(m_raw[i].candidate);
  const auto base = cands.empty() ? std::vector<Forecast>{} : m_base->predict(cands);
  for (std::size_t i = first, j = 0; i < m_raw.size(); ++i) {
    const bool ok = m_raw[i].measurement.ok();
    m_raw_base.push_back(ok ? base[j] : Forecast{});
    m_raw_views.push_back(ok ? new_views[i - first] : ViewForecasts{});
    if (ok) ++j;
  }
}

std::vector<Observation> SearchSurrogate::ratio_rows_of_raw() const {
  std::vector<std::size_t> ok_rows;
  std::vector<Candidate> cands;
  std::vector<ViewForecasts> views;
  for (std::size_t i = 0; i < m_raw.size(); ++i) {
    if (!m_raw[i].measurement.ok()) continue;
    ok_rows.push_back(i);
    cands.push_back(m_raw[i].candidate);
    views.push_back(m_raw_views[i]);
  }
  const auto stacked = m_views->predict(cands, views);
  std::vector<Observation> rows(m_raw.begin(), m_raw.end());
  for (std::size_t j = 0; j < ok_rows.size(); ++j) {
    const std::size_t i = ok_rows[j];
    const bool from_views = stacked && (*stacked)[j];
    rows[i] = ratio_observation(m_raw[i], (from_views ? *(*stacked)[j] : m_raw_base[i]).median_ms);
  }
  return rows;
}

std::vector<Forecast> SearchSurrogate::predict(std::span<const Candidate> c) {
  if (!m_base) {
    if (!m_online_fitted) throw invalid_argument_error("search surrogate used before it has seen enough measurements");
    return m_online.predict(c);
  }
  auto f = base_predict(c);
  if (!m_online_fitted) return f;
  const auto g = m_online.predict(c);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = corrected_by_ratio(f[i], g[i]);
  if (m_fresh_fitted) {
    // Weighted geometric mean of the corrected base and the target-only model, each weighted by
    // how well it ranked the target's measurements before it learned them.
    const double w = fresh_weight();
    const auto h = m_fresh->predict(c);
    auto mix = [w](double a, double b) { return std::exp((1 - w) * std::log(a) + w * std::log(b)); };
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (!(f[i].median_ms > 0) || !(h[i].median_ms > 0)) continue;
      f[i].median_ms = mix(f[i].median_ms, h[i].median_ms);
      if (f[i].lower_ms > 0 && h[i].lower_ms > 0) f[i].lower_ms = mix(f[i].lower_ms, h[i].lower_ms);
      if (f[i].upper_ms > 0 && h[i].upper_ms > 0) f[i].upper_ms = mix(f[i].upper_ms, h[i].upper_ms);
      f[i].spread = (1 - w) * f[i].spread + w * h[i].spread;
      f[i].p_fail = (1 - w) * f[i].p_fail + w * h[i].p_fail;
    }
  }
  return f;
}

double SearchSurrogate::fresh_weight() const {
  // Prequential record since the target-only model was fitted: both forecasts, and the truth.
  if (m_pq_measured.size() < 5) return 0.5;
  const double rb = std::max(0.0, spearman(m_pq_base, m_pq_measured));
  const double rf = std::max(0.0, spearman(m_pq_fresh, m_pq_measured));
  const double b = rb * rb + 0.01, f = rf * rf + 0.01;
  return f / (b + f);
}

void SearchSurrogate::update(std::span<const Observation> observations) {
  const std::size_t before = m_rows.size();
  // The views' forecasts of the new points, taken once for the stacking and the forecasts kept of
  // each measured point.
  const std::vector<ViewForecasts> new_views =
      m_views ? m_views->view_forecasts_of(observations) : std::vector<ViewForecasts>{};
  if (m_base && m_fresh_fitted) {
    // Forecasts of both parts before they learn these points: the record that weighs them.
    const auto [cands, times] = successful_runs(observations);
    if (!cands.empty()) {
      auto f = base_predict(cands);
      if (m_online_fitted) {
        const auto g = m_online.predict(cands);
        for (std::size_t i = 0; i < f.size(); ++i) f[i].median_ms *= std::max(g[i].median_ms, 1e-9);
      }
      const auto h = m_fresh->predict(cands);
      for (std::size_t i = 0; i < cands.size(); ++i) {
        m_pq_base.push_back(f[i].median_ms);
        m_pq_fresh.push_back(h[i].median_ms);
        m_pq_measured.push_back(times[i]);
      }
    }
  }
  if (m_base) {
    const std::size_t raw_before = m_raw.size();
    m_raw.insert(m_raw.end(), observations.begin(), observations.end());
    const auto raw_ok = static_cast<std::size_t>(
        std::count_if(m_raw.begin(), m_raw.end(), [](const Observation& o) { return o.measurement.ok(); }));
    if (m_fresh && !m_fresh_fitted && raw_ok >= fresh_min_rows) {
      m_fresh->fit(m_raw);
      m_fresh_fitted = true;
    } else if (m_fresh && m_fresh_fitted && m_raw.size() > raw_before) {
      m_fresh->update(std::span<const Observation>(m_raw).subspan(raw_before));
    }
  }
  if (m_views) {
    // The stacking moves with every measurement, and with it the base every ratio was taken
    // against: the correction learns all of them again (a few hundred rows at most).
    m_views->update(observations, new_views);
    remember_raw_forecasts(new_views);
    m_rows = ratio_rows_of_raw();
    const auto ok = static_cast<std::size_t>(
        std::count_if(m_rows.begin(), m_rows.end(), [](const Observation& o) { return o.measurement.ok(); }));
    if (ok < m_min_rows) return;
    m_online.fit(m_rows);
    m_online_fitted = true;
    return;
  }
  if (m_base) {
    const auto rows = ratio_rows(observations);
    m_rows.insert(m_rows.end(), rows.begin(), rows.end());
  } else {
    m_rows.insert(m_rows.end(), observations.begin(), observations.end());
  }
  const auto ok = static_cast<std::size_t>(
      std::count_if(m_rows.begin(), m_rows.end(), [](const Observation& o) { return o.measurement.ok(); }));
  if (ok < m_min_rows) return;
  if (!m_online_fitted) {
    m_online.fit(m_rows);
    m_online_fitted = true;
  } else if (m_rows.size() > before) {
    m_online.update(std::span<const Observation>(m_rows).subspan(before));
  }
}

CalibrationOptions search_calibration_options(std::uint64_t seed) {
  CalibrationOptions o;
  o.alpha = 0.2;
  o.risk_alpha = 0.2;
  o.delta = 0.2;
  o.tolerance = 0.1;
  o.aci_gamma = 0.05;
  o.max_p_fail = 0.5;
  o.seed = seed;
  return o;
}

namespace {
SearchSurrogate search_surrogate(const std::optional<Model>& base, const std::string& online_kind, std::uint64_t seed) {
  if (!base) return SearchSurrogate(std::nullopt, make_search_surrogate(online_kind, seed), 5);
  if (RunStackedViews::has_views(*base))
    // The stacking is the target's own fit of what the training GPUs know, and the ratio model
    // learns where it differs: a model of the target's few measurements alone, blended in, only
    // blurs the ranking (screened evolution over the 24 shared spaces: ahead or level on every
    // family without it, docs/calibration.md).
    return SearchSurrogate(base->impl().surrogate, make_search_surrogate(online_kind, seed), 5, std::nullopt,
                           RunStackedViews(*base));
  return SearchSurrogate(base->impl().surrogate, make_search_surrogate(online_kind, seed), 5,
                         make_search_surrogate(online_kind, seed + 1));
}
}  // namespace

// A calibrator from the model file describes the base on its own training kernels and devices;
// the search recalibrates on the target as soon as it has measurements.
OnlineSelective::OnlineSelective(std::optional<Model> base, const std::string& online_kind, std::uint64_t seed)
    : m_surrogate(search_surrogate(base, online_kind, seed)),
      m_options(search_calibration_options(seed)),
      m_calibrator(base ? base->impl().calibrator : std::nullopt) {}

std::vector<Decision> OnlineSelective::decide(std::span<const Candidate> c) {
  const std::vector<Forecast> f = m_surrogate.predict(c);
  return decide_all(m_calibrator ? &*m_calibrator : nullptr, c, f, std::nullopt, "not calibrated yet");
}

void OnlineSelective::update(std::span<const Observation> observations) {
  if (m_surrogate.ready()) {
    const auto [cands, times] = successful_runs(observations);
    if (!cands.empty()) {
      auto f = m_surrogate.predict(cands);
      // Prequential: forecast before the surrogate learns these points, so the residuals are
      // honest calibration data.
      m_cal_candidates.insert(m_cal_candidates.end(), cands.begin(), cands.end());
      m_cal_forecasts.insert(m_cal_forecasts.end(), f.begin(), f.end());
      m_cal_ms.insert(m_cal_ms.end(), times.begin(), times.end());
      if (m_calibrator) {
        for (std::size_t i = 0; i < cands.size(); ++i) m_calibrator->update(cands[i], f[i], times[i]);
      }
    }
  }
  m_surrogate.update(observations);
  if (m_cal_ms.size() >= 8) {
    try {
      m_calibrator = SelectiveCalibrator::fit(m_cal_candidates, m_cal_forecasts, m_cal_ms, m_options);
    } catch (const invalid_argument_error&) {
      // Too few or degenerate residuals: keep the previous calibration.
    }
  }
}

}  // namespace gpuforecast::detail::compose
