#include "search/surrogate_filtered/initial_design.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "gpuforecast/search/search_context.hpp"
#include "search/surrogate_filtered/acquisition.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "search/variation.hpp"

namespace gpuforecast {

const OptionsTable<InitialDesignOptions>& initial_design_options_table() {
  static const auto table = [] {
    OptionsTable<InitialDesignOptions> t("initial design");
    t.add("initial_samples", &InitialDesignOptions::samples, "measurements of the initial design, before the first ranked round",
          OptionRange::at_least(0))
        .add("initial_pool_factor", &InitialDesignOptions::pool_factor,
             "the design is chosen from this many times initial_samples random valid configurations", OptionRange::at_least(1))
        .add("initial_min_distance", &InitialDesignOptions::min_distance,
             "with a model that forecasts from the start: the design's configurations differ pairwise in this many "
             "parameters (relaxed while too few do)",
             OptionRange::at_least(0));
    return t;
  }();
  return table;
}

namespace {

using detail::search::hamming;
using detail::search::Indexer;

// Distance for spreading a design: each parameter's index difference over its range.
double spread_distance(const Indexer& ix, const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
  double d = 0;
  for (std::size_t p = 0; p < a.size(); ++p) {
    const std::size_t levels = ix.levels(p);
    if (levels < 2) continue;
    const double diff = a[p] > b[p] ? static_cast<double>(a[p] - b[p]) : static_cast<double>(b[p] - a[p]);
    d += diff / static_cast<double>(levels - 1);
  }
  return d;
}

// The forecast best of the pool that differ pairwise in min_distance parameters, relaxing the
// distance one step at a time while fewer than n do.
std::vector<Config> forecast_best_spread(const SearchContext& ctx, AnySelectivePredictor& model, const std::vector<Config>& pool,
                                         const std::vector<std::vector<std::size_t>>& genes, std::size_t n,
                                         std::size_t min_distance) {
  std::vector<Candidate> candidates;
  candidates.reserve(pool.size());
  for (const auto& c : pool) candidates.push_back(ctx.candidate(c));
  const auto decisions = model.decide(candidates);
  std::vector<std::size_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return expected_cost(decisions[a]) < expected_cost(decisions[b]);
  });
  std::vector<std::size_t> picked;
  for (std::size_t d = min_distance + 1; d-- > 0 && picked.size() < n;)
    for (std::size_t i : order) {
      if (picked.size() >= n) break;
      if (std::find(picked.begin(), picked.end(), i) != picked.end()) continue;
      const bool far =
          std::all_of(picked.begin(), picked.end(), [&](std::size_t j) { return hamming(genes[i], genes[j]) >= d; });
      if (far) picked.push_back(i);
    }
  std::vector<Config> out;
  for (std::size_t i : picked) out.push_back(pool[i]);
  return out;
}

// Greedy maximin: each next member is the pool point farthest from those already chosen.
std::vector<Config> maximin_spread(const Indexer& ix, const std::vector<Config>& pool,
                                   const std::vector<std::vector<std::size_t>>& genes, std::size_t n) {
  std::vector<Config> out;
  std::vector<double> nearest(pool.size(), std::numeric_limits<double>::infinity());
  std::size_t next = 0;  // the pool is a uniform sample: its first member is a uniform draw
  for (std::size_t k = 0; k < std::min(n, pool.size()); ++k) {
    out.push_back(pool[next]);
    nearest[next] = -1;
    std::size_t far = next;
    for (std::size_t i = 0; i < pool.size(); ++i) {
      if (nearest[i] < 0) continue;
      nearest[i] = std::min(nearest[i], spread_distance(ix, genes[i], genes[next]));
      if (far == next || nearest[i] > nearest[far]) far = i;
    }
    next = far;
  }
  return out;
}

}  // namespace

std::vector<Config> choose_initial_design(const SearchContext& ctx, AnySelectivePredictor& model,
                                          const InitialDesignOptions& options, std::uint64_t pool_seed) {
  const std::size_t n = std::min(options.samples, ctx.remaining());
  const auto pool = sample_valid(ctx.space(), std::max<std::size_t>(n, n * options.pool_factor), pool_seed);
  if (pool.empty()) return {};
  const Indexer ix(ctx.space());
  std::vector<std::vector<std::size_t>> genes;
  genes.reserve(pool.size());
  for (const auto& c : pool) genes.push_back(ix.indices(c));
  if (model.ready()) return forecast_best_spread(ctx, model, pool, genes, n, options.min_distance);
  return maximin_spread(ix, pool, genes, n);
}

}  // namespace gpuforecast
