#pragma once
// Certified screening inside the surrogate-filtered search (stats/screening.hpp has the
// rule and its guarantee). Each ranked round, the proposals the rule certifies as no improvement
// over the incumbent are dropped before batch selection, and the round is reported to the
// observers (SearchScreened). Two calibrations:
//
// Offline (a calibration file of the device): each round the current model forecasts the
// calibration measurements the search has not measured (so never in-sample: the online model
// learns only from the search's measurements), and they are judged against the round's
// incumbent. A random sample of the space is exchangeable with the unmeasured space the round
// proposes, so each round's rule holds its (alpha, delta) guarantee; it certifies only while the
// sample holds about log(delta) / log(1 - alpha) configurations faster than the incumbent.
//
// Prequential (no file): each measured pick was forecast before its measurement landed; that
// forecast, the measurement and the incumbent of its round are one calibration pair of every
// later round, and only picks that beat their incumbent inform the miss rate. Sequential
// dependence: later pairs come from a model that learnt from earlier ones, and picks are chosen
// by their forecasts, not at random, so the pairs are not exchangeable with the next round's
// proposals. What keeps it honest: a pair is only ever a forecast made before its measurement
// was known, each is judged against its own incumbent, a search yields few improvements so the
// rule certifies late or never, and benchmarks/screening measures the realised miss rate over
// every proposal rather than assuming it. Judging every pick against the worst-case incumbent
// (to have more pairs) was tried and measured anti-conservative: picks are the candidates the
// model most underestimates (convolution_milo A100, 4 seeds: miss rate 0.36 at alpha 0.1).
//
// Rehearsal (a pairs file recorded on other devices, data/screening_pairs.hpp): the same search
// replayed on devices whose every time is stored forecasts its candidates as it goes; each
// candidate the model forecast, measured or not, gives a pair of the forecast made at proposal,
// its stored time and the incumbent of that moment. Selection plays no part (every proposal is a
// pair, not only the picks), and a rehearsal has hundreds of improvements where a search's own
// picks have a handful, so the rule certifies from the first screened round. Exchangeability is
// across devices: the guarantee is for a search on a device drawn like the rehearsal's devices,
// pooled over the search's candidates; pairs of one rehearsal run share its path, so the binomial
// count is an approximation, and benchmarks/screening measures the realised miss rate per run on
// devices left out of the rehearsal. Pairs come in a group per device, and the rule is the widest
// of the groups' (certify_screening_across): it must hold on every rehearsal device, a guard
// against a target harder than their average.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuforecast/stats/screening.hpp"
#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/core/options_table.hpp"
#include "gpuforecast/core/any_selective_predictor.hpp"
#include "search/surrogate_filtered/proposals.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class SearchContext;

struct ScreeningStageOptions {
  bool enabled = false;  // off by default: the search ranks every proposal
  ScreeningOptions rule;
  // Offline calibration: measurements of the same kernel and device the model is not trained
  // on (`screen_calibration` FILE, or set in memory). Each round the current model forecasts
  // those the search has not measured, and they calibrate the rule at the round's incumbent:
  // the exact guarantee when they are a random sample of the space. Empty: prequential. The
  // file is read by make_strategy into `calibration`.
  std::string calibration_path;
  std::shared_ptr<const std::vector<Observation>> calibration;
  // Rehearsal calibration (`screen_rehearsal` FILE or FOLDER of pairs, a group per file, or set
  // in memory, a group per device): one rule, certified once, for every round. Not with
  // `calibration`. Read by make_strategy.
  std::string rehearsal_path;
  std::shared_ptr<const std::vector<std::vector<ScreeningPair>>> rehearsal;
};

[[nodiscard]] const OptionsTable<ScreeningStageOptions>& screening_stage_options_table();

// One search's screening: the calibration it certifies each round's rule on (the file's
// measurements, or the pairs its own forecasts gave), and the last rule.
class RoundScreening {
 public:
  // Reads the calibration file when one is named; throws for bad options or an unreadable file.
  explicit RoundScreening(ScreeningStageOptions options = {});
  [[nodiscard]] bool enabled() const noexcept { return m_options.enabled; }

  // Whether the rule sets forecasts against the model's forecast of the incumbent, which the
  // round's decisions must then come with (model_rounds.hpp).
  [[nodiscard]] bool wants_incumbent_forecast() const noexcept {
    return m_options.rule.reference == ScreeningReference::incumbent_forecast;
  }

  // The rule of this round (the last one when nothing was measured since), certified on the
  // calibration of `calibration_pairs`; `incumbent_forecast_ms` is the model's forecast of the
  // incumbent this round (offline calibration sets the file's forecasts against it).
  const ScreeningRule& certify_round(const SearchContext& ctx, AnySelectivePredictor& model,
                                     double incumbent_forecast_ms);
  // Whether the last certified rule skips a candidate so decided against the incumbent (its time
  // and the model's forecast of it). A decision without a usable forecast, or a rule against the
  // incumbent's forecast when there is none, never skips.
  [[nodiscard]] bool skips(const Decision& decision, double incumbent_ms, double incumbent_forecast_ms) const;
  // Drops what the rule certifies from `proposals` and `decisions` (one per proposal), reports
  // the round to ctx's observers and returns how many were dropped. At least `keep` proposals
  // stay (those of the lowest forecasts among the certified ones are kept when too few
  // survive), so the budget is still spent. Nothing is dropped, and nothing reported, when
  // screening is off or nothing has been measured yet.
  // With offline calibration, `model` forecasts the calibration measurements.
  std::size_t screen(SearchContext& ctx, AnySelectivePredictor& model, Proposals& proposals, std::vector<Decision>& decisions,
                     std::size_t keep, double incumbent_forecast_ms);
  // Remembers the forecasts of the round's picks, made against the incumbent (its time and the
  // model's forecast of it).
  void remember(std::span<const Config> picks, const Proposals& proposals, std::span<const Decision> decisions,
                double incumbent_ms, double incumbent_forecast_ms);
  // Turns the landed measurements of remembered picks into calibration pairs. A pick that
  // failed is no improvement of anything and gives no pair.
  void learn(std::span<const Observation> landed);

  [[nodiscard]] const std::vector<ScreeningPair>& pairs() const noexcept { return m_pairs; }
  [[nodiscard]] const ScreeningRule& last_rule() const noexcept { return m_rule; }

 private:
  // The pairs the round's rule is calibrated on.
  std::vector<ScreeningPair> calibration_pairs(const SearchContext& ctx, AnySelectivePredictor& model, double incumbent_ms,
                                               double incumbent_forecast_ms);
  ScreeningStageOptions m_options;
  struct Pending {
    double forecast_ms;
    double incumbent_ms;
    double incumbent_forecast_ms;
  };
  std::unordered_map<std::string, Pending> m_pending;  // by Config::key()
  std::vector<ScreeningPair> m_pairs;
  ScreeningRule m_rule;
  std::size_t m_rule_at = static_cast<std::size_t>(-1);  // measurement count m_rule was certified at
};

}  // namespace gpuforecast
