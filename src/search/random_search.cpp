#include "search/random_search.hpp"

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

namespace {
// Several workers: a draw is handed out one configuration per free worker, and the next draw
// leaves out what is measured or still in flight, so no configuration runs twice.
void run_async(SearchContext& ctx, std::mt19937_64& rng) {
  std::vector<Config> drawn;
  std::size_t next = 0, stale_rounds = 0;
  for (;;) {
    while (ctx.free_workers() > 0) {
      if (next == drawn.size()) {
        if (stale_rounds >= 3) break;
        drawn = sample_valid(ctx.space(), std::min<std::size_t>(ctx.remaining(), 4096), rng());
        std::erase_if(drawn, [&](const Config& c) { return ctx.seen(c); });
        next = 0;
        stale_rounds = drawn.empty() ? stale_rounds + 1 : 0;
        continue;
      }
      (void)ctx.submit(drawn[next++]);
    }
    if (ctx.in_flight() == 0) return;
    (void)ctx.wait_any();
  }
}
}  // namespace

void RandomSearch::run(SearchContext& ctx) {
  std::mt19937_64 rng(m_options.seed);
  if (ctx.workers() > 1) return run_async(ctx, rng);
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
