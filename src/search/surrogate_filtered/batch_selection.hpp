#pragma once
// Which of a round's ranked proposals the surrogate-filtered search measures, in this order:
//   local moves   the forecast best unmeasured neighbour of the best measured configuration (of
//                 the next best once its neighbourhood is measured out): a model that undervalues
//                 one step from the incumbent would otherwise never measure it
//   steady picks  while the optimism is grown, this many picks keep the base optimism, so a
//                 stalled search still refines what it knows
//   exploitation  the best optimistic cost among candidates unlikely to fail, the picks
//                 differing pairwise in at least batch_distance parameters (batch diversity)
//   exploration   a share of deferred candidates (the model is unsure of them), drawn from the
//                 bred proposals only until the search has stalled for global_exploration_after
//                 rounds; at random, or by their optimistic bound
//   fill          by expected cost, when nothing else is left
#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/options_table.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "search/surrogate_filtered/acquisition.hpp"
#include "search/surrogate_filtered/proposals.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct BatchSelectionOptions {
  std::size_t local_moves = 1;
  std::size_t batch_distance = 2;  // 0 or 1: no diversity constraint
  std::size_t steady_picks = 0;
  // Share of a round's measurements for deferred candidates; it grows by half of itself per round
  // without improvement (at most 0.8). 0 by default: the optimistic ranking already measures where
  // the model is unsure, and any share on top of it cost the NVIDIA convolution spaces at 200.
  double exploration_fraction = 0;
  // Deferred candidates drawn at random (true) or by their optimistic bound: the bound keeps
  // exploring next to the known good region, where the model is already least wrong.
  bool explore_at_random = true;
  // Exploration draws from the bred proposals only until the best has not improved for this
  // many rounds, from every proposal after that (0: always from every proposal).
  std::size_t global_exploration_after = 3;
  // Measurements per round for the forecast best unmeasured neighbour of the second basin's
  // centre (proposals' basin_distance), once the best has not improved for basin_after rounds.
  std::size_t basin_moves = 0;
  std::size_t basin_after = 0;
};

[[nodiscard]] const OptionsTable<BatchSelectionOptions>& batch_selection_options_table();

// What a round knows when it selects.
struct RoundState {
  std::size_t measurements = 0;     // to select this round
  std::size_t stagnant_rounds = 0;  // rounds since the best improved
  // Candidates still being measured (several workers): the diverse picks keep batch_distance
  // away from them too, as they do from each other.
  std::span<const Config> in_flight = {};
};

// At most state.measurements of `proposals`, ranked by `decisions` (one per proposal).
[[nodiscard]] std::vector<Config> select_batch(const TuningSpace& space, const Proposals& proposals,
                                               std::span<const Decision> decisions, const RoundState& state,
                                               const OptimismSchedule& optimism, const AcquisitionOptions& acquisition,
                                               const BatchSelectionOptions& options, std::mt19937_64& rng);

}  // namespace gpuforecast
