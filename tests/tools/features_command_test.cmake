# gpuforecast features: a stated sample of a real space compiled with NVRTC, a rerun that
# compiles nothing, a larger sample that compiles only what is new, the tables read by eval,
# and the inputs it refuses.
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)
shared_data_file(rtx3090 benchmark_hub/cachefiles/pnpoly/RTX_3090.json.gz)
shared_data_file(rtx2080 benchmark_hub/cachefiles/pnpoly/RTX_2080_Ti.json.gz)
shared_data_file(rtx3060 benchmark_hub/cachefiles/pnpoly/RTX_3060_laptop.json.gz)
shared_data_file(mi250x benchmark_hub/cachefiles/convolution_milo/MI250X.json.gz)
shared_data_file(t1 benchmark_hub/kernels/pnpoly.json)
set(dir "${WORK_DIR}/features_command_test")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
set(table "${dir}/pnpoly_sm_86.csv.gz")

run(first ok "pnpoly for sm_86: 6 of 4092 configurations \\(seed 3\\).*6 configurations compiled in .* 0 failed.*wrote .*6 configurations, 6 compiled"
    features "${rtx3090}" --kernel "${t1}" --output "${table}" --sample 6 --seed 3 --jobs 2)
run(again ok "0 configurations compiled .* 6 were already known"
    features "${rtx3090}" --kernel "${t1}" --output "${table}" --sample 6 --seed 3)
run(more ok "2 configurations compiled .* 6 were already known.*8 configurations"
    features "${rtx3090}" --kernel "${t1}" --output "${table}" --sample 8 --seed 3)
run(smaller ok "pnpoly for sm_86: 8 of 4092 configurations.*0 configurations compiled .* 8 were already known"
    features "${rtx3090}" --kernel "${t1}" --output "${table}" --sample 4 --seed 3)
if(EXISTS "${table}.partial")
  message(FATAL_ERROR "the journal ${table}.partial is left after a finished run")
endif()

# Code compiled once is not compiled again: with a compile cache on disk, the same sample for
# another GPU of the same architecture comes from it whole.
run(cached ok "6 configurations compiled .* 0 of them from the compile cache"
    features "${rtx3090}" --kernel "${t1}" --output "${dir}/cache_test/3090.csv" --sample 6 --seed 5 --cache-dir "${dir}/compiled")
run(from_cache ok "6 configurations compiled .* 6 of them from the compile cache"
    features "${rtx3060}" --kernel "${t1}" --output "${dir}/cache_test/3060.csv" --sample 6 --seed 5 --cache-dir "${dir}/compiled")

# Read back where measurements are read: 8 of the 3090's configurations have them; the 2080 Ti
# (sm_75) has no table here and says so.
run(eval ok "static features: 8 of 8184 configurations.*RTX_3090.json.gz: 8 of 4092.*RTX_2080_Ti.json.gz: 0 of 4092 configurations with static features \\(no table for pnpoly on sm_75\\)"
    eval --protocol interpolate --data "${rtx3090}" "${rtx2080}" --surrogate ridge --seeds 1 --features "${dir}")
run(eval_json ok "\"with_features\": 8"
    eval --protocol interpolate --data "${rtx3090}" --surrogate ridge --seeds 1 --features "${table}" --json)

# Refused, with the reason.
run(two_tables fail "3090.csv:header: a second table for pnpoly on sm_86 in .*cache_test \\(the other: .*3060.csv\\)"
    eval --protocol interpolate --data "${rtx3090}" --surrogate ridge --seeds 1 --features "${dir}/cache_test")
run(seed fail "a sample drawn with seed 3, not 4: give --seed 3"
    features "${rtx3090}" --kernel "${t1}" --output "${table}" --sample 10 --seed 4)
run(arch fail "pnpoly_sm_86.csv.gz: a table for sm_86 of other parameters or another architecture than sm_75"
    features "${rtx2080}" --kernel "${t1}" --output "${table}" --sample 10 --seed 3)
run(amd fail "MI250X.json.gz: device .* has no CUDA compute capability .* no HIP compiler here"
    features "${mi250x}" --kernel "${t1}" --output "${dir}/amd.csv")
run(mixed fail "compiles for sm_75, .*RTX_3090.json.gz for sm_86: one architecture per table"
    features "${rtx3090}" "${rtx2080}" --kernel "${t1}" --output "${dir}/mixed.csv")

# A replayed search reads them too.
run(search ok "surrogate.*static features: 8 of 4092 configurations"
    search --replay "${rtx3090}" --features "${table}" --budget 20 --seeds 1 --no-progress)

# train and predict read them as well, and say how many configurations had them.
run(train ok "trained .*static features: 8 of 4092 configurations"
    train --data "${rtx3090}" --surrogate ridge --out "${dir}/model.gfm" --features "${table}")
run(predict ok "static features: 8 of 4092 configurations"
    predict --model "${dir}/model.gfm" --data "${rtx3090}" --top 3 --features "${table}")
run(predict_config ok "static features: 1 of 1 configurations"
    predict --model "${dir}/model.gfm" --device "RTX 3090" --problem-size 20000000 --features "${table}"
    --config "between_method=0,block_size_x=992,tile_size=10,use_method=0")
