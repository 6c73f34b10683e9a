#include "gpuforecast/search/genetic.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <unordered_set>

#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "variation.hpp"

namespace gpuforecast {

const OptionsTable<GeneticOptions>& genetic_options_table() {
  static const auto table = [] {
    OptionsTable<GeneticOptions> t("strategy \"genetic\"");
    t.add_choice("variant", &GeneticOptions::variant,
                 std::vector<std::pair<std::string, GeneticVariant>>{{"elitist", GeneticVariant::elitist},
                                                                     {"kernel_tuner", GeneticVariant::kernel_tuner}},
                 "elitist (ours) or kernel_tuner (Kernel Tuner's operators, to reproduce its published figures)")
        .add("population_size", &GeneticOptions::population_size, "members of each generation", OptionRange::at_least(2))
        .add("tournament_size", &GeneticOptions::tournament_size, "elitist: parents are the best of this many random members",
             OptionRange::at_least(1))
        .add("mutation_rate", &GeneticOptions::mutation_rate,
             "elitist: per parameter; kernel_tuner: per child", OptionRange::between(0, 1))
        .add("elites", &GeneticOptions::elites, "elitist: best members carried unchanged into the next generation",
             OptionRange::at_least(0))
        .add("repair_attempts", &GeneticOptions::repair_attempts,
             "elitist: re-mutations of an invalid child before it is replaced", OptionRange::at_least(0))
        .add("max_generations", &GeneticOptions::max_generations, "kernel_tuner: at most this many generations",
             OptionRange::at_least(1));
    return t;
  }();
  return table;
}

namespace {
struct Member {
  Config config;
  std::vector<std::size_t> genes;
  double fitness = std::numeric_limits<double>::infinity();  // runtime; failures are +inf
};

double fitness_of(const Measurement& m) {
  return m.ok() ? m.median_ms : std::numeric_limits<double>::infinity();
}

// Kernel Tuner's genetic_algorithm.py, operator for operator (see the header).
void run_kernel_tuner_variant(SearchContext& ctx, const GeneticOptions& o, std::vector<Config> population,
                              search_detail::Rng& rng) {
  using namespace search_detail;
  const Indexer ix(ctx.space());
  const std::size_t pop_size = population.size();
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::gamma_distribution<double> alpha(1.0, 1.0), beta(2.5, 1.0);
  for (std::size_t generation = 0; generation < o.max_generations && !ctx.exhausted(); ++generation) {
    const auto measured = ctx.evaluate(population);
    if (ctx.exhausted()) return;
    std::vector<std::size_t> rank(population.size());
    std::iota(rank.begin(), rank.end(), 0);
    std::stable_sort(rank.begin(), rank.end(),
                     [&](std::size_t a, std::size_t b) { return fitness_of(measured[a]) < fitness_of(measured[b]); });
    // Beta(1, 2.5) over ranks: the head of the ranking is drawn most often (X / (X + Y) with
    // X ~ Gamma(1), Y ~ Gamma(2.5) is Beta(1, 2.5)).
    auto draw_rank = [&] {
      const double x = alpha(rng), y = beta(rng);
      const auto i = static_cast<std::size_t>(x / (x + y) * static_cast<double>(rank.size()));
      return std::min(i, rank.size() - 1);
    };
    std::vector<Config> next;
    std::unordered_set<std::string> in_next;
    // Kernel Tuner loops until the population is full; a space too constrained to give
    // pop_size distinct valid children would never end, so attempts are bounded.
    for (std::size_t attempt = 0; next.size() < pop_size && attempt < 100 * pop_size; ++attempt) {
      const std::size_t i = draw_rank();
      std::size_t j = draw_rank();
      for (std::size_t redraw = 0; j == i && redraw < 100; ++redraw) j = draw_rank();
      auto a = ix.indices(population[rank[i]]);
      auto b = ix.indices(population[rank[j]]);
      for (std::size_t g = 0; g < a.size(); ++g)
        if (unit(rng) > 0.5) std::swap(a[g], b[g]);
      for (const auto* genes : {&a, &b}) {
        Config child = ix.make(*genes);
        if (unit(rng) < o.mutation_rate) {
          auto neighbours = hamming_neighbours(ctx.space(), child);
          if (!neighbours.empty())
            child = std::move(neighbours[std::uniform_int_distribution<std::size_t>(0, neighbours.size() - 1)(rng)]);
        }
        if (!ctx.space().is_valid(child) || !in_next.insert(child.key()).second) continue;
        next.push_back(std::move(child));
        if (next.size() == pop_size) break;
      }
    }
    if (next.empty()) return;
    population = std::move(next);
  }
}
}  // namespace

void GeneticSearch::run(SearchContext& ctx) {
  using namespace search_detail;
  Rng rng(m_options.seed);
  const Indexer ix(ctx.space());
  const std::size_t pop_size = std::max<std::size_t>(2, m_options.population_size);

  // Both variants start from the same uniform sample, so a seed compares them like for like.
  auto initial = sample_valid(ctx.space(), pop_size, rng());
  if (initial.empty()) return;
  if (m_options.variant == GeneticVariant::kernel_tuner) {
    run_kernel_tuner_variant(ctx, m_options, std::move(initial), rng);
    return;
  }
  std::vector<Member> population;
  for (auto& c : initial) {
    auto genes = ix.indices(c);
    population.push_back({std::move(c), std::move(genes)});
  }

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
