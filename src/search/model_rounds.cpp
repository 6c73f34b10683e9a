#include "model_rounds.hpp"

#include <chrono>
#include <cmath>
#include <span>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/search/search_context.hpp"

namespace gpuforecast::detail::search {

void learn_new_observations(AnySelectivePredictor& model, RoundScreening& screening, const SearchContext& ctx,
                            std::size_t& learned) {
  const auto& obs = ctx.observations();
  if (learned < obs.size()) {
    const auto landed = std::span<const Observation>(obs).subspan(learned);
    screening.learn(landed);
    model.update(landed);
    learned = obs.size();
  }
}

RoundForecasts decide_and_report(AnySelectivePredictor& model, SearchContext& ctx, const std::vector<Config>& configs,
                                 bool forecast_incumbent) {
  std::vector<Candidate> candidates;
  candidates.reserve(configs.size() + 1);
  for (const auto& c : configs) candidates.push_back(ctx.candidate(c));
  const TraceEntry* incumbent = ctx.best();  // the entry of the best ok measurement, null before one
  const bool with_incumbent = forecast_incumbent && incumbent;
  if (with_incumbent) candidates.push_back(ctx.candidate(incumbent->config));
  const auto start = std::chrono::steady_clock::now();
  RoundForecasts round{model.decide(candidates)};
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (round.decisions.size() != candidates.size()) throw error("selective model returned a wrong number of decisions");
  if (with_incumbent) {
    const double f = round.decisions.back().forecast.median_ms;
    if (std::isfinite(f) && f > 0) round.incumbent_forecast_ms = f;
    round.decisions.pop_back();
  }
  ctx.report_forecasts(SearchForecasted{configs, round.decisions, seconds, round.incumbent_forecast_ms});
  return round;
}

}  // namespace gpuforecast::detail::search
