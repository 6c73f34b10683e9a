#include "gpuforecast/search/surrogate_filtered.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "variation.hpp"

namespace gpuforecast {

SurrogateFilteredSearch::SurrogateFilteredSearch(SelectiveModel model, SurrogateFilteredOptions options)
    : m_model(std::move(model)), m_options(options) {
  if (m_model.empty()) throw invalid_argument_error("surrogate-filtered search needs a selective model");
  if (m_options.measurements_per_round == 0) throw invalid_argument_error("measurements_per_round must be >= 1");
}

namespace {

struct Parent {
  Config config;
  std::vector<std::size_t> genes;
  double time_ms = 0;
  std::size_t expansions = 0;
};

// Ranking key of a forecast: its median, inflated by the chance the candidate fails.
double expected_cost(const Decision& d) {
  const double p = std::clamp(d.forecast.p_fail, 0.0, 0.95);
  return d.forecast.median_ms / (1.0 - p);
}

// The expected cost shrunk by the model's own uncertainty: a lower confidence bound that ranks
// a candidate the model is unsure of above an equally forecast one it is sure of.
double optimistic_cost(const Decision& d, double optimism) {
  return expected_cost(d) * std::exp(-optimism * std::max(0.0, d.forecast.spread));
}

double optimistic_bound(const Decision& d) {
  double low = d.interval_low_ms > 0 ? d.interval_low_ms : d.forecast.lower_ms;
  if (!(low > 0)) low = d.forecast.median_ms;
  const double p = std::clamp(d.forecast.p_fail, 0.0, 0.95);
  return low / (1.0 - p);
}

std::size_t hamming(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
  std::size_t d = 0;
  for (std::size_t p = 0; p < a.size(); ++p) d += a[p] != b[p] ? 1 : 0;
  return d;
}

// Distance for spreading a design: each parameter's index difference over its range.
double spread_distance(const search_detail::Indexer& ix, const std::vector<std::size_t>& a,
                       const std::vector<std::size_t>& b) {
  double d = 0;
  for (std::size_t p = 0; p < a.size(); ++p) {
    const std::size_t levels = ix.levels(p);
    if (levels < 2) continue;
    const double diff = a[p] > b[p] ? static_cast<double>(a[p] - b[p]) : static_cast<double>(b[p] - a[p]);
    d += diff / static_cast<double>(levels - 1);
  }
  return d;
}

// How far the optimism is lowered on this space: the standard deviation of the log-runtimes
// the initial design measured, over optimism_reference_spread, within [optimism_floor, 1].
// Where runtimes differ by a few percent, the trees' disagreement is mostly measurement noise.
double measured_optimism_scale(const SearchContext& ctx, const SurrogateFilteredOptions& o) {
  if (!(o.optimism_reference_spread > 0)) return 1.0;
  std::vector<double> logs;
  for (const auto& e : ctx.trace().entries())
    if (e.measurement.ok() && e.measurement.median_ms > 0) logs.push_back(std::log(e.measurement.median_ms));
  if (logs.size() < 3) return 1.0;
  const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / static_cast<double>(logs.size());
  double ss = 0;
  for (double x : logs) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / static_cast<double>(logs.size() - 1));
  return std::clamp(sd / o.optimism_reference_spread, std::min(1.0, o.optimism_floor), 1.0);
}

}  // namespace

void SurrogateFilteredSearch::run(SearchContext& ctx) {
  using namespace search_detail;
  const auto& o = m_options;
  Rng rng(o.seed);
  const Indexer ix(ctx.space());
  std::size_t learned = 0;  // observations already given to the model

  auto learn = [&] {
    const auto& obs = ctx.observations();
    if (learned < obs.size()) {
      m_model.update(std::span<const Observation>(obs).subspan(learned));
      learned = obs.size();
    }
  };

  // Initial design. A model that cannot forecast yet: a spread-out random sample (greedy
  // maximin over a larger random pool), so the first measurements cover the space rather than
  // clump. A model that forecasts from the start (pre-trained on other devices): the forecast
  // best configurations that differ pairwise in at least initial_min_distance parameters, so a
  // prior that is right about what is slow but wrong about which region is fastest on the
  // target still puts a measurement into each promising region.
  if (o.initial_samples > 0) {
    const std::size_t n = std::min(o.initial_samples, ctx.remaining());
    auto pool = sample_valid(ctx.space(), std::max<std::size_t>(n, n * o.initial_pool_factor), rng());
    std::vector<std::vector<std::size_t>> genes;
    genes.reserve(pool.size());
    for (const auto& c : pool) genes.push_back(ix.indices(c));
    std::vector<Config> initial;
    if (m_model.ready() && !pool.empty()) {
      std::vector<Candidate> candidates;
      candidates.reserve(pool.size());
      for (const auto& c : pool) candidates.push_back(ctx.candidate(c));
      const auto decisions = m_model.decide(candidates);
      std::vector<std::size_t> order(pool.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return expected_cost(decisions[a]) < expected_cost(decisions[b]);
      });
      std::vector<std::size_t> picked;
      for (std::size_t d = o.initial_min_distance + 1; d-- > 0 && picked.size() < n;)
        for (std::size_t i : order) {
          if (picked.size() >= n) break;
          if (std::find(picked.begin(), picked.end(), i) != picked.end()) continue;
          const bool far = std::all_of(picked.begin(), picked.end(),
                                       [&](std::size_t j) { return hamming(genes[i], genes[j]) >= d; });
          if (far) picked.push_back(i);
        }
      for (std::size_t i : picked) initial.push_back(pool[i]);
    } else if (!pool.empty()) {
      std::vector<double> nearest(pool.size(), std::numeric_limits<double>::infinity());
      std::size_t next = 0;  // the pool is a uniform sample: its first member is a uniform draw
      for (std::size_t k = 0; k < std::min(n, pool.size()); ++k) {
        initial.push_back(pool[next]);
        nearest[next] = -1;
        std::size_t far = next;
        for (std::size_t i = 0; i < pool.size(); ++i) {
          if (nearest[i] < 0) continue;
          nearest[i] = std::min(nearest[i], spread_distance(ix, genes[i], genes[next]));
          if (far == next || nearest[i] > nearest[far]) far = i;
        }
        next = far;
      }
    }
    (void)ctx.evaluate(initial);
  }
  const double optimism_scale = measured_optimism_scale(ctx, o);

  std::vector<Config> whole_space;
  // Enumerating checks every point of the cartesian product against the constraints: bounded.
  if (o.whole_space_limit > 0 && ctx.space().cartesian_size() <= 64 * static_cast<std::uint64_t>(o.whole_space_limit)) {
    whole_space = enumerate_valid(ctx.space());
    if (whole_space.size() > o.whole_space_limit) whole_space.clear();
  }
  std::unordered_map<std::string, std::size_t> expansions;  // PUCT visit counts by key
  std::size_t stale_rounds = 0;
  std::size_t stagnant_rounds = 0;  // rounds since the best improved
  while (!ctx.exhausted()) {
    learn();
    const std::size_t m = std::min(o.measurements_per_round, ctx.remaining());

    // Parents: the best measured configurations.
    std::vector<Parent> parents;
    {
      std::vector<const TraceEntry*> ok;
      for (const auto& e : ctx.trace().entries())
        if (e.measurement.ok()) ok.push_back(&e);
      std::sort(ok.begin(), ok.end(), [](auto* a, auto* b) { return a->measurement.median_ms < b->measurement.median_ms; });
      for (std::size_t i = 0; i < ok.size() && parents.size() < std::max<std::size_t>(1, o.parents); ++i) {
        if (!ctx.space().contains(ok[i]->config)) continue;
        auto it = expansions.find(ok[i]->config.key());
        parents.push_back({ok[i]->config, ix.indices(ok[i]->config), ok[i]->measurement.median_ms,
                           it == expansions.end() ? 0 : it->second});
      }
    }
    auto pick_parent = [&]() -> Parent& {
      if (o.puct) {
        // Quality in (0, 1], uniform prior, visit counts: argmax of the PUCT score.
        std::size_t total = 0;
        for (const auto& p : parents) total += p.expansions;
        const double prior = 1.0 / static_cast<double>(parents.size());
        std::size_t best = 0;
        double best_score = -1;
        for (std::size_t i = 0; i < parents.size(); ++i) {
          const double q = parents[0].time_ms / parents[i].time_ms;
          const double u = o.puct_c * prior * std::sqrt(static_cast<double>(total) + 1.0) /
                           (1.0 + static_cast<double>(parents[i].expansions));
          if (q + u > best_score) best_score = q + u, best = i;
        }
        return parents[best];
      }
      // Rank-weighted: parent i with weight 1 / (i + 1).
      std::vector<double> w(parents.size());
      for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0 / static_cast<double>(i + 1);
      return parents[std::discrete_distribution<std::size_t>(w.begin(), w.end())(rng)];
    };

    // Proposals.
    const std::size_t pool = std::max<std::size_t>(m * o.proposals_per_measurement, m);
    std::vector<Config> proposals;
    std::unordered_set<std::string> proposed;
    auto propose = [&](Config c) {
      if (ctx.seen(c)) return;
      auto key = c.key();
      if (proposed.insert(std::move(key)).second) proposals.push_back(std::move(c));
    };
    const bool have_parents = !parents.empty();
    const std::size_t n_random = have_parents ? static_cast<std::size_t>(std::ceil(o.random_fraction * static_cast<double>(pool))) : pool;
    const std::size_t n_cross = have_parents && parents.size() > 1
                                    ? static_cast<std::size_t>(o.crossover_fraction * static_cast<double>(pool))
                                    : 0;
    for (auto& c : sample_valid(ctx.space(), n_random, rng())) propose(std::move(c));
    const std::size_t random_end = proposals.size();  // proposals before this are uniform draws
    // Every single-parameter change of the best few: the model picks the local moves worth
    // measuring, so no good step next to a good point goes unseen.
    // The incumbent's unmeasured neighbours, by parent rank (local moves, below).
    std::unordered_map<std::string, std::size_t> neighbour_of;
    for (std::size_t p = 0; p < std::min(o.neighbourhood_parents, parents.size()); ++p)
      for (auto& c : hamming_neighbours(ctx.space(), parents[p].config)) {
        neighbour_of.emplace(c.key(), p);
        propose(std::move(c));
      }
    if (have_parents) {
      std::size_t attempts = 0;
      const std::size_t target = proposals.size() + (pool - std::min(pool, n_random));
      while (proposals.size() < target && attempts < 4 * pool) {
        ++attempts;
        Parent& a = pick_parent();
        ++a.expansions;
        ++expansions[a.config.key()];
        std::vector<std::size_t> child;
        if (attempts <= n_cross) {
          Parent& b = pick_parent();
          child = mutate(ix, uniform_crossover(a.genes, b.genes, rng), o.mutation_rate / 2, false, rng);
        } else {
          child = mutate(ix, a.genes, o.mutation_rate, true, rng);
        }
        auto fixed = repair(ix, std::move(child), 8, rng);
        if (fixed.valid) propose(std::move(fixed.config));
      }
    }
    const std::size_t bred_end = proposals.size();  // proposals from here on: the rest of the space
    for (const auto& c : whole_space) propose(c);
    if (proposals.empty()) {
      if (++stale_rounds > 3) return;  // nothing new left to propose: the space is measured out
      continue;
    }
    stale_rounds = 0;

    std::vector<Config> chosen;
    if (!m_model.ready()) {
      std::shuffle(proposals.begin(), proposals.end(), rng);
      proposals.resize(std::min(proposals.size(), m));
      chosen = std::move(proposals);
    } else {
      std::vector<Candidate> candidates;
      candidates.reserve(proposals.size());
      for (const auto& c : proposals) candidates.push_back(ctx.candidate(c));
      auto decisions = m_model.decide(candidates);
      if (decisions.size() != candidates.size())
        throw error("selective model returned a wrong number of decisions");
      std::vector<std::size_t> order(proposals.size());
      std::iota(order.begin(), order.end(), 0);
      std::vector<char> taken(proposals.size(), 0);
        // Rounds without improvement shift the round toward exploration.
      const double share = std::min(0.8, o.exploration_fraction * (1.0 + static_cast<double>(stagnant_rounds) / 2.0));
      const std::size_t n_explore =
          m >= 2 ? static_cast<std::size_t>(std::floor(share * static_cast<double>(m) + 0.5)) : 0;
      // Exploitation: the best (optimistic) expected cost among candidates unlikely to fail.
      const double base_optimism = o.optimism * optimism_scale;
      double optimism = base_optimism * (1.0 + o.optimism_growth * static_cast<double>(stagnant_rounds));
      if (o.optimism_max > 0) optimism = std::min(optimism, std::max(base_optimism, o.optimism_max * optimism_scale));
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return optimistic_cost(decisions[a], optimism) < optimistic_cost(decisions[b], optimism);
      });
      // Local moves: the forecast best unmeasured neighbour of the best measured configuration
      // (of the next best once its neighbourhood is measured out). A model that undervalues one
      // step from the incumbent would otherwise never measure it; this way every neighbourhood
      // of a stuck incumbent is eventually measured, in the model's order.
      std::size_t n_local = std::min(o.local_moves, m - std::min(m, n_explore));
      for (std::size_t p = 0; p < std::min(o.neighbourhood_parents, parents.size()) && n_local > 0; ++p)
        for (std::size_t i : order) {
          if (n_local == 0) break;
          auto it = neighbour_of.find(proposals[i].key());
          if (it == neighbour_of.end() || it->second != p || taken[i]) continue;
          if (decisions[i].forecast.p_fail > o.max_p_fail) continue;
          chosen.push_back(proposals[i]);
          taken[i] = 1;
          --n_local;
        }
      std::vector<std::vector<std::size_t>> picked_genes;
      for (const auto& c : chosen) picked_genes.push_back(ix.indices(c));
      // Batch diversity: the round's picks differ pairwise in batch_distance parameters.
      auto crowds = [&](const std::vector<std::size_t>& g) {
        return std::any_of(picked_genes.begin(), picked_genes.end(),
                           [&](const auto& h) { return hamming(g, h) < o.batch_distance; });
      };
      if (optimism != base_optimism && o.steady_picks > 0) {
        // While the optimism is grown, some picks keep the base optimism: a stalled search
        // still refines what it knows while the rest of the round looks where the model is unsure.
        std::vector<std::size_t> steady = order;
        std::sort(steady.begin(), steady.end(), [&](std::size_t a, std::size_t b) {
          return optimistic_cost(decisions[a], base_optimism) < optimistic_cost(decisions[b], base_optimism);
        });
        std::size_t n_steady = o.steady_picks;
        for (std::size_t i : steady) {
          if (n_steady == 0 || chosen.size() + n_explore >= m) break;
          if (taken[i] || decisions[i].forecast.p_fail > o.max_p_fail) continue;
          const auto g = ix.indices(proposals[i]);
          if (o.batch_distance > 1 && crowds(g)) continue;
          picked_genes.push_back(g);
          chosen.push_back(proposals[i]);
          taken[i] = 1;
          --n_steady;
        }
      }
      for (std::size_t pass = 0; pass < 2; ++pass)
        for (std::size_t i : order) {
          if (chosen.size() + n_explore >= m) break;
          if (taken[i] || decisions[i].forecast.p_fail > o.max_p_fail) continue;
          if (pass == 0 && o.batch_distance > 1) {
            const auto g = ix.indices(proposals[i]);
            if (crowds(g)) continue;
            picked_genes.push_back(g);
          }
          chosen.push_back(proposals[i]);
          taken[i] = 1;
        }
      // Exploration: deferred candidates with the best optimistic bound, or drawn at random;
      // from the bred ones only until the search has stalled for global_exploration_after rounds.
      const bool bred_only = stagnant_rounds < o.global_exploration_after;
      if (o.explore_at_random) {
        std::shuffle(order.begin(), order.end(), rng);
      } else {
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
          return optimistic_bound(decisions[a]) < optimistic_bound(decisions[b]);
        });
      }
      for (std::size_t i : order)
        if (chosen.size() < m && !taken[i] && decisions[i].defer && (!bred_only || (i >= random_end && i < bred_end)))
          chosen.push_back(proposals[i]), taken[i] = 1;
      // Nothing deferred (or everything likely to fail): fill by expected cost.
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return expected_cost(decisions[a]) < expected_cost(decisions[b]);
      });
      for (std::size_t i : order)
        if (chosen.size() < m && !taken[i]) chosen.push_back(proposals[i]), taken[i] = 1;
    }
    const double best_before = ctx.best() ? ctx.best()->best_ms : std::numeric_limits<double>::infinity();
    (void)ctx.evaluate(chosen);
    const double best_after = ctx.best() ? ctx.best()->best_ms : std::numeric_limits<double>::infinity();
    stagnant_rounds = best_after < best_before ? 0 : stagnant_rounds + 1;
  }
  learn();
}

}  // namespace gpuforecast
