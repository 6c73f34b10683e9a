# gpuforecast search: options for every strategy (NAME=VALUE) and for one (STRATEGY.NAME=VALUE).
if(DEFINED ENV{GPUFORECAST_DATA} AND NOT "$ENV{GPUFORECAST_DATA}" STREQUAL "")
  set(data "$ENV{GPUFORECAST_DATA}")
else()
  set(data "${DEFAULT_DATA}")
endif()
set(replay "${data}/benchmark_hub/cachefiles/convolution_milo/A4000.json.gz")
if(NOT EXISTS "${replay}")
  message(FATAL_ERROR "shared datasets expected at ${data} (set GPUFORECAST_DATA): ${replay} is missing")
endif()

# run(<name> <expect: ok|fail> <regex the output must match> args...): output in ${name}_out.
function(run name expect pattern)
  execute_process(COMMAND "${CLI}" search --replay "${replay}" --budget 60 --seeds 3 --no-progress ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE ";" " " line "gpuforecast search --replay ${replay} --budget 60 --seeds 3 ${ARGN}")
  if(expect STREQUAL "ok" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${line}\nexited ${rc}, expected success:\n${out}${err}")
  elseif(expect STREQUAL "fail" AND rc EQUAL 0)
    message(FATAL_ERROR "${line}\nsucceeded, expected an error:\n${out}")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "${line}\noutput does not match \"${pattern}\":\n${out}${err}")
  endif()
  set(${name}_out "${out}" PARENT_SCOPE)
endfunction()

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
