# gpuforecast search: options for every strategy (NAME=VALUE) and for one (STRATEGY.NAME=VALUE).
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)
shared_data_file(replay benchmark_hub/cachefiles/convolution_milo/A4000.json.gz)
set(run_prefix search --replay "${replay}" --budget 60 --seeds 3 --no-progress)  # every run() below

# The genetic strategy's results in a --json output: its curve and its simulated cost (the sum
# of the stored compile and benchmark times of what it measured, so other picks show there).
function(genetic_result json var)
  string(JSON n LENGTH "${json}" strategies)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" strategies ${i} strategy)
    if(name STREQUAL "genetic")
      string(JSON curve GET "${json}" strategies ${i} fraction_of_optimum)
      string(JSON cost GET "${json}" strategies ${i} mean_simulated_seconds)
      set(${var} "${curve} ${cost}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "no genetic strategy in:\n${json}")
endfunction()

# Scoped: the GA variant reaches the GA only, and random runs beside it.
run(scoped ok "\"random\".*\"genetic\"" --strategy random,genetic --option genetic.variant=kernel_tuner --json)
# The same GA with the option unscoped, alone: the same runs as scoped.
run(alone ok "\"genetic\"" --strategy genetic --option variant=kernel_tuner --json)
run(default ok "\"genetic\"" --strategy genetic --json)
genetic_result("${scoped_out}" scoped)
genetic_result("${alone_out}" alone)
genetic_result("${default_out}" default)
if(NOT scoped STREQUAL alone)
  message(FATAL_ERROR "genetic.variant=kernel_tuner beside random gave other runs than variant=kernel_tuner alone:\n"
                      "${scoped}\n---\n${alone}")
endif()
if(scoped STREQUAL default)
  message(FATAL_ERROR "genetic.variant=kernel_tuner gave the same runs as the default variant: the option was lost")
endif()

# Unscoped options go to every strategy searched, and one that does not know it says so.
run(unscoped fail "strategy \"random\" has no option \"variant\"" --strategy random,genetic --option variant=kernel_tuner)
# A scope that is not searched, a bad value, a malformed option.
run(stray fail "strategy \"surrogate\" is not among those searched" --strategy random --option surrogate.local_moves=2)
run(value fail "elitist, kernel_tuner" --strategy genetic --option genetic.variant=steady_state)
run(malformed fail "expected NAME=VALUE or STRATEGY.NAME=VALUE" --strategy genetic --option variant)

# --sampling mean: every measurement is the stored mean (Kernel Tuner's `time`, no noise), so the
# genetic algorithm selects otherwise than on the default's noisy draws and its runs differ; a
# misspelt name is refused before any file is read.
run(mean ok "\"genetic\"" --strategy genetic --sampling mean --json)
genetic_result("${mean_out}" mean)
if(mean STREQUAL default)
  message(FATAL_ERROR "--sampling mean gave the same runs as the default one_run sampling: the option was lost")
endif()
run(sampling fail "expected one_run, bootstrap, median or mean" --strategy genetic --sampling average)

# --screen reference= reaches the screening of the genetic strategy's children; a bad one is
# refused with the choices.
run(screen_reference ok "\"genetic\"" --strategy genetic --option children_per_measurement=4
    --screen alpha=0.1,delta=0.1,reference=incumbent_time --json)
run(screen_reference_bad fail "incumbent_time, incumbent_forecast" --strategy genetic --option children_per_measurement=4
    --screen reference=latest)
