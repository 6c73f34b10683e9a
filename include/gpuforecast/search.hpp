#pragma once
// Umbrella: search strategies, budgets, traces, and replayed experiments.
#include "gpuforecast/search/budget.hpp"
#include "gpuforecast/search/genetic.hpp"
#include "gpuforecast/search/random_search.hpp"
#include "gpuforecast/search/replay_experiment.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/search/search_report.hpp"
#include "gpuforecast/search/strategy_registry.hpp"
#include "gpuforecast/search/surrogate_filtered.hpp"
#include "gpuforecast/search/trace.hpp"
