#pragma once
// Strategies by name, as a Plan names them. Built in: "random", "genetic", "surrogate", and
// "list" (the configurations in StrategySettings::configs, in order: what `gpuforecast measure`
// runs). Each
// factory reads its options struct's fields from StrategySettings::options through the struct's
// OptionsTable, so `--option population_size=30` reaches GeneticOptions::population_size; the
// runner's side of it makes what a strategy is given: the surrogate's model (a file, an online
// surrogate, a caller's factory) and its screening calibration file.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/any_selective_predictor.hpp"
#include "gpuforecast/stats/screening.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class AnyStrategy {
 public:
  AnyStrategy() = default;
  template <SearchStrategy S>
  AnyStrategy(S s) : m_run(std::make_shared<std::function<void(SearchContext&)>>(  // NOLINT: implicit
                         [s = std::move(s)](SearchContext& ctx) mutable { s.run(ctx); })) {}
  void run(SearchContext& ctx) { (*m_run)(ctx); }
  [[nodiscard]] bool empty() const noexcept { return !m_run; }

 private:
  std::shared_ptr<std::function<void(SearchContext&)>> m_run;
};

static_assert(SearchStrategy<AnyStrategy>);

struct StrategySettings {
  std::uint64_t seed = 0;
  // Surrogate-filtered search: a pre-trained selective model file (`gpuforecast::load`); when
  // empty, a surrogate of kind `surrogate` is trained online from the search's own measurements.
  std::string model_path;
  std::string surrogate = "default";
  // Alternative to model_path for programs that hold a model in memory: called once per run.
  std::function<AnySelectivePredictor()> model_factory;
  // Surrogate-filtered search with screening: calibration measurements held in memory (instead
  // of the screen_calibration file option).
  std::shared_ptr<const std::vector<Observation>> screening_calibration;
  // Screening calibrated by a rehearsal on other devices, a group of pairs per device, held in
  // memory (instead of the screen_rehearsal file option; data/screening_pairs.hpp).
  std::shared_ptr<const std::vector<std::vector<ScreeningPair>>> screening_rehearsal;
  // Strategy "list": the configurations to measure, in order.
  std::shared_ptr<const std::vector<Config>> configs;
  // Option overrides by field name of the strategy's options struct ("population_size" -> "30").
  std::map<std::string, std::string> options;
};

using StrategyFactory = std::function<AnyStrategy(const StrategySettings&)>;

// Adds or replaces a strategy; `options_doc` returns its options as a Markdown table (for
// `gpuforecast search --list-options` and docs/search.md).
void register_strategy(std::string name, std::string description, StrategyFactory factory,
                       std::function<std::string()> options_doc = {});
// Throws invalid_argument_error naming the registered strategies when `name` is unknown, and
// for an option the strategy does not have or a value that does not parse.
[[nodiscard]] AnyStrategy make_strategy(std::string_view name, const StrategySettings& settings = {});
[[nodiscard]] std::vector<std::string> strategy_names();
[[nodiscard]] std::string strategy_description(std::string_view name);
// Empty for an unknown strategy or one registered without a table.
[[nodiscard]] std::string strategy_options_doc(std::string_view name);

}  // namespace gpuforecast
