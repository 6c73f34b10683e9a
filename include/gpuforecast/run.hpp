#pragma once
// Umbrella: running a search: a Plan (back end, strategy, budget, seeds, outputs) in, a Result
// (every run's trace and counts) out, the replayed spaces plans are made of, and the reports.
#include "gpuforecast/run/plan.hpp"
#include "gpuforecast/run/replay_space.hpp"
#include "gpuforecast/run/report.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/strategy_registry.hpp"
