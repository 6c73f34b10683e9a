# benchmarks/search_suite on one small space: it prints the verdict table against the peers'
# record, a rerun reads its stored runs instead of running them again, a pre-trained search learns
# from the kernel's other GPUs and never the searched one, and a data file other than the one the
# record names is refused by its digest.
include(${CMAKE_CURRENT_LIST_DIR}/../tools/shared_data.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/../tools/run_command.cmake)
set(run_program_name search_suite)
shared_data_file(space benchmark_hub/cachefiles/pnpoly/RTX_3090.json.gz)
shared_data_file(other benchmark_hub/cachefiles/pnpoly/RTX_Titan.json.gz)
set(peers "${data}/../baselines/search-peers/runs.json.gz")
if(NOT EXISTS "${peers}")
  message(FATAL_ERROR "the peers' record is missing: ${peers}")
endif()
file(REMOVE_RECURSE "${WORK}")

set(args --data "${data}" --peers "${peers}" --kernels pnpoly --devices RTX_3090 --seeds 2 --jobs 2
         --results "${WORK}/results")
run(first ok "0 runs stored, 2 to run" ${args} --json "${WORK}/first.json")
if(NOT first_out MATCHES "pnpoly/RTX_3090 +\\| [0-9.]+±[0-9.]+ (ahead|level|behind)")
  message(FATAL_ERROR "no verdict row for pnpoly/RTX_3090 in:\n${first_out}")
endif()
if(NOT first_out MATCHES "over 4 cells \\(spaces x budgets\\)")
  message(FATAL_ERROR "no verdict count over the 4 cells in:\n${first_out}")
endif()
file(GLOB stored "${WORK}/results/one_run/surrogate/pnpoly/RTX_3090/seed*.json")
list(LENGTH stored n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "expected 2 stored runs under ${WORK}/results, found ${n}: ${stored}")
endif()

# The rerun runs nothing and prints the same table.
run(again ok "2 runs stored, 0 to run" ${args})
string(REGEX MATCH "pnpoly/RTX_3090 [^\n]*" row_first "${first_out}")
string(REGEX MATCH "pnpoly/RTX_3090 [^\n]*" row_again "${again_out}")
if(NOT row_first STREQUAL row_again)
  message(FATAL_ERROR "the resumed table differs:\n${row_first}\n${row_again}")
endif()
# A third seed runs only that seed.
run(third ok "2 runs stored, 1 to run" ${args} --seeds 3)

# Pre-trained on the kernel's three other recorded GPUs, and stored with their names: a run made
# from other sources would be made again.
run(pretrained ok "pre-trained default for pnpoly/RTX_3090 on [0-9]+ observations of 3 other GPUs"
    ${args} --seeds 1 --strategies "surrogate(pretrained=default)")
file(READ "${WORK}/results/one_run/surrogate(pretrained=default)/pnpoly/RTX_3090/seed1.json" stored_run)
foreach(gpu RTX_2080_Ti RTX_3060_laptop RTX_Titan)
  if(NOT stored_run MATCHES "pnpoly/${gpu}@")
    message(FATAL_ERROR "the pre-trained run's settings do not name pnpoly/${gpu}:\n${stored_run}")
  endif()
endforeach()
if(stored_run MATCHES "pnpoly/RTX_3090@")
  message(FATAL_ERROR "the pre-trained run learned from the GPU it searched:\n${stored_run}")
endif()
run(pretrained_features fail "--features with a pretrained strategy" ${args} --seeds 1
    --strategies "surrogate(pretrained=default)" --features "${WORK}")

# Another file under the recorded name: refused, naming the file and both digests.
file(MAKE_DIRECTORY "${WORK}/data/benchmark_hub/cachefiles/pnpoly")
file(COPY_FILE "${other}" "${WORK}/data/benchmark_hub/cachefiles/pnpoly/RTX_3090.json.gz")
run(tampered fail "RTX_3090.json.gz:0: SHA-256 starts [0-9a-f]+, the peers' record names d6f238c36dc83dde"
      --data "${WORK}/data" --peers "${peers}" --kernels pnpoly --devices RTX_3090 --seeds 1 --results "${WORK}/results")
