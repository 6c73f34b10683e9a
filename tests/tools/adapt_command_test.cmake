# gpuforecast adapt: a k-NN of convolution_milo's A100 and A6000, rehearsed (which stores one k-NN
# view per GPU), adapted to the A4000 it never saw; the adapted file forecasts the A4000 through
# the two views, stacked, and refuses a calibration of the model's own forecasts. Each misuse is
# an error that says what to do.
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)
shared_data_file(a100 benchmark_hub/cachefiles/convolution_milo/A100.json.gz)
shared_data_file(a6000 benchmark_hub/cachefiles/convolution_milo/A6000.json.gz)
shared_data_file(a4000 benchmark_hub/cachefiles/convolution_milo/A4000.json.gz)
shared_data_file(w6600 benchmark_hub/cachefiles/convolution_milo/W6600.json.gz)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(model "${WORK}/knn.gfm")
set(adapted "${WORK}/a4000.gfm")

run(train ok "" train --data "${a100}" "${a6000}" --out "${model}" --surrogate knn)
run(no_views fail "holds no views .*gpuforecast calibrate --rehearse" adapt --model "${model}" --data "${a4000}" --out "${adapted}")
run(rehearse ok "" calibrate --model "${model}" --rehearse --data "${a100}" "${a6000}" --rehearsal-surrogate knn --out "${model}")
run(adapt ok "adapted .* to convolution_milo on RTX A4000 from 4362 measurements.*log t = [-0-9.]+ \\+ [0-9.]+ log t_A100[^\n]*\\+ [0-9.]+ log t_RTX A6000.*times a knn model.*not calibrated.*wrote"
    adapt --model "${model}" --data "${a4000}" --out "${adapted}" --ratio-surrogate knn)
# The adapted file forecasts the A4000 (its own measurements here: close), deferring each.
run(predict ok "convolution_milo @ RTX A4000, stacked views x knn surrogate" predict --model "${adapted}" --data "${a4000}")
run(calibrate fail "forecasts convolution_milo on RTX A4000 through views stacked by gpuforecast adapt, which calibrate would not see"
    calibrate --model "${adapted}" --data "${a4000}" --out "${WORK}/x.gfm")
run(cross_device fail "which calibrate --cross-device would not see"
    calibrate --model "${adapted}" --cross-device --data "${a4000}" --device-samples 20 --out "${WORK}/x.gfm")
run(amd fail "no view of convolution_milo on another AMD GPU" adapt --model "${model}" --data "${w6600}" --out "${WORK}/x.gfm")
run(two_devices fail "one kernel on one device" adapt --model "${model}" --data "${a4000}" "${w6600}" --out "${WORK}/x.gfm")
run(bad_ratio fail "nonesuch" adapt --model "${model}" --data "${a4000}" --out "${WORK}/x.gfm" --ratio-surrogate nonesuch)
