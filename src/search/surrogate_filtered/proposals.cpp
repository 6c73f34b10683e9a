#include "search/surrogate_filtered/proposals.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_set>

#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "search/variation.hpp"

namespace gpuforecast {

const OptionsTable<ProposalOptions>& proposal_options_table() {
  static const auto table = [] {
    OptionsTable<ProposalOptions> t("proposals");
    t.add("proposals_per_measurement", &ProposalOptions::proposals_per_measurement,
          "candidates proposed per measurement of a round (the model ranks them all)", OptionRange::at_least(1))
        .add("random_fraction", &ProposalOptions::random_fraction, "share of the proposals drawn uniformly from the space",
             OptionRange::between(0, 1))
        .add("crossover_fraction", &ProposalOptions::crossover_fraction,
             "share of the proposals bred by uniform crossover of two parents", OptionRange::between(0, 1))
        .add("mutation_rate", &ProposalOptions::mutation_rate,
             "per parameter, the chance a bred child moves it to a neighbouring value", OptionRange::between(0, 1))
        .add("parents", &ProposalOptions::parents, "parents are drawn from this many best measured configurations",
             OptionRange::at_least(1))
        .add("neighbourhood_parents", &ProposalOptions::neighbourhood_parents,
             "every single-parameter change of this many best measured configurations is proposed", OptionRange::at_least(0))
        .add("puct", &ProposalOptions::puct, "choose parents by PUCT (as in the GPU Forecasters study) instead of by rank")
        .add("puct_c", &ProposalOptions::puct_c, "PUCT's exploration constant", OptionRange::at_least(0))
        .add("whole_space_limit", &ProposalOptions::whole_space_limit,
             "valid spaces of at most this many configurations are proposed whole each round (0: never)",
             OptionRange::at_least(0))
        .add("basin_distance", &ProposalOptions::basin_distance,
             "the best measured configuration this many parameters from the best is a second centre of neighbours "
             "(0: none)",
             OptionRange::at_least(0));
    return t;
  }();
  return table;
}

namespace {

using detail::search::Indexer;
using Rng = std::mt19937_64;

struct Parent {
  Config config;
  std::vector<std::size_t> genes;
  double time_ms = 0;
  std::size_t expansions = 0;
};

// The best measured configurations, fastest first, with their PUCT visit counts.
std::vector<Parent> best_measured(const SearchContext& ctx, const Indexer& ix, std::size_t count,
                                  const std::unordered_map<std::string, std::size_t>& expansions) {
  std::vector<const TraceEntry*> ok;
  for (const auto& e : ctx.trace().entries())
    if (e.measurement.ok()) ok.push_back(&e);
  std::sort(ok.begin(), ok.end(), [](auto* a, auto* b) { return a->measurement.median_ms < b->measurement.median_ms; });
  std::vector<Parent> parents;
  for (std::size_t i = 0; i < ok.size() && parents.size() < std::max<std::size_t>(1, count); ++i) {
    if (!ctx.space().contains(ok[i]->config)) continue;
    auto it = expansions.find(ok[i]->config.key());
    parents.push_back({ok[i]->config, ix.indices(ok[i]->config), ok[i]->measurement.median_ms,
                       it == expansions.end() ? 0 : it->second});
  }
  return parents;
}

Parent& pick_parent(std::vector<Parent>& parents, const ProposalOptions& o, Rng& rng) {
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
}

// Collects proposals: nothing measured, nothing twice.
class ProposalSink {
 public:
  ProposalSink(const SearchContext& ctx, Proposals& out) : m_ctx(ctx), m_out(out) {}
  void add(Config c) {
    if (m_ctx.seen(c)) return;
    auto key = c.key();
    if (m_keys.insert(std::move(key)).second) m_out.configs.push_back(std::move(c));
  }
  [[nodiscard]] std::size_t size() const noexcept { return m_out.configs.size(); }

 private:
  const SearchContext& m_ctx;
  Proposals& m_out;
  std::unordered_set<std::string> m_keys;
};

void propose_random(const SearchContext& ctx, std::size_t count, Rng& rng, ProposalSink& sink) {
  for (auto& c : sample_valid(ctx.space(), count, rng())) sink.add(std::move(c));
}

void propose_neighbours(const SearchContext& ctx, const std::vector<Parent>& parents, std::size_t count, Proposals& out,
                        ProposalSink& sink) {
  out.neighbour_parents = std::min(count, parents.size());
  for (std::size_t p = 0; p < out.neighbour_parents; ++p)
    for (auto& c : hamming_neighbours(ctx.space(), parents[p].config)) {
      out.neighbour_of.emplace(c.key(), p);
      sink.add(std::move(c));
    }
}

// The fastest measured configuration at least `distance` parameters from `best`.
std::optional<Config> second_basin_centre(const SearchContext& ctx, const Indexer& ix, const Parent& best,
                                          std::size_t distance) {
  const TraceEntry* centre = nullptr;
  for (const auto& e : ctx.trace().entries()) {
    if (!e.measurement.ok() || !ctx.space().contains(e.config)) continue;
    if (centre && e.measurement.median_ms >= centre->measurement.median_ms) continue;
    if (detail::search::hamming(ix.indices(e.config), best.genes) >= distance) centre = &e;
  }
  if (!centre) return std::nullopt;
  return centre->config;
}

void propose_second_basin(const SearchContext& ctx, const Config& centre, Proposals& out, ProposalSink& sink) {
  for (auto& c : hamming_neighbours(ctx.space(), centre)) {
    if (ctx.seen(c)) continue;
    out.second_basin.insert(c.key());
    sink.add(std::move(c));
  }
}

// `count` children: the first n_cross by crossover of two parents, the rest by mutation of one;
// a child that violates a constraint is repaired by further mutation or dropped.
void propose_bred(const Indexer& ix, std::vector<Parent>& parents, std::size_t count, std::size_t n_cross,
                  std::size_t max_attempts, const ProposalOptions& o, Rng& rng,
                  std::unordered_map<std::string, std::size_t>& expansions, ProposalSink& sink) {
  std::size_t attempts = 0;
  const std::size_t target = sink.size() + count;
  while (sink.size() < target && attempts < max_attempts) {
    ++attempts;
    Parent& a = pick_parent(parents, o, rng);
    ++a.expansions;
    ++expansions[a.config.key()];
    std::vector<std::size_t> child;
    if (attempts <= n_cross) {
      Parent& b = pick_parent(parents, o, rng);
      child = detail::search::mutate(ix, detail::search::uniform_crossover(a.genes, b.genes, rng), o.mutation_rate / 2,
                                    false, rng);
    } else {
      child = detail::search::mutate(ix, a.genes, o.mutation_rate, true, rng);
    }
    auto fixed = detail::search::repair(ix, std::move(child), 8, rng);
    if (fixed.valid) sink.add(std::move(fixed.config));
  }
}

}  // namespace

ProposalGenerator::ProposalGenerator(const TuningSpace& space, ProposalOptions options) : m_options(options) {
  // Enumerating checks every point of the cartesian product against the constraints: bounded.
  const auto limit = static_cast<std::uint64_t>(m_options.whole_space_limit);
  if (limit > 0 && space.cartesian_size() <= 64 * limit) {
    m_whole_space = enumerate_valid(space);
    if (m_whole_space.size() > limit) m_whole_space.clear();
  }
}

Proposals ProposalGenerator::propose(const SearchContext& ctx, std::size_t measurements, Rng& rng) {
  const auto& o = m_options;
  const Indexer ix(ctx.space());
  auto parents = best_measured(ctx, ix, o.parents, m_expansions);
  const std::size_t pool = std::max<std::size_t>(measurements * o.proposals_per_measurement, measurements);
  const bool have_parents = !parents.empty();
  const std::size_t n_random =
      have_parents ? static_cast<std::size_t>(std::ceil(o.random_fraction * static_cast<double>(pool))) : pool;
  const std::size_t n_cross =
      have_parents && parents.size() > 1 ? static_cast<std::size_t>(o.crossover_fraction * static_cast<double>(pool)) : 0;

  Proposals out;
  ProposalSink sink(ctx, out);
  propose_random(ctx, n_random, rng, sink);
  out.random_end = sink.size();
  propose_neighbours(ctx, parents, o.neighbourhood_parents, out, sink);
  if (have_parents && o.basin_distance > 0)
    if (auto centre = second_basin_centre(ctx, ix, parents.front(), o.basin_distance))
      propose_second_basin(ctx, *centre, out, sink);
  if (have_parents)
    propose_bred(ix, parents, pool - std::min(pool, n_random), n_cross, 4 * pool, o, rng, m_expansions, sink);
  out.bred_end = sink.size();
  for (const auto& c : m_whole_space) sink.add(c);
  return out;
}

}  // namespace gpuforecast
