#!/usr/bin/env bash
# `gpuforecast measure --events` and a live `search --kernel --events` on the fake driver
# (tests/runtime/fake_libcuda.cpp as libcuda.so.1): every fault of the fault suite (a crash, a
# hang with its timeout, a compile error with the compiler's line) becomes a fault line of a
# schema-valid event log; a device that slows down mid-run (GPUFORECAST_FAKE_CUDA_SLOW_AFTER) is
# told by the live sentinel; the GPU's own throttling (a fake NVML) is an anomaly; and a measure stopped by SIGTERM ends its log with the reason and
# keeps what was measured.
# usage: fake_gpu_events_test.sh GPUFORECAST_CLI FAKE_DRIVER_DIR WORK_DIR SOURCE_DIR
set -euo pipefail
cli=$1 fake=$2 work=$3 source=$4
fail() { echo "fake_gpu_events: $*" >&2; exit 1; }
suite=$source/tests/runtime/fault_suite/fault_suite.json
check=$source/tests/monitor/check_events.py
rm -rf "$work"; mkdir -p "$work"; cd "$work"
export LD_LIBRARY_PATH=$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# Every configuration: 2 ok, 2 crash, 2 hang, 2 wrong output, 2 that do not compile.
"$cli" measure --kernel "$suite" --all --timeout 2 --events measure.jsonl --output measured.json >measure.out 2>&1 ||
  fail "measure failed: $(cat measure.out)"
python3 "$check" measure.jsonl >check.out || fail "measure.jsonl does not follow docs/events.md"
count() { grep -c "$1" "$2" || true; }
[ "$(count '"event":"measured"' measure.jsonl)" = 10 ] || fail "expected 10 measured lines: $(cat measure.jsonl)"
[ "$(count '"event":"fault".*"kind":"crash".*ILLEGAL_ADDRESS' measure.jsonl)" = 2 ] || fail "expected 2 crash faults naming the error"
[ "$(count '"event":"fault".*"kind":"hang".*within 2 s' measure.jsonl)" = 2 ] || fail "expected 2 hang faults giving the timeout"
[ "$(count '"event":"fault".*"kind":"compile_error".*error: identifier' measure.jsonl)" = 2 ] ||
  fail "expected 2 compile faults with the compiler's first error line"
tail -n 1 measure.jsonl | grep -q '"event":"end".*"stopped":false' || fail "measure.jsonl does not end with an end line"
[ "$(count '"InvalidConfig"\|"RuntimeFailedConfig"\|"CompilationFailedConfig"' measured.json)" -ge 1 ] ||
  fail "the cache names no failure: $(head -c 2000 measured.json)"

# The same suite searched live: the faults come from the search's path too.
"$cli" search --kernel "$suite" --strategy random --budget 10 --seeds 1 --no-progress --timeout 2 --events search.jsonl \
  >search.out 2>&1 || fail "live search failed: $(cat search.out)"
python3 "$check" search.jsonl >>check.out || fail "search.jsonl does not follow docs/events.md"
[ "$(count '"event":"fault"' search.jsonl)" = 6 ] || fail "expected 6 fault lines from the live search: $(cat search.jsonl)"
# The fake NVML beside the fake driver throttles the GPU from its 6th reading on (the begin's and
# five measurements'): the library's watch reports it once, at measurement 5, with the heat.
grep -q '"event":"anomaly","index":5,"kind":"gpu_throttle".*sw_thermal' search.jsonl ||
  fail "no gpu_throttle anomaly at measurement 5 from NVML: $(grep -v measured search.jsonl)"
grep -q '"event":"anomaly","index":5,"kind":"gpu_hot"' search.jsonl || fail "no gpu_hot anomaly from NVML"
[ "$(count '"kind":"gpu_throttle"' search.jsonl)" = 1 ] || fail "a throttle that lasts is reported once"

# The live sentinel: the reference configuration timed after each measurement. A steady device
# raises no device anomaly; one whose kernels all run 1.5x slower after 600 launches (about the
# 23rd of 32 measurements) is flagged from there on, and never before.
steady=$source/tests/runtime/fault_suite/steady_suite.json
"$cli" measure --kernel "$steady" --all --device-ordinal 0 --sentinel-repeats 3 --events steady.jsonl >steady.out 2>&1 ||
  fail "measure with a sentinel failed: $(cat steady.out)"
python3 "$check" steady.jsonl >>check.out || fail "steady.jsonl does not follow docs/events.md"
[ "$(count '"event":"anomaly"' steady.jsonl)" = 0 ] || fail "a steady device was flagged: $(grep anomaly steady.jsonl)"
GPUFORECAST_FAKE_CUDA_SLOW_AFTER=600 "$cli" measure --kernel "$steady" --all --device-ordinal 0 --sentinel-repeats 3 \
  --events slowed.jsonl >slowed.out 2>&1 || fail "measure on a slowing device failed: $(cat slowed.out)"
python3 "$check" slowed.jsonl >>check.out || fail "slowed.jsonl does not follow docs/events.md"
first=$(grep -m1 '"event":"anomaly".*"kind":"slow_device"' slowed.jsonl | sed 's/.*"index":\([0-9]*\).*/\1/')
[ -n "$first" ] || fail "the slowed device was not flagged: $(grep -v measured slowed.jsonl)"
[ "$first" -ge 10 ] && [ "$first" -le 30 ] || fail "the first slow_device flag is at measurement $first, not near the slowdown"
[ "$(count '"kind":"slow_device"' slowed.jsonl)" -ge $((32 - first)) ] || fail "not every measurement after the slowdown was flagged"

# Stopped by SIGTERM while both devices hang: the hung batch lands (timed out), nothing after it
# is measured, and the log ends with the signal as its reason.
"$cli" measure --kernel "$suite" --all --timeout 4 --events stopped.jsonl >stopped.out 2>&1 &
pid=$!
trap 'kill -9 $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '"event":"begin"' stopped.jsonl 2>/dev/null && break; sleep 0.05; done
sleep 1
kill -TERM $pid
status=0
wait $pid || status=$?
trap - EXIT
[ "$status" -eq 143 ] || fail "measure stopped by SIGTERM should exit 143, it exited $status: $(tail -n 5 stopped.out)"
python3 "$check" stopped.jsonl >>check.out || fail "stopped.jsonl does not follow docs/events.md"
last=$(tail -n 1 stopped.jsonl)
echo "$last" | grep -q '"event":"end".*"stopped":true.*"reason":"interrupted by SIGTERM (signal 15)"' ||
  fail "the stopped log does not end with the SIGTERM reason: $last"
measured=$(count '"event":"measured"' stopped.jsonl)
[ "$measured" -ge 1 ] && [ "$measured" -lt 10 ] || fail "expected a stopped prefix of the 10 configurations, got $measured"
echo "fake_gpu_events: ok ($(tr '\n' ' ' < check.out))"
