#pragma once
// Genetic algorithms over a tuning space, in two variants:
// - elitist (the default): tournament selection, uniform crossover, each parameter mutated to an
//   adjacent value of its list, the best two members carried over; children that violate a
//   constraint are repaired by further mutation, then replaced by a random valid configuration.
// - kernel_tuner: Kernel Tuner's `genetic_algorithm` strategy operator for operator, so that
//   published Kernel Tuner figures can be reproduced on replay: parents drawn by a Beta(1, 2.5)
//   rank index, uniform crossover giving two complementary children, each child replaced with
//   probability mutation_rate by a random valid single-parameter change (to any value), invalid
//   or duplicate children discarded, no elites, at most max_generations generations.
// With several workers (an AsyncBenchmarker) the elitist variant breeds the next generation's
// children from the members measured so far as soon as a worker is free and this generation is
// all handed over; members still in flight are not bred again and stay in the population. With
// one worker it is the generational algorithm above, draw for draw. The kernel_tuner variant
// stays generational (its generations are what it reproduces).
//
// Screened evolution (children_per_measurement m > 1, both variants, one worker): each
// generation breeds m times the children it may measure; a selective model forecasts them, the
// certified screening rule (search/surrogate_filtered/screening.hpp) drops those it certifies as
// no improvement over the incumbent (each child's forecast set against the model's forecast of
// the incumbent, by default), and of the survivors only those with the lowest forecasts are
// measured. When the rule leaves fewer survivors than places, the generation breeds another
// m children per place, up to breeding_batches batches: the model's forecasts stand in for
// measurements, so the search looks further where the rule says nothing near is worth measuring.
// If places are still left, the certified children of the lowest forecasts fill them (measured,
// so not screened out). The model learns from every measurement; until it can forecast (an
// online model's first generation) the children are taken in breeding order, as without
// screening.
#include <cstddef>
#include <cstdint>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/options_table.hpp"
#include "gpuforecast/core/any_selective_predictor.hpp"
#include "search/surrogate_filtered/screening.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

enum class GeneticVariant { elitist, kernel_tuner };

struct GeneticOptions {
  std::uint64_t seed = 0;
  GeneticVariant variant = GeneticVariant::elitist;
  std::size_t population_size = 20;  // Kernel Tuner's popsize
  std::size_t tournament_size = 2;   // elitist: parents are the best of this many random members
  // elitist: per parameter; kernel_tuner: per child (Kernel Tuner's 1 / mutation_chance = 1/10).
  double mutation_rate = 0.1;
  std::size_t elites = 2;            // elitist: best members carried unchanged into the next generation
  std::size_t repair_attempts = 20;  // elitist: re-mutations of an invalid child before it is replaced
  std::size_t max_generations = 100; // kernel_tuner: Kernel Tuner's maxiter
  // Children bred per child measured (1: every child is measured and no model is asked).
  std::size_t children_per_measurement = 1;
  // With screening: at most this many batches of children_per_measurement children per place
  // while the rule leaves fewer survivors than places.
  std::size_t breeding_batches = 4;
  // With children_per_measurement > 1. Children are bred next to the incumbent, so the model errs
  // alike on them and on it: they are set against its forecast (chosen leaving one kernel family
  // out, docs/calibration.md).
  ScreeningStageOptions screening{.rule = {.reference = ScreeningReference::incumbent_forecast}};
};

// Every option but the seed by name, for --option (`variant` is elitist | kernel_tuner).
[[nodiscard]] const OptionsTable<GeneticOptions>& genetic_options_table();

class GeneticSearch {
 public:
  // `model` ranks (and, with screening, screens) the children when children_per_measurement > 1;
  // throws invalid_argument_error when it is then missing, and for bad screening options.
  explicit GeneticSearch(GeneticOptions options = {}, AnySelectivePredictor model = {});
  void run(SearchContext& ctx);
  [[nodiscard]] const GeneticOptions& options() const noexcept { return m_options; }

 private:
  GeneticOptions m_options;
  AnySelectivePredictor m_model;
  RoundScreening m_screening;  // as configured; each run starts from a copy
};

static_assert(SearchStrategy<GeneticSearch>);

}  // namespace gpuforecast
