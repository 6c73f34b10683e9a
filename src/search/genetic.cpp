#include "gpuforecast/search/genetic.hpp"

#include <algorithm>
#include <limits>
#include <random>

#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "variation.hpp"

namespace gpuforecast {

namespace {
struct Member {
  Config config;
  std::vector<std::size_t> genes;
  double fitness = std::numeric_limits<double>::infinity();  // runtime; failures are +inf
};

double fitness_of(const Measurement& m) {
  return m.ok() ? m.median_ms : std::numeric_limits<double>::infinity();
}
}  // namespace

void GeneticSearch::run(SearchContext& ctx) {
  using namespace search_detail;
  Rng rng(m_options.seed);
  const Indexer ix(ctx.space());
  const std::size_t pop_size = std::max<std::size_t>(2, m_options.population_size);

  std::vector<Member> population;
  for (auto& c : sample_valid(ctx.space(), pop_size, rng())) {
    auto genes = ix.indices(c);
    population.push_back({std::move(c), std::move(genes)});
  }
  if (population.empty()) return;

  std::size_t stale_generations = 0;
  while (!ctx.exhausted()) {
    std::vector<Config> configs;
    for (const auto& m : population) configs.push_back(m.config);
    const std::size_t before = ctx.measurement_count();
    auto measured = ctx.evaluate(configs);
    for (std::size_t i = 0; i < population.size(); ++i) population[i].fitness = fitness_of(measured[i]);
    if (ctx.exhausted()) break;
    // A population that only revisits old points has converged: restart part of it at random
    // rather than spin without spending (Kernel Tuner keeps iterating to maxiter).
    stale_generations = ctx.measurement_count() == before ? stale_generations + 1 : 0;

    std::sort(population.begin(), population.end(), [](const Member& a, const Member& b) { return a.fitness < b.fitness; });
    std::vector<Member> next(population.begin(),
                             population.begin() + static_cast<std::ptrdiff_t>(std::min(m_options.elites, population.size())));
    std::uniform_int_distribution<std::size_t> any(0, population.size() - 1);
    auto tournament = [&]() -> const Member& {
      std::size_t best = any(rng);
      for (std::size_t t = 1; t < m_options.tournament_size; ++t) {
        auto other = any(rng);
        if (population[other].fitness < population[best].fitness) best = other;
      }
      return population[best];
    };
    const double rate = stale_generations > 0 ? std::min(1.0, m_options.mutation_rate * 3.0 * stale_generations)
                                              : m_options.mutation_rate;
    if (stale_generations > 5) return;  // the reachable neighbourhood is measured out
    while (next.size() < pop_size) {
      const Member& a = tournament();
      const Member& b = tournament();
      auto child = mutate(ix, uniform_crossover(a.genes, b.genes, rng), rate, false, rng);
      auto fixed = repair(ix, child, m_options.repair_attempts, rng);
      Config c = fixed.valid ? std::move(fixed.config) : random_valid(ctx.space(), rng);
      auto genes = ix.indices(c);
      next.push_back({std::move(c), std::move(genes)});
    }
    population = std::move(next);
  }
}

}  // namespace gpuforecast
