#include "search/surrogate_filtered/screening.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <fmt/core.h>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/search/search_context.hpp"

namespace gpuforecast {

const OptionsTable<ScreeningStageOptions>& screening_stage_options_table() {
  static const auto table = [] {
    OptionsTable<ScreeningStageOptions> t("screening");
    t.add("screen", &ScreeningStageOptions::enabled,
          "drop the proposals certified as no improvement over the incumbent before ranking")
        .add("screen_alpha", [](ScreeningStageOptions& o) -> double& { return o.rule.alpha; },
             "allowed share of true improvements screened out", OptionRange::between(0.001, 0.999))
        .add_choice("screen_reference", [](ScreeningStageOptions& o) -> ScreeningReference& { return o.rule.reference; },
                    std::vector<std::pair<std::string, ScreeningReference>>{
                        {"incumbent_time", ScreeningReference::incumbent_time},
                        {"incumbent_forecast", ScreeningReference::incumbent_forecast}},
                    "what a forecast is set against: the incumbent's measured time, or the model's forecast of the "
                    "incumbent made with it (an error the model makes on both cancels); a rehearsal recorded with "
                    "incumbent_forecast keeps the incumbent's forecasts")
        .add("screen_delta", [](ScreeningStageOptions& o) -> double& { return o.rule.delta; },
             "allowed probability that the miss-rate guarantee fails", OptionRange::between(0.001, 0.999))
        .add("screen_tolerance", [](ScreeningStageOptions& o) -> double& { return o.rule.tolerance; },
             "improvements are faster than the incumbent by more than this share", OptionRange::between(0, 0.99))
        .add("screen_calibration", &ScreeningStageOptions::calibration_path,
             "measurements of the same kernel and device, not trained on, that calibrate the rule each round "
             "(empty: the search's own forecasts before each measurement)")
        .add("screen_rehearsal", &ScreeningStageOptions::rehearsal_path,
             "pairs recorded by the same search replayed on other devices (search --rehearsal-out): every candidate "
             "forecast there, measured or not, calibrates one rule for all rounds");
    return t;
  }();
  return table;
}

namespace {

bool usable_forecast(const Decision& d) { return std::isfinite(d.forecast.median_ms) && d.forecast.median_ms > 0; }

// Keeps the proposals whose verdict is false, with their generator ranges and decisions.
void keep_survivors(Proposals& proposals, std::vector<Decision>& decisions, const std::vector<bool>& skipped) {
  Proposals kept;
  kept.neighbour_of = std::move(proposals.neighbour_of);
  kept.neighbour_parents = proposals.neighbour_parents;
  std::vector<Decision> kept_decisions;
  for (std::size_t i = 0; i < proposals.configs.size(); ++i) {
    if (!skipped[i]) {
      kept.configs.push_back(std::move(proposals.configs[i]));
      kept_decisions.push_back(std::move(decisions[i]));
    }
    if (i + 1 == proposals.random_end) kept.random_end = kept.configs.size();
    if (i + 1 == proposals.bred_end) kept.bred_end = kept.configs.size();
  }
  if (proposals.random_end == 0) kept.random_end = 0;
  if (proposals.bred_end == 0) kept.bred_end = 0;
  kept.bred_end = std::max(kept.bred_end, kept.random_end);
  proposals = std::move(kept);
  decisions = std::move(kept_decisions);
}

// Un-skips the certified proposals of the lowest forecasts until `keep` survive.
void restore_lowest(std::vector<bool>& skipped, std::size_t& dropped, const std::vector<Decision>& decisions,
                    std::size_t keep) {
  const std::size_t survivors = skipped.size() - dropped;
  if (survivors >= keep || dropped == 0) return;
  std::vector<std::size_t> certified;
  for (std::size_t i = 0; i < skipped.size(); ++i)
    if (skipped[i]) certified.push_back(i);
  const std::size_t restore = std::min(keep - survivors, certified.size());
  std::partial_sort(certified.begin(), certified.begin() + static_cast<std::ptrdiff_t>(restore), certified.end(),
                    [&](std::size_t a, std::size_t b) {
                      return decisions[a].forecast.median_ms < decisions[b].forecast.median_ms;
                    });
  for (std::size_t j = 0; j < restore; ++j) skipped[certified[j]] = false;
  dropped -= restore;
}

}  // namespace

RoundScreening::RoundScreening(ScreeningStageOptions options) : m_options(std::move(options)) {
  m_rule = certify_screening(std::span<const ScreeningPair>{}, m_options.rule);  // checks the options
  // The file is read where the strategy is made (make_strategy, run/strategy_registry.hpp): a
  // strategy given a path it cannot use says so rather than screening without it.
  if (!m_options.calibration && !m_options.calibration_path.empty())
    throw invalid_argument_error(fmt::format(
        "screen_calibration {}: the file's measurements were not loaded (make_strategy reads it; a strategy made "
        "directly takes them in ScreeningStageOptions::calibration)",
        m_options.calibration_path));
  if (!m_options.rehearsal && !m_options.rehearsal_path.empty())
    throw invalid_argument_error(fmt::format(
        "screen_rehearsal {}: the file's pairs were not loaded (make_strategy reads it; a strategy made directly "
        "takes them in ScreeningStageOptions::rehearsal)",
        m_options.rehearsal_path));
  if (m_options.rehearsal && (m_options.calibration || !m_options.calibration_path.empty()))
    throw invalid_argument_error(
        "screening: screen_rehearsal and screen_calibration are two calibrations of the same rule: give one");
}

std::vector<ScreeningPair> RoundScreening::calibration_pairs(const SearchContext& ctx, AnySelectivePredictor& model,
                                                             double incumbent_ms, double incumbent_forecast_ms) {
  if (!m_options.calibration) return m_pairs;
  // Forecast by the current model; what the search measured is in its training set and left out.
  std::vector<Candidate> unseen;
  std::vector<double> measured;
  for (const auto& o : *m_options.calibration) {
    if (!o.measurement.ok() || !(o.measurement.median_ms > 0) || ctx.seen(o.candidate.config)) continue;
    unseen.push_back(ctx.candidate(o.candidate.config));
    measured.push_back(o.measurement.median_ms);
  }
  const auto decisions = model.decide(unseen);
  std::vector<ScreeningPair> pairs;
  for (std::size_t i = 0; i < decisions.size(); ++i)
    if (usable_forecast(decisions[i]))
      pairs.push_back({decisions[i].forecast.median_ms, measured[i], incumbent_ms, incumbent_forecast_ms});
  return pairs;
}

const ScreeningRule& RoundScreening::certify_round(const SearchContext& ctx, AnySelectivePredictor& model,
                                                   double incumbent_forecast_ms) {
  if (!ctx.best()) return m_rule;
  // Offline pairs set against the incumbent's forecast need one; without it nothing is certified.
  if (m_options.calibration && wants_incumbent_forecast() && !(incumbent_forecast_ms > 0)) {
    m_rule = certify_screening(std::span<const ScreeningPair>{}, m_options.rule);
    m_rule.reason = "no forecast of the incumbent this round";
    m_rule_at = static_cast<std::size_t>(-1);
    return m_rule;
  }
  // A rehearsal's rule holds for every round; the others change with the incumbent, the model
  // and the pairs, all of which change only when a measurement lands.
  const std::size_t at = m_options.rehearsal ? 0 : ctx.measurement_count();
  if (at != m_rule_at) {
    m_rule = m_options.rehearsal ? certify_screening_across(*m_options.rehearsal, m_options.rule)
                                 : certify_screening(calibration_pairs(ctx, model, ctx.best()->best_ms, incumbent_forecast_ms),
                                                     m_options.rule);
    m_rule_at = at;
  }
  return m_rule;
}

bool RoundScreening::skips(const Decision& d, double incumbent_ms, double incumbent_forecast_ms) const {
  if (wants_incumbent_forecast() && !(std::isfinite(incumbent_forecast_ms) && incumbent_forecast_ms > 0)) return false;
  return usable_forecast(d) && m_rule.skip(d.forecast.median_ms, incumbent_ms, incumbent_forecast_ms);
}

std::size_t RoundScreening::screen(SearchContext& ctx, AnySelectivePredictor& model, Proposals& proposals,
                                   std::vector<Decision>& decisions, std::size_t keep, double incumbent_forecast_ms) {
  if (!enabled() || !ctx.best()) return 0;
  if (decisions.size() != proposals.configs.size())
    throw error("screening: the model returned a wrong number of decisions");
  const double incumbent = ctx.best()->best_ms;
  (void)certify_round(ctx, model, incumbent_forecast_ms);
  std::vector<bool> skipped(proposals.configs.size(), false);
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < skipped.size(); ++i) {
    skipped[i] = skips(decisions[i], incumbent, incumbent_forecast_ms);
    dropped += skipped[i] ? 1 : 0;
  }
  restore_lowest(skipped, dropped, decisions, keep);
  ctx.report_screening(SearchScreened{incumbent, m_rule, proposals.configs, decisions, skipped});
  if (dropped > 0) keep_survivors(proposals, decisions, skipped);
  return dropped;
}

void RoundScreening::remember(std::span<const Config> picks, const Proposals& proposals,
                              std::span<const Decision> decisions, double incumbent_ms, double incumbent_forecast_ms) {
  if (!enabled() || !std::isfinite(incumbent_ms)) return;
  std::unordered_map<std::string, const Decision*> by_key;
  for (std::size_t i = 0; i < proposals.configs.size() && i < decisions.size(); ++i)
    by_key.emplace(proposals.configs[i].key(), &decisions[i]);
  for (const auto& c : picks) {
    const auto it = by_key.find(c.key());
    if (it != by_key.end() && usable_forecast(*it->second))
      m_pending[it->first] = {it->second->forecast.median_ms, incumbent_ms, incumbent_forecast_ms};
  }
}

void RoundScreening::learn(std::span<const Observation> landed) {
  for (const auto& o : landed) {
    const auto it = m_pending.find(o.candidate.config.key());
    if (it == m_pending.end()) continue;
    const double y = o.measurement.median_ms;
    if (o.measurement.ok() && std::isfinite(y) && y > 0 &&
        (!wants_incumbent_forecast() || it->second.incumbent_forecast_ms > 0))
      m_pairs.push_back({it->second.forecast_ms, y, it->second.incumbent_ms, it->second.incumbent_forecast_ms});
    m_pending.erase(it);
  }
}

}  // namespace gpuforecast
