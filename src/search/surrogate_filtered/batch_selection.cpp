#include "search/surrogate_filtered/batch_selection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "search/variation.hpp"

namespace gpuforecast {

const OptionsTable<BatchSelectionOptions>& batch_selection_options_table() {
  static const auto table = [] {
    OptionsTable<BatchSelectionOptions> t("batch selection");
    t.add("local_moves", &BatchSelectionOptions::local_moves,
          "measurements per round for the forecast best unmeasured neighbour of the best measured configuration",
          OptionRange::at_least(0))
        .add("batch_distance", &BatchSelectionOptions::batch_distance,
             "a round's exploitation picks differ pairwise in at least this many parameters (0 or 1: no constraint)",
             OptionRange::at_least(0))
        .add("steady_picks", &BatchSelectionOptions::steady_picks,
             "while the optimism is grown, this many picks per round keep the base optimism", OptionRange::at_least(0))
        .add("exploration_fraction", &BatchSelectionOptions::exploration_fraction,
             "share of a round for deferred candidates; grows by half of itself per round without improvement (at most "
             "0.8)",
             OptionRange::between(0, 1))
        .add("explore_at_random", &BatchSelectionOptions::explore_at_random,
             "draw deferred candidates at random (else by their optimistic bound)")
        .add("global_exploration_after", &BatchSelectionOptions::global_exploration_after,
             "explore among bred proposals only until the best has not improved for this many rounds (0: always global)",
             OptionRange::at_least(0))
        .add("basin_moves", &BatchSelectionOptions::basin_moves,
             "measurements per round for the forecast best unmeasured neighbour of the second basin's centre",
             OptionRange::at_least(0))
        .add("basin_after", &BatchSelectionOptions::basin_after,
             "the second basin's moves wait until the best has not improved for this many rounds", OptionRange::at_least(0));
    return t;
  }();
  return table;
}

namespace {

using detail::search::hamming;

constexpr std::size_t no_parent = std::numeric_limits<std::size_t>::max();

// The round being assembled: what is chosen, what is taken, and how far apart the picks are.
class Batch {
 public:
  Batch(const TuningSpace& space, const Proposals& proposals, std::size_t distance)
      : m_ix(space), m_proposals(proposals), m_taken(proposals.configs.size(), 0), m_distance(distance) {}

  void take(std::size_t i) {
    chosen.push_back(m_proposals.configs[i]);
    m_taken[i] = 1;
  }
  // Takes i unless it is within batch_distance of an earlier diverse pick.
  bool take_diverse(std::size_t i) {
    auto g = m_ix.indices(m_proposals.configs[i]);
    if (std::any_of(m_genes.begin(), m_genes.end(), [&](const auto& h) { return hamming(g, h) < m_distance; }))
      return false;
    m_genes.push_back(std::move(g));
    take(i);
    return true;
  }
  // The picks so far constrain the diverse ones that follow.
  void spread_from_chosen() { spread_from(chosen); }
  void spread_from(std::span<const Config> configs) {
    for (const auto& c : configs) m_genes.push_back(m_ix.indices(c));
  }
  [[nodiscard]] bool taken(std::size_t i) const { return m_taken[i] != 0; }
  [[nodiscard]] bool diverse() const { return m_distance > 1; }

  std::vector<Config> chosen;

 private:
  detail::search::Indexer m_ix;
  const Proposals& m_proposals;
  std::vector<char> m_taken;
  std::vector<std::vector<std::size_t>> m_genes;
  std::size_t m_distance;
};

void sort_by(std::vector<std::size_t>& order, auto key) {
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
}

// Measurements of the round reserved for deferred candidates.
std::size_t exploration_share(const BatchSelectionOptions& o, const RoundState& s) {
  const double share = std::min(0.8, o.exploration_fraction * (1.0 + static_cast<double>(s.stagnant_rounds) / 2.0));
  return s.measurements >= 2 ? static_cast<std::size_t>(std::floor(share * static_cast<double>(s.measurements) + 0.5))
                             : 0;
}

// The forecast best unmeasured neighbours of the best measured configurations, by parent rank.
void pick_local_moves(Batch& batch, const std::vector<std::size_t>& order, const std::vector<std::size_t>& parent_of,
                      std::size_t parents, std::size_t count, std::span<const Decision> decisions, double max_p_fail) {
  for (std::size_t p = 0; p < parents && count > 0; ++p)
    for (std::size_t i : order) {
      if (count == 0) break;
      if (parent_of[i] != p || batch.taken(i)) continue;
      if (decisions[i].forecast.p_fail > max_p_fail) continue;
      batch.take(i);
      --count;
    }
}

void pick_steady(Batch& batch, std::vector<std::size_t> order, std::size_t count, std::size_t limit,
                 std::span<const Decision> decisions, double base_optimism, double max_p_fail) {
  sort_by(order, [&](std::size_t i) { return optimistic_cost(decisions[i], base_optimism); });
  for (std::size_t i : order) {
    if (count == 0 || batch.chosen.size() >= limit) break;
    if (batch.taken(i) || decisions[i].forecast.p_fail > max_p_fail) continue;
    if (batch.diverse() ? batch.take_diverse(i) : (batch.take(i), true)) --count;
  }
}

// Best optimistic cost first: a diverse pass, then a pass without the distance constraint.
void pick_exploitation(Batch& batch, const std::vector<std::size_t>& order, std::size_t limit,
                       std::span<const Decision> decisions, double max_p_fail) {
  for (std::size_t pass = 0; pass < 2; ++pass)
    for (std::size_t i : order) {
      if (batch.chosen.size() >= limit) break;
      if (batch.taken(i) || decisions[i].forecast.p_fail > max_p_fail) continue;
      if (pass == 0 && batch.diverse()) batch.take_diverse(i);
      else batch.take(i);
    }
}

void pick_exploration(Batch& batch, std::vector<std::size_t>& order, const Proposals& proposals, std::size_t limit,
                      std::span<const Decision> decisions, bool bred_only, bool at_random, std::mt19937_64& rng) {
  if (at_random) std::shuffle(order.begin(), order.end(), rng);
  else sort_by(order, [&](std::size_t i) { return optimistic_bound(decisions[i]); });
  for (std::size_t i : order)
    if (batch.chosen.size() < limit && !batch.taken(i) && decisions[i].defer && (!bred_only || proposals.bred(i)))
      batch.take(i);
}

void fill_by_expected_cost(Batch& batch, std::vector<std::size_t>& order, std::size_t limit,
                           std::span<const Decision> decisions) {
  sort_by(order, [&](std::size_t i) { return expected_cost(decisions[i]); });
  for (std::size_t i : order)
    if (batch.chosen.size() < limit && !batch.taken(i)) batch.take(i);
}

}  // namespace

std::vector<Config> select_batch(const TuningSpace& space, const Proposals& proposals, std::span<const Decision> decisions,
                                 const RoundState& state, const OptimismSchedule& optimism,
                                 const AcquisitionOptions& acquisition, const BatchSelectionOptions& o,
                                 std::mt19937_64& rng) {
  const std::size_t m = state.measurements;
  const std::size_t n_explore = exploration_share(o, state);
  const double base = optimism.base();
  const double current = optimism.at(state.stagnant_rounds);

  std::vector<std::size_t> order(proposals.configs.size());
  std::iota(order.begin(), order.end(), 0);
  sort_by(order, [&](std::size_t i) { return optimistic_cost(decisions[i], current); });
  std::vector<std::size_t> parent_of(proposals.configs.size(), no_parent);
  for (std::size_t i = 0; i < parent_of.size(); ++i)
    if (auto it = proposals.neighbour_of.find(proposals.configs[i].key()); it != proposals.neighbour_of.end())
      parent_of[i] = it->second;

  const std::size_t exploit_limit = m - std::min(m, n_explore);
  Batch batch(space, proposals, o.batch_distance);
  pick_local_moves(batch, order, parent_of, proposals.neighbour_parents, std::min(o.local_moves, exploit_limit), decisions,
                   acquisition.max_p_fail);
  if (!proposals.second_basin.empty() && o.basin_moves > 0 && state.stagnant_rounds >= o.basin_after) {
    const std::size_t moves = std::min(o.basin_moves, exploit_limit - std::min(exploit_limit, batch.chosen.size()));
    std::vector<std::size_t> in_basin(parent_of.size(), no_parent);
    for (std::size_t i = 0; i < in_basin.size(); ++i)
      if (proposals.second_basin.count(proposals.configs[i].key())) in_basin[i] = 0;
    pick_local_moves(batch, order, in_basin, 1, moves, decisions, acquisition.max_p_fail);
  }
  batch.spread_from_chosen();
  batch.spread_from(state.in_flight);
  if (current != base && o.steady_picks > 0)
    pick_steady(batch, order, o.steady_picks, exploit_limit, decisions, base, acquisition.max_p_fail);
  pick_exploitation(batch, order, exploit_limit, decisions, acquisition.max_p_fail);
  pick_exploration(batch, order, proposals, m, decisions, state.stagnant_rounds < o.global_exploration_after,
                   o.explore_at_random, rng);
  fill_by_expected_cost(batch, order, m, decisions);
  return std::move(batch.chosen);
}

}  // namespace gpuforecast
