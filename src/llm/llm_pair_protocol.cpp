#include "llm/llm_pair_protocol.hpp"

#include <fmt/core.h>

#include <chrono>

#include "gpuforecast/core/error.hpp"
#include "llm/pair_prompt.hpp"

namespace gpuforecast {

std::vector<LlmPairRun> evaluate_llm_pairs(const SpaceData& space, LlmEndpoint& endpoint, const PairProtocolOptions& o,
                                           std::size_t examples, std::uint64_t seed) {
  const EvaluationSplit split = interpolation_split(space, o.train_fraction, seed);
  const auto candidates = split.test_candidates();
  const auto times = split.test_times();
  std::vector<Config> configs;
  for (const auto& c : candidates) configs.push_back(c.config);
  std::vector<Config> train_configs;
  std::vector<double> train_times;
  for (const auto& ob : split.train)
    if (ob.measurement.median_ms > 0) {
      train_configs.push_back(ob.candidate.config);
      train_times.push_back(ob.measurement.median_ms);
    }

  std::vector<LlmPairRun> out;
  for (std::size_t k = 0; k < o.kinds.size(); ++k) {
    if (o.kinds[k] == PairKind::child) continue;  // not asked of the LLM yet (its examples would need the parents)
    const auto pairs = sample_pairs(o.kinds[k], configs, o.pairs, pair_draw_seed(seed, k), o.disjoint);
    // Worked examples: measured pairs of the same kind from the training part, fixed for the
    // space so that every prompt shares them (and the server's prompt cache keeps them).
    std::vector<PairExample> shots;
    if (examples > 0) {
      auto ex = sample_pairs(o.kinds[k], train_configs, examples, pair_draw_seed(seed, k) ^ 0x5eed, true);
      for (const auto& e : ex)
        shots.push_back({train_configs[e.reference], train_configs[e.candidate],
                         speedup_bin(train_times[e.reference], train_times[e.candidate])});
    }
    std::vector<std::string> prompts;
    prompts.reserve(pairs.size());
    for (const auto& pr : pairs) prompts.push_back(pair_prompt(candidates[pr.reference], candidates[pr.candidate], shots));
    const auto t0 = std::chrono::steady_clock::now();
    const auto answers = endpoint.ask(prompts);
    LlmPairRun r;
    r.run.fit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.asked = pairs.size();
    std::vector<BinProbabilities> p;
    std::vector<CandidatePair> answered;
    for (std::size_t i = 0; i < answers.size(); ++i) {
      const auto& a = answers[i];
      if (a.status == LlmAnswerStatus::failed) {
        if (r.failed++ == 0) r.first_error = a.error;
        continue;
      }
      r.text_only += a.status == LlmAnswerStatus::text_only ? 1 : 0;
      p.push_back(a.probabilities);
      answered.push_back(pairs[i]);
    }
    if (answered.size() < 2)
      throw invalid_argument_error(fmt::format("{}: the LLM answered {} of {} {} pairs{}{}", space.path, answered.size(),
                                               pairs.size(), to_string(o.kinds[k]), r.failed ? "; first failure: " : "",
                                               r.first_error));
    r.run.surrogate = "llm";
    r.run.target = space_label(space);
    r.run.kind = o.kinds[k];
    r.run.seed = seed;
    r.run.train_count = split.train.size();
    r.run.test_count = split.test.size();
    r.run.evaluation = evaluate_pairs(p, pair_true_bins(times, answered), o.evaluation);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gpuforecast
