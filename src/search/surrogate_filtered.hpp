#pragma once
// Surrogate-filtered search (the GPU Forecasters loop; TVM's cost-model-guided evolution),
// composed of five parts, each in search/surrogate_filtered/ with its own options:
//   initial design   the first measurements (spread out, or the prior's best)
//   proposals        each round, many more candidates than it may measure
//   screening        optional: drop the proposals certified as no improvement (a guarantee on
//                    the share of true improvements dropped)
//   acquisition      how a forecast is valued (optimistic cost, with its schedule)
//   batch selection  which ranked proposals are measured (local moves, diversity, exploration)
// A SelectivePredictor forecasts every proposal; after the round's measurements it learns from
// them before the next round. With several workers (an AsyncBenchmarker) a round is chosen
// whenever a worker frees up, as large as the free workers, from what has landed so far; the
// candidates in flight are not proposed again and keep the round's picks away from them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/options_table.hpp"
#include "gpuforecast/core/any_selective_predictor.hpp"
#include "search/surrogate_filtered/acquisition.hpp"
#include "search/surrogate_filtered/batch_selection.hpp"
#include "search/surrogate_filtered/initial_design.hpp"
#include "search/surrogate_filtered/proposals.hpp"
#include "search/surrogate_filtered/screening.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// The strategy's options: its own, and one struct per part. The defaults are the "from scratch"
// preset (a model trained online from the search's own measurements); surrogate_filtered_preset()
// names the other (docs/search.md has the table).
struct SurrogateFilteredOptions {
  std::uint64_t seed = 0;
  // Smaller rounds let the model learn from every few measurements (conv A100 at 50, held-out
  // seeds: 0.809 against 0.775 with 5).
  std::size_t measurements_per_round = 3;
  InitialDesignOptions initial;
  ProposalOptions proposals;
  AcquisitionOptions acquisition;
  BatchSelectionOptions selection;
  ScreeningStageOptions screening;
};

// Every option by its flat name (`optimism`, `initial_samples`, ...), the parts' included.
[[nodiscard]] const OptionsTable<SurrogateFilteredOptions>& surrogate_filtered_options_table();

// The named option sets, in one place:
//   "from-scratch"  the defaults: the model learns from the search's own measurements
//   "pre-trained"   a model that forecasts from the first round (trained on other devices or
//                   kernels): its forecast best as the initial design, more optimism, rounds of 5
// Throws invalid_argument_error naming the presets for any other name.
[[nodiscard]] SurrogateFilteredOptions surrogate_filtered_preset(std::string_view name);
[[nodiscard]] std::vector<std::string> surrogate_filtered_preset_names();

class SurrogateFilteredSearch {
 public:
  // Throws invalid_argument_error when the model is empty, and for bad screening options or a
  // calibration file that cannot be read (named).
  explicit SurrogateFilteredSearch(AnySelectivePredictor model, SurrogateFilteredOptions options = {});
  void run(SearchContext& ctx);
  [[nodiscard]] const SurrogateFilteredOptions& options() const noexcept { return m_options; }

 private:
  void run_async(SearchContext& ctx);
  AnySelectivePredictor m_model;
  SurrogateFilteredOptions m_options;
  RoundScreening m_screening;  // as configured; each run starts from a copy
};

static_assert(SearchStrategy<SurrogateFilteredSearch>);

}  // namespace gpuforecast
