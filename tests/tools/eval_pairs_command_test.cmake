# gpuforecast eval --protocol pairs: the table, the JSON, and bad options named in the error.
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)
shared_data_file(space benchmark_hub/cachefiles/convolution_milo/A4000.json.gz)
set(run_prefix eval --protocol pairs --data "${space}" --surrogate xgboost --seeds 1)  # every run() below

run(table ok "xgboost convolution_milo@.+ neighbour +wrong_direction +direction_probability" --pairs 600)
if(NOT table_out MATCHES "random" OR NOT table_out MATCHES "majB")
  message(FATAL_ERROR "both pair kinds and the majority baseline belong in the table:\n${table_out}")
endif()
run(json ok "\"protocol\": \"pairs\"" --pairs 600 --pair-kind neighbour --splits 5 --json)
string(JSON kind GET "${json_out}" mean 0 pair_kind)
string(JSON splits GET "${json_out}" mean 0 splits)
string(JSON answered GET "${json_out}" mean 0 rules 0 answered)
if(NOT kind STREQUAL "neighbour" OR NOT splits EQUAL 5 OR answered LESS 0 OR answered GREATER 1)
  message(FATAL_ERROR "unexpected JSON (kind ${kind}, splits ${splits}, answered ${answered}):\n${json_out}")
endif()
run(bad_kind fail "unknown pair kind \"nearby\"" --pair-kind nearby)
run(bad_pairs fail "--pairs must be at least 2" --pairs 1)
run(bad_surrogate fail "unknown surrogate \"bogus\"" --surrogate bogus)
# llm without an endpoint: a clear error before any work (or, without libcurl, that it is not built).
set(ENV{GPUFORECAST_LLM_BASE_URL} "")
run(llm_without_endpoint fail "GPUFORECAST_LLM_BASE_URL|llm is not in this build" --surrogate llm)
# --views: each space leans on the other GPUs of its kernel and vendor among --data, and a space
# with none is named.
shared_data_file(sibling benchmark_hub/cachefiles/convolution_milo/A6000.json.gz)
run(views ok "xgboost\\+views +convolution_milo@RTX A4000 +child +wrong_direction" --data "${sibling}" --pairs 400
    --pair-kind child --splits 5 --views)
run(views_alone fail "A4000.json.gz has no other GPU of vendor NVIDIA that measured convolution_milo among the views' data" --views)
run(views_llm fail "--views corrects the views with a surrogate; llm is not one" --surrogate llm --views)
