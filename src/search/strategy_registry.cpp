#include "gpuforecast/search/strategy_registry.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <mutex>
#include <set>
#include <string>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/search/genetic.hpp"
#include "gpuforecast/search/random_search.hpp"
#include "gpuforecast/search/surrogate_filtered.hpp"
#include "online_selective.hpp"

namespace gpuforecast {

namespace {

struct Entry {
  std::string description;
  StrategyFactory factory;
};

// Reads options by field name; every option given must be consumed by the strategy.
class OptionReader {
 public:
  OptionReader(std::string strategy, const std::map<std::string, std::string>& options)
      : m_strategy(std::move(strategy)), m_options(options) {}

  template <class T>
  void read(const char* name, T& field) {
    m_known.insert(name);
    auto it = m_options.find(name);
    if (it == m_options.end()) return;
    const std::string& s = it->second;
    if constexpr (std::is_same_v<T, std::string>) {
      field = s;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (s == "1" || s == "true" || s == "on") field = true;
      else if (s == "0" || s == "false" || s == "off") field = false;
      else fail(name, s);
    } else {
      T v{};
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || p != s.data() + s.size()) fail(name, s);
      field = v;
    }
  }
  void finish() const {
    for (const auto& [k, v] : m_options)
      if (!m_known.count(k)) {
        std::string known;
        for (const auto& n : m_known) known += (known.empty() ? "" : ", ") + n;
        throw invalid_argument_error(fmt::format("strategy \"{}\" has no option \"{}\" (options: {})", m_strategy, k, known));
      }
  }

 private:
  [[noreturn]] void fail(const char* name, const std::string& value) const {
    throw invalid_argument_error(fmt::format("strategy \"{}\": option {}={} does not parse", m_strategy, name, value));
  }
  std::string m_strategy;
  const std::map<std::string, std::string>& m_options;
  std::set<std::string> m_known;
};

AnyStrategy make_random(const StrategySettings& s) {
  RandomSearchOptions o;
  o.seed = s.seed;
  OptionReader r("random", s.options);
  r.read("batch", o.batch);
  r.finish();
  return RandomSearch(o);
}

AnyStrategy make_genetic(const StrategySettings& s) {
  GeneticOptions o;
  o.seed = s.seed;
  OptionReader r("genetic", s.options);
  std::string variant = "elitist";
  r.read("variant", variant);
  if (variant == "kernel_tuner") o.variant = GeneticVariant::kernel_tuner;
  else if (variant != "elitist")
    throw invalid_argument_error(
        fmt::format("strategy \"genetic\": option variant={} is not one of elitist, kernel_tuner", variant));
  r.read("population_size", o.population_size);
  r.read("tournament_size", o.tournament_size);
  r.read("mutation_rate", o.mutation_rate);
  r.read("elites", o.elites);
  r.read("repair_attempts", o.repair_attempts);
  r.read("max_generations", o.max_generations);
  r.finish();
  return GeneticSearch(o);
}

AnyStrategy make_surrogate_filtered(const StrategySettings& s) {
  SurrogateFilteredOptions o;
  o.seed = s.seed;
  const bool pretrained = s.model_factory || !s.model_path.empty();
  if (pretrained) {
    // A pre-trained model ranks from the first round: its forecast best configurations that
    // differ pairwise in 3 or more parameters, from (nearly) the whole space.
    o.initial_samples = 15;
    o.initial_pool_factor = 200;
    // Its corrected forecast is unsure where the target differs from the devices it was
    // trained on; more optimism measures there sooner (pre-trained conv A100 at 50 measurements,
    // held-out seeds: 0.919 against 0.887 with the from-scratch 1).
    o.optimism = 1.5;
    // Rounds of 5 with 2 steady picks: rounds of 3 without them measured 0.869 against 0.880
    // (A100) and 0.987 against 0.993 (A6000) pre-trained at 50, seeds 1-20.
    o.measurements_per_round = 5;
    o.steady_picks = 2;
    // Its initial design is the prior's best forecasts, close together in runtime whatever the
    // space: their spread is no measure of the space's noise.
    o.optimism_reference_spread = 0;
  }
  OptionReader r("surrogate", s.options);
  r.read("initial_samples", o.initial_samples);
  r.read("initial_pool_factor", o.initial_pool_factor);
  r.read("initial_min_distance", o.initial_min_distance);
  r.read("measurements_per_round", o.measurements_per_round);
  r.read("proposals_per_measurement", o.proposals_per_measurement);
  r.read("random_fraction", o.random_fraction);
  r.read("crossover_fraction", o.crossover_fraction);
  r.read("mutation_rate", o.mutation_rate);
  r.read("parents", o.parents);
  r.read("neighbourhood_parents", o.neighbourhood_parents);
  r.read("local_moves", o.local_moves);
  r.read("batch_distance", o.batch_distance);
  r.read("exploration_fraction", o.exploration_fraction);
  r.read("explore_at_random", o.explore_at_random);
  r.read("global_exploration_after", o.global_exploration_after);
  r.read("puct", o.puct);
  r.read("puct_c", o.puct_c);
  r.read("max_p_fail", o.max_p_fail);
  r.read("optimism", o.optimism);
  r.read("optimism_growth", o.optimism_growth);
  r.read("optimism_max", o.optimism_max);
  r.read("steady_picks", o.steady_picks);
  r.read("optimism_reference_spread", o.optimism_reference_spread);
  r.read("optimism_floor", o.optimism_floor);
  r.read("whole_space_limit", o.whole_space_limit);
  r.finish();
  SelectiveModel model = s.model_factory ? s.model_factory() : search_detail::default_selective_model(s);
  return SurrogateFilteredSearch(std::move(model), o);
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, Entry, std::less<>>& registry() {
  static std::map<std::string, Entry, std::less<>> r{
      {"random", {"uniform random sampling of valid configurations", make_random}},
      {"genetic", {"genetic algorithm (tournament selection, uniform crossover, neighbour mutation)", make_genetic}},
      {"surrogate", {"surrogate-filtered search: propose many, measure the forecast best and some uncertain ones",
                     make_surrogate_filtered}},
  };
  return r;
}

}  // namespace

void register_strategy(std::string name, std::string description, StrategyFactory factory) {
  std::lock_guard lock(registry_mutex());
  registry()[std::move(name)] = {std::move(description), std::move(factory)};
}

AnyStrategy make_strategy(std::string_view name, const StrategySettings& settings) {
  StrategyFactory factory;
  {
    std::lock_guard lock(registry_mutex());
    auto it = registry().find(name);
    if (it == registry().end()) {
      std::string names;
      for (const auto& [n, e] : registry()) names += (names.empty() ? "" : ", ") + n;
      throw invalid_argument_error(fmt::format("unknown search strategy \"{}\" (known: {})", name, names));
    }
    factory = it->second.factory;
  }
  return factory(settings);
}

std::vector<std::string> strategy_names() {
  std::lock_guard lock(registry_mutex());
  std::vector<std::string> out;
  for (const auto& [n, e] : registry()) out.push_back(n);
  return out;
}

std::string strategy_description(std::string_view name) {
  std::lock_guard lock(registry_mutex());
  auto it = registry().find(name);
  return it == registry().end() ? std::string{} : it->second.description;
}

}  // namespace gpuforecast
