#include "model_rounds.hpp"

#include <chrono>
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

std::vector<Decision> decide_and_report(AnySelectivePredictor& model, SearchContext& ctx, const std::vector<Config>& configs) {
  std::vector<Candidate> candidates;
  candidates.reserve(configs.size());
  for (const auto& c : configs) candidates.push_back(ctx.candidate(c));
  const auto start = std::chrono::steady_clock::now();
  auto decisions = model.decide(candidates);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (decisions.size() != candidates.size()) throw error("selective model returned a wrong number of decisions");
  ctx.report_forecasts(SearchForecasted{configs, decisions, seconds});
  return decisions;
}

}  // namespace gpuforecast::detail::search
