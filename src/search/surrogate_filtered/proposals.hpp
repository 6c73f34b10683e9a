#pragma once
// Proposal generators of the surrogate-filtered search: each round proposes many more
// candidates than it may measure, and the model ranks them. Four generators, in this order:
//   random      uniform draws of valid configurations (random_fraction of the pool)
//   neighbours  every single-parameter change of the best few measured configurations, so no
//               good step next to a good point goes unseen (the local moves pick from these)
//   breeding    mutations and uniform crossovers of parents drawn from the best measured ones
//               (rank-weighted, or by PUCT as in the GPU Forecasters study)
//   whole space every unmeasured configuration, when the valid space is small enough
// Nothing measured and nothing proposed twice.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/options_table.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class SearchContext;

struct ProposalOptions {
  // Candidates proposed per measurement in a round (the study uses 4; more costs forecasts only).
  std::size_t proposals_per_measurement = 100;
  double random_fraction = 0.3;     // share of the pool drawn uniformly from the space
  double crossover_fraction = 0.3;  // share bred by uniform crossover of two parents
  double mutation_rate = 0.25;      // per parameter, to a neighbouring value (at least one moves)
  std::size_t parents = 8;          // parents are drawn from this many best measured configurations
  // Every single-parameter change of this many best configurations joins the proposals.
  std::size_t neighbourhood_parents = 3;
  // PUCT parent choice (as in the study): a parent's score is its quality (best / its time) plus
  // puct_c * prior * sqrt(total expansions) / (1 + its expansions); off: rank-weighted.
  bool puct = false;
  double puct_c = 1.0;
  // When the valid space has at most this many configurations, every unmeasured one is proposed
  // each round besides the bred ones (the model ranks the whole space); 0: never.
  std::size_t whole_space_limit = 20000;
  // A second basin: the best measured configuration that differs from the best in at least this
  // many parameters has its single-parameter changes proposed too (0: none).
  std::size_t basin_distance = 0;
};

[[nodiscard]] const OptionsTable<ProposalOptions>& proposal_options_table();

// One round's proposals, in generator order.
struct Proposals {
  std::vector<Config> configs;
  std::size_t random_end = 0;  // configs[0, random_end): uniform draws
  std::size_t bred_end = 0;    // configs[random_end, bred_end): neighbours and bred; then the whole space
  // Config::key() of each proposed neighbour -> rank of the measured configuration it neighbours.
  std::unordered_map<std::string, std::size_t> neighbour_of;
  std::size_t neighbour_parents = 0;  // ranks 0 .. neighbour_parents - 1 have neighbours here
  // Config::key() of each proposed neighbour of the second basin's centre (basin_distance).
  std::unordered_set<std::string> second_basin;

  [[nodiscard]] bool bred(std::size_t i) const noexcept { return i >= random_end && i < bred_end; }
};

class ProposalGenerator {
 public:
  // Enumerates the valid space once when it is small enough (whole_space_limit).
  ProposalGenerator(const TuningSpace& space, ProposalOptions options);
  // About `measurements` * proposals_per_measurement new configurations.
  [[nodiscard]] Proposals propose(const SearchContext& ctx, std::size_t measurements, std::mt19937_64& rng);
  [[nodiscard]] const ProposalOptions& options() const noexcept { return m_options; }

 private:
  ProposalOptions m_options;
  std::vector<Config> m_whole_space;
  std::unordered_map<std::string, std::size_t> m_expansions;  // PUCT visit counts by Config::key()
};

}  // namespace gpuforecast
