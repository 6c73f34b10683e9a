#pragma once
// Random search: distinct valid configurations drawn uniformly until the budget ends.
// The baseline every other strategy must beat. With several workers (an AsyncBenchmarker) each
// free worker gets the next draw at once, never one already measured or in flight.
#include <cstdint>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/options_table.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct RandomSearchOptions {
  std::uint64_t seed = 0;
  // Configurations handed to the context per call: 1 keeps the trace exactly one draw per
  // measurement under a seconds budget; larger batches suit a benchmarker that measures in bulk.
  std::size_t batch = 1;
};

// `batch` by name, for --option.
[[nodiscard]] const OptionsTable<RandomSearchOptions>& random_search_options_table();

class RandomSearch {
 public:
  explicit RandomSearch(RandomSearchOptions options = {}) : m_options(options) {}
  void run(SearchContext& ctx);
  [[nodiscard]] const RandomSearchOptions& options() const noexcept { return m_options; }

 private:
  RandomSearchOptions m_options;
};

static_assert(SearchStrategy<RandomSearch>);

}  // namespace gpuforecast
