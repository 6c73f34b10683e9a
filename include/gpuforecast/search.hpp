#pragma once
// Umbrella: search strategies, budgets, traces, observers, resuming, and
// the back ends a search runs on besides the replay (a simulated farm, a resumed run).
#include "gpuforecast/search/budget.hpp"
#include "gpuforecast/search/cache_writer.hpp"
#include "gpuforecast/search/event_log.hpp"
#include "gpuforecast/search/events.hpp"
#include "gpuforecast/search/genetic.hpp"
#include "gpuforecast/search/observer.hpp"
#include "gpuforecast/search/progress_bar.hpp"
#include "gpuforecast/search/random_search.hpp"
#include "gpuforecast/runtime/resumed_benchmarker.hpp"
#include "gpuforecast/runtime/simulated_farm.hpp"
#include "gpuforecast/search/resume.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/search/search_report.hpp"
#include "gpuforecast/search/surrogate_filtered.hpp"
#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/search/trace_writer.hpp"
