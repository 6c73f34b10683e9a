# gpuforecast calibrate --rehearse / --cross-device: a k-NN trained on five GPUs (dedispersion_milo
# A100 and A6000, pnpoly on three RTX cards) rehearses each GPU as a new one; the A4000, which it
# never saw, is then adapted from K of its runs: from the model's single forecasts (--no-views),
# trusted where its K runs pass the check, deferred where they fail it, refused where five
# rehearsal GPUs are too few for delta; from the stored per-GPU views, stacked towards its sibling
# A6000, which the written model then forecasts with; the same views stacked by K runs alone
# (--device-samples without --cross-device). Each misuse is an error that says what to do.
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)
set(training "")

# `predict --top` on a model that forecasts the A4000 through stacked views: its first row's
# forecast within 10% of that configuration's measured runtime. (Whole milliseconds: these
# runtimes are about 150 ms, and CMake's arithmetic is on integers.)
function(check_top_forecast_within_10_percent name model)
  run(${name} ok "dedispersion_milo @ RTX A4000" predict --model "${model}" --data "${a4000}" --top 3)
  if(NOT ${name}_out MATCHES "\n[0-9,]+ +([0-9]+)\\.[0-9]* +[0-9.]+-[0-9.]+ +[0-9.]+ +([0-9]+)\\.?[0-9]*\n")
    message(FATAL_ERROR "no forecast row in:\n${${name}_out}")
  endif()
  math(EXPR forecast_x10 "10 * ${CMAKE_MATCH_1}")
  math(EXPR low_x9 "9 * ${CMAKE_MATCH_2}")
  math(EXPR high_x11 "11 * ${CMAKE_MATCH_2}")
  if(forecast_x10 LESS low_x9 OR forecast_x10 GREATER high_x11)
    message(FATAL_ERROR "stacked forecast ${CMAKE_MATCH_1} ms against ${CMAKE_MATCH_2} ms measured:\n${${name}_out}")
  endif()
endfunction()
foreach(space dedispersion_milo/A100 dedispersion_milo/A6000 pnpoly/RTX_2080_Ti pnpoly/RTX_3060_laptop pnpoly/RTX_Titan)
  shared_data_file(file benchmark_hub/cachefiles/${space}.json.gz)
  list(APPEND training "${file}")
endforeach()
shared_data_file(a4000 benchmark_hub/cachefiles/dedispersion_milo/A4000.json.gz)
file(MAKE_DIRECTORY "${WORK}")
set(model "${WORK}/knn.gfm")
set(rehearsed "${WORK}/knn-rehearsed.gfm")

run(train ok "" train --data ${training} --out "${model}" --surrogate knn)
run(no_rehearsal fail "holds no rehearsal: run `gpuforecast calibrate --rehearse`"
    calibrate --model "${model}" --cross-device --data "${a4000}" --device-samples 20 --out "${WORK}/x.gfm")
list(GET training 0 one_gpu)
run(one_gpu fail "at least two GPUs" calibrate --model "${model}" --rehearse --data "${one_gpu}" --out "${WORK}/x.gfm")
run(rehearse ok "rehearsal: 5 spaces of 5 GPUs, each forecast by knn refitted without its GPU.*5 of them also as the other GPUs"
    calibrate --model "${model}" --rehearse --data ${training} --out "${rehearsed}")

set(run_prefix calibrate --model "${rehearsed}" --cross-device --data "${a4000}" --out "${WORK}/a4000.gfm" --no-views)
# Five rehearsal GPUs allow delta >= 1/6 only.
run(too_few ok "5 GPUs are too few for delta 0.1 \\(need 9\\)" --device-samples 20 --seed 1)
# Seed 1: the K = 20 runs pass the check, and the A4000's other runs are answered, most right.
run(trusted ok "check: [0-9]+% of the 20 measurements .* passed" --device-samples 20 --seed 1 --delta 0.2)
if(NOT trusted_out MATCHES "configurations \\(not used\\): ([0-9.]+)% answered without measuring, realised risk ([0-9.]+)")
  message(FATAL_ERROR "no answered share in:\n${trusted_out}")
endif()
if(CMAKE_MATCH_1 LESS 50 OR CMAKE_MATCH_2 GREATER 0.1)
  message(FATAL_ERROR "A4000 seed 1: ${CMAKE_MATCH_1}% answered at risk ${CMAKE_MATCH_2}; expected most answered at risk <= 0.1:\n${trusted_out}")
endif()
# Seed 0: four of the 20 runs are lost when left out, so nothing of this GPU is answered.
run(checked ok "failed, every forecast of this GPU is deferred.*0.0% answered" --device-samples 20 --seed 0 --delta 0.2)
run(bad_vendors fail "--rehearsal-vendors is same or all" --device-samples 20 --rehearsal-vendors some)
run(two_files fail "takes one --data file" --device-samples 20 --data "${a4000}")

# Views: the A4000's forecasts stacked from the A100's and the A6000's k-NN, the A6000 (the same
# architecture) weighed more; each rehearsal GPU's outcome is listed.
set(run_prefix calibrate --model "${rehearsed}" --cross-device --data "${a4000}" --out "${WORK}/a4000-views.gfm")
run(views ok "rehearsal GPU pnpoly/TITAN RTX: check [0-9]+% of K lost" --device-samples 20 --seed 1 --delta 0.2)
if(NOT views_out MATCHES "stacked from the views of 2 other GPU\\(s\\): log t = [-0-9.]+ \\+ ([0-9.]+) log t_A100-PCIE-40GB \\+ ([0-9.]+) log t_RTX A6000")
  message(FATAL_ERROR "no stacking of the A100 and A6000 views in:\n${views_out}")
endif()
if(NOT CMAKE_MATCH_2 GREATER CMAKE_MATCH_1)
  message(FATAL_ERROR "the A6000's view weighs ${CMAKE_MATCH_2}, the A100's ${CMAKE_MATCH_1}:\n${views_out}")
endif()
# The written model forecasts the A4000 through the stacked views: within 10% of the measured
# runtimes of its predicted fastest, where the model trained on the other GPUs is off by 2x.
set(run_prefix)
check_top_forecast_within_10_percent(stacked_predict "${WORK}/a4000-views.gfm")

# --device-samples stacks the stored views as well: 15 of the 50 runs fit the stacking (the
# A6000 weighed more than the A100) and the correction, 35 certify, and the written model
# forecasts the A4000 through the stacking; --no-views corrects the single forecasts.
set(run_prefix calibrate --model "${rehearsed}" --data "${a4000}" --device-samples 50 --seed 1 --loss wrong_bin
    --confidence top_bin_probability)
run(k_views ok "15 fit the stacking and the correction" --out "${WORK}/a4000-k50.gfm")
if(NOT k_views_out MATCHES "forecast as log t = [-0-9.]+ \\+ ([0-9.]+) log t_A100-PCIE-40GB \\+ ([0-9.]+) log t_RTX A6000")
  message(FATAL_ERROR "no stacking of the A100 and A6000 views in:\n${k_views_out}")
endif()
if(NOT CMAKE_MATCH_2 GREATER CMAKE_MATCH_1)
  message(FATAL_ERROR "the A6000's view weighs ${CMAKE_MATCH_2}, the A100's ${CMAKE_MATCH_1}:\n${k_views_out}")
endif()
run(k_single ok "15 fit the correction log t" --out "${WORK}/a4000-k50-single.gfm" --no-views)
if(k_single_out MATCHES "forecast as log t")
  message(FATAL_ERROR "--no-views stacked views:\n${k_single_out}")
endif()
set(run_prefix)
# Too few runs to stack the views says so, and that the single forecasts need fewer.
run(k_views_too_few fail "give 3 to stack the views and fit the correction \\(need 4. the single forecasts need 3\\)"
    calibrate --model "${rehearsed}" --data "${a4000}" --device-samples 10 --out "${WORK}/x.gfm")
check_top_forecast_within_10_percent(k_views_predict "${WORK}/a4000-k50.gfm")

# A search started from the rehearsed model ranks the genetic strategy's children on the A4000
# through the stored views, stacked by the run's own measurements: it runs to its budget.
set(run_prefix)
run(views_search ok "genetic: [0-9]+ simulated s" search --replay "${a4000}" --strategy genetic --model "${rehearsed}" --budget 30
    --seeds 1 --option children_per_measurement=4 --no-progress)
