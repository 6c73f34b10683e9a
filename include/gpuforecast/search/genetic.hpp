#pragma once
// A genetic algorithm in the manner of Kernel Tuner's `genetic_algorithm` strategy: a
// population of valid configurations, tournament selection, uniform crossover, and mutation of
// single parameters to a neighbouring value of their list. Children that violate a constraint
// are repaired by further mutation, then replaced by a random valid configuration.
#include <cstddef>
#include <cstdint>

#include "gpuforecast/core/concepts.hpp"

namespace gpuforecast {

struct GeneticOptions {
  std::uint64_t seed = 0;
  std::size_t population_size = 20;  // Kernel Tuner's popsize
  std::size_t tournament_size = 2;   // parents are the best of this many random members
  double mutation_rate = 0.1;        // per parameter (Kernel Tuner: 1 / mutation_chance = 1/10)
  std::size_t elites = 2;            // best members carried unchanged into the next generation
  std::size_t repair_attempts = 20;  // re-mutations of an invalid child before it is replaced
};

class GeneticSearch {
 public:
  explicit GeneticSearch(GeneticOptions options = {}) : m_options(options) {}
  void run(SearchContext& ctx);
  [[nodiscard]] const GeneticOptions& options() const noexcept { return m_options; }

 private:
  GeneticOptions m_options;
};

static_assert(SearchStrategy<GeneticSearch>);

}  // namespace gpuforecast
