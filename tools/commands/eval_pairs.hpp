#pragma once
// `gpuforecast eval --protocol pairs`: the pairwise selective layer of surrogates on
// (reference, candidate) pairs of held-out points of each space (random and neighbour pairs),
// with bin and direction metrics, the majority-class baseline and the deferral rules checked
// over random calibration/test splits. eval.cpp registers the options and calls run_pairs_eval.
#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace gpuforecast::cli {

struct PairEvalArgs {
  std::vector<std::string> data;        // spaces, each evaluated on its own
  std::vector<std::string> surrogates;  // default: "default"
  double train_fraction = 0.1;
  std::size_t seeds = 1;                // training splits, seeds seed, seed+1, ...
  std::uint64_t seed = 0;
  double alpha = 0.1, delta = 0.1;
  // Set by the options below.
  std::size_t pairs = 2000;
  std::vector<std::string> kinds{"random", "neighbour", "child"};
  std::size_t splits = 20;
  double calibration_fraction = 0.5;
  bool shared_points = false;   // pairs may share points (not disjoint)
  double start_fraction = 0.1;  // Learn-then-Test's first tested threshold answers this fraction
  // Each space's forecaster leans on the other GPUs of its kernel and vendor among `data`: their
  // views stacked by the training fraction and corrected by the surrogate.
  bool views = false;
  bool json = false;
  // --surrogate llm: an OpenAI-compatible endpoint (GPUFORECAST_LLM_BASE_URL, _MODEL, _API_KEY)
  std::size_t examples = 0;      // measured training pairs shown in each prompt
  std::string llm_cache;         // response cache directory ("" = none)
  std::size_t llm_in_flight = 4;
  double llm_timeout = 60;       // seconds per request
};

// The options only the pairs protocol has (--pairs, --pair-kind, --splits, --examples, --llm-*).
void add_pair_options(CLI::App& command, PairEvalArgs& args);
// Prints a table (or JSON) to stdout; throws gpuforecast errors on bad input.
void run_pairs_eval(const PairEvalArgs& args);

}  // namespace gpuforecast::cli
