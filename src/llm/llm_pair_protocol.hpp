#pragma once
// The pairs protocol (calibration/pairwise_protocol.hpp) with a language model as the
// forecaster: the same training split and the same held-out pairs as every other surrogate of
// that seed; the training part only supplies the K worked examples of the prompt. Pairs the
// endpoint could not answer are deferred (measured): they are left out of the scores and
// counted. Child pairs are not asked yet (skipped).
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/pairwise_protocol.hpp"
#include "llm/llm_endpoint.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct LlmPairRun {
  PairProtocolRun run;              // scored on the answered pairs; fit_seconds holds the asking time
  std::size_t asked = 0;            // pairs put to the endpoint
  std::size_t failed = 0;           // not answered: deferred
  std::size_t text_only = 0;        // answered without log-probabilities (one-hot)
  std::string first_error;          // the reason of the first failure, if any
};

// Throws invalid_argument_error when fewer than 2 pairs were answered (naming the first reason).
[[nodiscard]] std::vector<LlmPairRun> evaluate_llm_pairs(const SpaceData& space, LlmEndpoint& endpoint,
                                                         const PairProtocolOptions& options, std::size_t examples,
                                                         std::uint64_t seed);

}  // namespace gpuforecast
