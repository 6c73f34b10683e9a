#!/usr/bin/env bash
# A replayed search stopped by SIGTERM: it exits 143 as a shell expects, says so, and leaves an
# event log that ends in an end line giving the signal as its reason, with a fault line after
# every failed measurement (tests/monitor/check_events.py).
# usage: search_sigterm_test.sh GPUFORECAST_CLI DATA_DIR WORK_DIR SOURCE_DIR
set -euo pipefail
cli=$1 data=$2 work=$3 source=$4
fail() { echo "search_sigterm: $*" >&2; exit 1; }
replay=$data/benchmark_hub/cachefiles/convolution/RTX_2080_Ti.json.gz
[ -f "$replay" ] || fail "dataset $replay not found (set GPUFORECAST_DATA)"
rm -rf "$work"; mkdir -p "$work"; cd "$work"

# Each measurement holds for a hundredth of its stored compile + benchmark time: the run would last
# minutes; the test stops it once a few dozen measurements are in.
"$cli" search --replay "$replay" --strategy random --budget 3000 --seeds 1 --no-progress --time-scale 0.01 \
  --events events.jsonl >search.out 2>search.err &
pid=$!
trap 'kill -9 $pid 2>/dev/null || true' EXIT
for _ in $(seq 600); do
  [ "$(grep -c '"event":"measured"' events.jsonl 2>/dev/null || true)" -ge 30 ] && break
  kill -0 $pid 2>/dev/null || fail "the search ended by itself: $(cat search.err)"
  sleep 0.1
done
kill -TERM $pid
status=0
wait $pid || status=$?
trap - EXIT
[ "$status" -eq 143 ] || fail "a search stopped by SIGTERM should exit 143, it exited $status: $(tail -n 5 search.err)"
grep -q 'interrupted by signal 15' search.err || fail "the search does not say it was interrupted (search.err)"
python3 "$source/tests/monitor/check_events.py" events.jsonl >check.out || fail "events.jsonl does not follow docs/events.md"
last=$(tail -n 1 events.jsonl)
echo "$last" | grep -q '"event":"end"' || fail "the event log does not end with an end line: $last"
echo "$last" | grep -q '"stopped":true' || fail "the end line does not say the search was stopped: $last"
echo "$last" | grep -q '"reason":"interrupted by SIGTERM (signal 15)"' || fail "the end line gives no SIGTERM reason: $last"
echo "search_sigterm: ok ($(cat check.out))"
