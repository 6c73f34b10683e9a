#include "gpuforecast/run/strategy_registry.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <mutex>
#include <span>
#include <string>

#include "compose/search_model.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "data/screening_pairs.hpp"
#include "search/genetic.hpp"
#include "search/random_search.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "search/surrogate_filtered.hpp"

namespace gpuforecast {

namespace {

struct Entry {
  std::string description;
  StrategyFactory factory;
  std::function<std::string()> options_doc;
};

AnyStrategy make_random(const StrategySettings& s) {
  RandomSearchOptions o = random_search_options_table().parse(s.options);
  o.seed = s.seed;
  return RandomSearch(o);
}

// The measurements of a screen_calibration file that calibrate the screening rule.
std::shared_ptr<const std::vector<Observation>> screening_calibration(const std::string& path) {
  auto ok = Dataset::load(std::vector<std::string>{path}).observations(true);
  if (ok.empty())
    throw invalid_argument_error(fmt::format("screen_calibration {}: no successful measurement to calibrate on", path));
  return std::make_shared<const std::vector<Observation>>(std::move(ok));
}

// The selective model a strategy ranks with: the one given, a model file, or the online
// surrogate learning from the search's own measurements.
AnySelectivePredictor strategy_model(const StrategySettings& s) {
  return s.model_factory ? s.model_factory()
                         : make_search_model({.model_path = s.model_path, .online_surrogate = s.surrogate, .seed = s.seed});
}

// The screening stage's calibration: the one given in memory, or its file read once.
void load_screening_calibration(const StrategySettings& s, ScreeningStageOptions& o) {
  if (s.screening_calibration) o.calibration = s.screening_calibration;
  else if (!o.calibration_path.empty()) o.calibration = screening_calibration(o.calibration_path);
  if (s.screening_rehearsal) o.rehearsal = s.screening_rehearsal;
  else if (!o.rehearsal_path.empty())
    o.rehearsal =
        std::make_shared<const std::vector<std::vector<ScreeningPair>>>(read_screening_rehearsal(o.rehearsal_path));
  if (o.rehearsal && o.rule.reference == ScreeningReference::incumbent_forecast)
    for (const auto& group : *o.rehearsal)
      for (const auto& p : group)
        if (!(p.incumbent_forecast_ms > 0))
          throw invalid_argument_error(fmt::format(
              "screen_rehearsal {}: screen_reference=incumbent_forecast needs the incumbent's forecast in every pair; "
              "record the rehearsal with --option screen_reference=incumbent_forecast",
              o.rehearsal_path.empty() ? std::string("(in memory)") : o.rehearsal_path));
}

// "list": the configurations the caller names (StrategySettings::configs), measured in the
// order given, `batch` at a time so that each batch's results reach the observers before the next
// starts (gpuforecast measure). Nothing is chosen: the budget and a stop end it early.
struct ListOptions {
  std::size_t batch = 0;  // 0: all in one call
};

const OptionsTable<ListOptions>& list_options_table() {
  static const auto table = [] {
    OptionsTable<ListOptions> t("strategy \"list\"");
    t.add("batch", &ListOptions::batch, "configurations handed to the benchmarker per call (0: all in one)",
          OptionRange::at_least(0));
    return t;
  }();
  return table;
}

struct ListStrategy {
  std::shared_ptr<const std::vector<Config>> configs;
  std::size_t batch = 0;
  void run(SearchContext& ctx) const {
    const std::size_t n = configs->size();
    const std::size_t step = batch > 0 ? batch : std::max<std::size_t>(n, 1);
    for (std::size_t i = 0; i < n && !ctx.exhausted(); i += step)
      (void)ctx.evaluate(std::span<const Config>(*configs).subspan(i, std::min(step, n - i)));
  }
};

AnyStrategy make_list(const StrategySettings& s) {
  if (!s.configs)
    throw invalid_argument_error(
        "strategy \"list\" measures the configurations a program gives it (StrategySettings::configs), and none "
        "were given");
  return ListStrategy{s.configs, list_options_table().parse(s.options).batch};
}

// Screened evolution (children_per_measurement > 1) ranks the children with a model.
AnyStrategy make_genetic(const StrategySettings& s) {
  GeneticOptions o = genetic_options_table().parse(s.options);
  o.seed = s.seed;
  if (o.children_per_measurement <= 1) return GeneticSearch(o);
  load_screening_calibration(s, o.screening);
  return GeneticSearch(o, strategy_model(s));
}

// A model that forecasts from the start gets the "pre-trained" preset, any other the defaults
// ("from-scratch"); options given by name override either.
AnyStrategy make_surrogate_filtered(const StrategySettings& s) {
  const bool pretrained = s.model_factory || !s.model_path.empty();
  const char* preset = s.surrogate == "llm" ? "llm" : pretrained ? "pre-trained" : "from-scratch";
  SurrogateFilteredOptions o = surrogate_filtered_options_table().parse(s.options, surrogate_filtered_preset(preset));
  load_screening_calibration(s, o.screening);
  o.seed = s.seed;
  return SurrogateFilteredSearch(strategy_model(s), o);
}

// The surrogate strategy's table, and what its other preset changes.
std::string surrogate_filtered_options_doc() {
  const auto& table = surrogate_filtered_options_table();
  std::string doc = table.markdown(surrogate_filtered_preset("from-scratch"));
  const auto defaults = table.write(surrogate_filtered_preset("from-scratch"));
  const auto pretrained = table.write(surrogate_filtered_preset("pre-trained"));
  std::string changes;
  for (std::size_t i = 0; i < defaults.size(); ++i)
    if (defaults[i].second != pretrained[i].second)
      changes += fmt::format("{}`{}={}`", changes.empty() ? "" : ", ", pretrained[i].first, pretrained[i].second);
  return doc + "\nWith a pre-trained model (`--model`), the \"pre-trained\" preset changes: " + changes + ".\n";
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, Entry, std::less<>>& registry() {
  static std::map<std::string, Entry, std::less<>> r{
      {"random", {"uniform random sampling of valid configurations", make_random,
                  [] { return random_search_options_table().markdown(); }}},
      {"genetic", {"genetic algorithm (tournament selection, uniform crossover, neighbour mutation)", make_genetic,
                   [] { return genetic_options_table().markdown(); }}},
      {"surrogate", {"surrogate-filtered search: propose many, measure the forecast best and some uncertain ones",
                     make_surrogate_filtered, surrogate_filtered_options_doc}},
      {"list", {"the configurations a program names, in order (gpuforecast measure)", make_list,
                [] { return list_options_table().markdown(); }}},
  };
  return r;
}

}  // namespace

void register_strategy(std::string name, std::string description, StrategyFactory factory,
                       std::function<std::string()> options_doc) {
  std::lock_guard lock(registry_mutex());
  registry()[std::move(name)] = {std::move(description), std::move(factory), std::move(options_doc)};
}

std::string strategy_options_doc(std::string_view name) {
  std::function<std::string()> doc;
  {
    std::lock_guard lock(registry_mutex());
    auto it = registry().find(name);
    if (it != registry().end()) doc = it->second.options_doc;
  }
  return doc ? doc() : std::string{};
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
