# Files from the wild: a shared cache with its device_name replaced by a public-cache name
# ("Tesla V100-PCIE-32GB", known after normalising) and by a GPU the table lacks. data info,
# eval and search --replay read both; the unknown one warns once, naming the file and device.
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)
shared_data_file(shared benchmark_hub/cachefiles/convolution_milo/A4000.json.gz)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND gzip -dc "${shared}" OUTPUT_VARIABLE text RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip -dc ${shared} failed (${rc})")
endif()
foreach(pair "v100;Tesla V100-PCIE-32GB" "imaginary;Imaginary GPU 9000")
  list(GET pair 0 stem)
  list(GET pair 1 device)
  string(REGEX REPLACE "\"device_name\": \"[^\"]*\"" "\"device_name\": \"${device}\"" wild "${text}")
  file(WRITE "${WORK}/${stem}.json" "${wild}")
endforeach()
set(v100 "${WORK}/v100.json")
set(imaginary "${WORK}/imaginary.json")

function(expect_one_warning name err)
  string(REGEX MATCHALL "warning: [^\n]*imaginary\\.json: device \"Imaginary GPU 9000\" is not in the device table"
         found "${err}")
  list(LENGTH found n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "${name}: expected one warning naming imaginary.json and its device, got ${n}:\n${err}")
  endif()
  if(err MATCHES "v100\\.json")
    message(FATAL_ERROR "${name}: warned about v100.json, whose device is known:\n${err}")
  endif()
endfunction()

run(info ok "V100-PCIE-32GB \\(NVIDIA volta\\).*Imaginary GPU 9000 \\(not in the device table: no numbers\\)"
    data info "${v100}" "${imaginary}")
expect_one_warning(info "${info_err}")
run(eval ok "ridge [^\n]*@Imaginary GPU 9000 10%.*ridge [^\n]*@V100-PCIE-32GB 10%"
    eval --protocol interpolate --data "${imaginary}" "${v100}" --surrogate ridge --seeds 1)
expect_one_warning(eval "${eval_err}")
# No T1 file beside the copies: the cached space (4201 configurations with a valid time).
run(replay ok "Imaginary GPU 9000\\), space cached \\(4201 configurations\\)"
    search --replay "${imaginary}" --strategy random,genetic --budget 40 --seeds 2 --no-progress)
expect_one_warning(replay "${replay_err}")
run(replay_json ok "\"space\": \"cached \\(4201 configurations\\)\""
    search --replay "${v100}" --strategy random --budget 20 --seeds 1 --json)
run(cartesian ok "space cartesian \\(10240 configurations\\)"
    search --replay "${v100}" --space cartesian --strategy random --budget 20 --seeds 1 --no-progress)
run(t1_given ok "space t1 \\("
    search --replay "${v100}" --t1 "${data}/benchmark_hub/kernels/convolution_milo.json" --strategy random
    --budget 20 --seeds 1 --no-progress)
run(t1_missing fail "--space t1: no T1 file.*--t1" search --replay "${v100}" --space t1 --budget 20 --seeds 1)
run(bad_space fail "--space tune_cache: expected auto, t1, cached or cartesian"
    search --replay "${v100}" --space tune_cache --budget 20 --seeds 1)
run(live_space fail "--space requires --replay"
    search --kernel "${data}/benchmark_hub/kernels/convolution_milo.json" --space cached)
file(REMOVE_RECURSE "${WORK}")
