#include "gpuforecast/search/random_search.hpp"

#include <algorithm>
#include <random>

#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/space/enumerate.hpp"

namespace gpuforecast {

const OptionsTable<RandomSearchOptions>& random_search_options_table() {
  static const auto table = [] {
    OptionsTable<RandomSearchOptions> t("strategy \"random\"");
    t.add("batch", &RandomSearchOptions::batch, "configurations handed to the benchmarker per call",
          OptionRange::at_least(1));
    return t;
  }();
  return table;
}

void RandomSearch::run(SearchContext& ctx) {
  std::mt19937_64 rng(m_options.seed);
  const std::size_t batch = std::max<std::size_t>(1, m_options.batch);
  // Under a count budget one draw of exactly that many distinct configs is a uniform sample
  // without replacement; otherwise draw in chunks until nothing new turns up.
  std::size_t stale_rounds = 0;
  while (!ctx.exhausted() && stale_rounds < 3) {
    const std::size_t want = std::min<std::size_t>(ctx.remaining(), 4096);
    auto configs = sample_valid(ctx.space(), want, rng());
    std::erase_if(configs, [&](const Config& c) { return ctx.seen(c); });
    if (configs.empty()) {
      ++stale_rounds;
      continue;
    }
    stale_rounds = 0;
    for (std::size_t i = 0; i < configs.size() && !ctx.exhausted(); i += batch) {
      auto n = std::min(batch, configs.size() - i);
      (void)ctx.evaluate(std::span<const Config>(configs).subspan(i, n));
    }
  }
}

}  // namespace gpuforecast
