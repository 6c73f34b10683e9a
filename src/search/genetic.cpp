#include "search/genetic.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "model_rounds.hpp"
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
             OptionRange::at_least(1))
        .add("children_per_measurement", &GeneticOptions::children_per_measurement,
             "children bred per child measured; above 1 a selective model ranks (and with screen, screens) them",
             OptionRange::between(1, 1000))
        .add("breeding_batches", &GeneticOptions::breeding_batches,
             "with screening: batches of children_per_measurement children per place bred at most while the rule "
             "leaves fewer survivors than places",
             OptionRange::between(1, 100))
        .include(&GeneticOptions::screening, screening_stage_options_table());
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

// Screened evolution's choice among a generation's children (see the header): the model learns
// what has landed, forecasts the children, the rule drops those certified as no improvement (more
// batches are bred while too few survive), and the lowest forecasts among the rest are measured.
class ChildChoice {
 public:
  // Up to `count` new children, none of them bred before in this generation.
  using Breed = std::function<std::vector<Config>(std::size_t count)>;

  ChildChoice(AnySelectivePredictor& model, RoundScreening& screening, std::size_t batches)
      : m_model(model), m_screening(screening), m_batches(batches) {}

  // The at most `slots` of the children to measure: those of `breed(slots * per_place)`, and of
  // further batches when the rule leaves fewer than `slots`. In breeding order while the model
  // cannot forecast.
  std::vector<Config> choose(SearchContext& ctx, const Breed& breed, std::size_t slots, std::size_t per_place) {
    detail::search::learn_new_observations(m_model, m_screening, ctx, m_learned);
    std::vector<Config> children = breed(slots * per_place);
    if (!m_model.ready() || children.empty()) {
      children.resize(std::min(children.size(), slots));
      return children;
    }
    const bool against_forecast = m_screening.wants_incumbent_forecast();
    auto round = detail::search::decide_and_report(m_model, ctx, children, against_forecast);
    auto& decisions = round.decisions;
    // The model learns nothing between batches: the incumbent's forecast of the first holds.
    const double incumbent_forecast = round.incumbent_forecast_ms;
    for (std::size_t batch = 1; batch < m_batches && survivors(ctx, decisions, incumbent_forecast) < slots; ++batch) {
      auto more = breed(slots * per_place);
      if (more.empty()) break;
      auto more_round = detail::search::decide_and_report(m_model, ctx, more, against_forecast);
      std::move(more.begin(), more.end(), std::back_inserter(children));
      std::move(more_round.decisions.begin(), more_round.decisions.end(), std::back_inserter(decisions));
    }
    Proposals proposals;
    proposals.configs = std::move(children);
    proposals.bred_end = proposals.configs.size();
    (void)m_screening.screen(ctx, m_model, proposals, decisions, slots, incumbent_forecast);
    std::vector<std::size_t> order(proposals.configs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return decisions[a].forecast.median_ms < decisions[b].forecast.median_ms;
    });
    order.resize(std::min(order.size(), slots));
    std::vector<Config> chosen;
    for (const auto i : order) chosen.push_back(proposals.configs[i]);
    m_screening.remember(chosen, proposals, decisions,
                         ctx.best() ? ctx.best()->best_ms : std::numeric_limits<double>::infinity(), incumbent_forecast);
    return chosen;
  }

 private:
  // Children the round's rule would keep (all of them when screening is off or nothing is measured).
  std::size_t survivors(SearchContext& ctx, const std::vector<Decision>& decisions, double incumbent_forecast_ms) {
    if (!m_screening.enabled() || !ctx.best()) return decisions.size();
    (void)m_screening.certify_round(ctx, m_model, incumbent_forecast_ms);
    const double incumbent = ctx.best()->best_ms;
    return static_cast<std::size_t>(std::count_if(decisions.begin(), decisions.end(), [&](const Decision& d) {
      return !m_screening.skips(d, incumbent, incumbent_forecast_ms);
    }));
  }

  AnySelectivePredictor& m_model;
  RoundScreening& m_screening;
  std::size_t m_batches;
  std::size_t m_learned = 0;  // observations already given to the model
};

// Kernel Tuner's genetic_algorithm.py, operator for operator (see the header).
void run_kernel_tuner_variant(SearchContext& ctx, const GeneticOptions& o, std::vector<Config> population,
                              detail::search::Rng& rng, ChildChoice* choice) {
  using namespace detail::search;
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
    // Kernel Tuner loops until the population is full; a space too constrained to give that many
    // distinct valid children would never end, so attempts are bounded.
    std::unordered_set<std::string> in_next;
    const auto breed = [&](std::size_t count) {
      std::vector<Config> children;
      for (std::size_t attempt = 0; children.size() < count && attempt < 100 * count; ++attempt) {
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
          children.push_back(std::move(child));
          if (children.size() == count) break;
        }
      }
      return children;
    };
    // Screened: the choice keeps pop_size of m times as many children (or more batches).
    std::vector<Config> next =
        choice ? choice->choose(ctx, breed, pop_size, o.children_per_measurement) : breed(pop_size);
    if (next.empty()) return;
    population = std::move(next);
  }
}
// The elitist variant with several workers. A generation's members go to workers as these free
// up; once all are handed over, free workers get children of the next generation bred from the
// members measured so far (the ones in flight count as members: they are not bred again, and the
// next generation keeps them), so no worker waits for a generation's slowest measurement.
class AsyncElitist {
 public:
  AsyncElitist(SearchContext& ctx, const GeneticOptions& o, std::size_t pop_size, detail::search::Rng& rng)
      : m_ctx(ctx), m_o(o), m_pop_size(pop_size), m_rng(rng), m_ix(ctx.space()) {}

  void run(std::vector<Member> population) {
    std::size_t stale_generations = 0;
    std::size_t started = 0;  // members of this generation that cost a measurement
    for (;;) {
      std::vector<Member> early;  // the next generation's children, bred while this one runs
      std::size_t started_early = 0;
      std::size_t handed = 0;
      const double rate = mutation_rate(stale_generations);
      for (;;) {
        while (handed < population.size() && m_ctx.free_workers() > 0)
          started += m_ctx.submit(population[handed++].config) == SearchContext::Submitted::started ? 1 : 0;
        if (handed == population.size() && all_landed(population)) break;
        if (m_ctx.exhausted()) return m_ctx.wait_all();
        if (handed == population.size() && stale_generations <= 5) {
          // A child already measured or in flight would hold a place and no worker: bred again,
          // a few tries per free worker (a small landed pool breeds mostly copies).
          auto pool = landed_members(population);
          for (std::size_t tries = 4 * m_ctx.free_workers();
               !pool.empty() && tries > 0 && m_ctx.free_workers() > 0 && early.size() + m_o.elites < m_pop_size;
               --tries) {
            Member child = breed(pool, rate);
            if (m_ctx.submit(child.config) != SearchContext::Submitted::started) continue;
            ++started_early;
            early.push_back(std::move(child));
          }
        }
        if (m_ctx.in_flight() == 0) {
          // Nothing runs and members are left: the budget has no room for them.
          if (handed == population.size() || m_ctx.free_workers() == 0) return;
          continue;
        }
        (void)m_ctx.wait_any();
      }
      for (auto& m : population) m.fitness = fitness_now(m.config);
      if (m_ctx.exhausted()) return m_ctx.wait_all();
      stale_generations = started == 0 ? stale_generations + 1 : 0;
      std::sort(population.begin(), population.end(), [](const Member& a, const Member& b) { return a.fitness < b.fitness; });
      std::vector<Member> next(population.begin(),
                               population.begin() + static_cast<std::ptrdiff_t>(std::min(m_o.elites, population.size())));
      if (stale_generations > 5) return m_ctx.wait_all();  // the reachable neighbourhood is measured out
      for (auto& c : early) next.push_back(std::move(c));
      const double next_rate = mutation_rate(stale_generations);
      while (next.size() < m_pop_size) next.push_back(breed(population, next_rate));
      population = std::move(next);
      started = started_early;
    }
  }

 private:
  [[nodiscard]] double mutation_rate(std::size_t stale_generations) const {
    return stale_generations > 0 ? std::min(1.0, m_o.mutation_rate * 3.0 * static_cast<double>(stale_generations))
                                 : m_o.mutation_rate;
  }
  [[nodiscard]] double fitness_now(const Config& c) const {
    const Measurement* m = m_ctx.lookup(c);
    return m ? fitness_of(*m) : std::numeric_limits<double>::infinity();
  }
  [[nodiscard]] bool all_landed(const std::vector<Member>& population) const {
    return std::all_of(population.begin(), population.end(), [&](const Member& m) { return !m_ctx.in_flight(m.config); });
  }
  // Members whose result is in, with their fitness, for breeding ahead of the generation's end.
  [[nodiscard]] std::vector<Member> landed_members(const std::vector<Member>& population) const {
    std::vector<Member> pool;
    for (const auto& m : population)
      if (m_ctx.lookup(m.config)) {
        pool.push_back(m);
        pool.back().fitness = fitness_now(m.config);
      }
    return pool;
  }
  Member breed(const std::vector<Member>& pool, double rate) {
    using namespace detail::search;
    std::uniform_int_distribution<std::size_t> any(0, pool.size() - 1);
    auto tournament = [&]() -> const Member& {
      std::size_t best = any(m_rng);
      for (std::size_t t = 1; t < m_o.tournament_size; ++t) {
        auto other = any(m_rng);
        if (pool[other].fitness < pool[best].fitness) best = other;
      }
      return pool[best];
    };
    const Member& a = tournament();
    const Member& b = tournament();
    auto child = mutate(m_ix, uniform_crossover(a.genes, b.genes, m_rng), rate, false, m_rng);
    auto fixed = repair(m_ix, child, m_o.repair_attempts, m_rng);
    Config c = fixed.valid ? std::move(fixed.config) : random_valid(m_ctx.space(), m_rng);
    auto genes = m_ix.indices(c);
    return {std::move(c), std::move(genes)};
  }

  SearchContext& m_ctx;
  const GeneticOptions& m_o;
  std::size_t m_pop_size;
  detail::search::Rng& m_rng;
  detail::search::Indexer m_ix;
};

}  // namespace

GeneticSearch::GeneticSearch(GeneticOptions options, AnySelectivePredictor model)
    : m_options(std::move(options)), m_model(std::move(model)), m_screening(m_options.screening) {
  if (m_options.children_per_measurement == 0)
    throw invalid_argument_error("strategy \"genetic\": children_per_measurement must be at least 1");
  if (m_options.children_per_measurement == 1 && m_options.screening.enabled)
    throw invalid_argument_error(
        "strategy \"genetic\": screening needs children_per_measurement > 1 (with 1 every child is measured)");
  if (m_options.children_per_measurement > 1 && m_model.empty())
    throw invalid_argument_error(
        "strategy \"genetic\": children_per_measurement > 1 needs a selective model to rank the children");
}

void GeneticSearch::run(SearchContext& ctx) {
  using namespace detail::search;
  Rng rng(m_options.seed);
  RoundScreening screening = m_screening;
  std::optional<ChildChoice> choice;
  if (m_options.children_per_measurement > 1) {
    if (ctx.workers() > 1)
      throw invalid_argument_error(
          "strategy \"genetic\": screened evolution (children_per_measurement > 1) measures a generation at a "
          "time: run it with one worker");
    choice.emplace(m_model, screening, m_options.breeding_batches);
  }
  const Indexer ix(ctx.space());
  const std::size_t pop_size = std::max<std::size_t>(2, m_options.population_size);

  // Both variants start from the same uniform sample, so a seed compares them like for like.
  auto initial = sample_valid(ctx.space(), pop_size, rng());
  if (initial.empty()) return;
  if (m_options.variant == GeneticVariant::kernel_tuner) {
    run_kernel_tuner_variant(ctx, m_options, std::move(initial), rng, choice ? &*choice : nullptr);
    return;
  }
  std::vector<Member> population;
  for (auto& c : initial) {
    auto genes = ix.indices(c);
    population.push_back({std::move(c), std::move(genes)});
  }
  if (ctx.workers() > 1) return AsyncElitist(ctx, m_options, pop_size, rng).run(std::move(population));

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
    const auto breed = [&] {
      const Member& a = tournament();
      const Member& b = tournament();
      auto child = mutate(ix, uniform_crossover(a.genes, b.genes, rng), rate, false, rng);
      auto fixed = repair(ix, child, m_options.repair_attempts, rng);
      return fixed.valid ? std::move(fixed.config) : random_valid(ctx.space(), rng);
    };
    if (choice) {
      // m children per place, new ones only (a measured child would be served from the record
      // and teach nothing), of which the choice measures at most the places.
      std::unordered_set<std::string> seen;
      const auto new_children = [&](std::size_t count) {
        std::vector<Config> children;
        for (std::size_t tries = 0; children.size() < count && tries < 20 * count; ++tries) {
          Config c = breed();
          if (ctx.lookup(c) || !seen.insert(c.key()).second) continue;
          children.push_back(std::move(c));
        }
        return children;
      };
      const std::size_t places = pop_size - next.size();
      for (auto& c : choice->choose(ctx, new_children, places, m_options.children_per_measurement)) {
        auto genes = ix.indices(c);
        next.push_back({std::move(c), std::move(genes)});
      }
    }
    while (next.size() < pop_size && !choice) {
      Config c = breed();
      auto genes = ix.indices(c);
      next.push_back({std::move(c), std::move(genes)});
    }
    population = std::move(next);
  }
}

}  // namespace gpuforecast
