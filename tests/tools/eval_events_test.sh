#!/usr/bin/env bash
# `gpuforecast eval --selective --events`: every test point's decision, with its measured time and
# loss, as an event log that follows docs/events.md (tests/monitor/check_events.py); one file per
# seed; --events without --selective, and a path that cannot be written, are named.
# usage: eval_events_test.sh GPUFORECAST_CLI DATA_DIR WORK_DIR SOURCE_DIR
set -euo pipefail
cli=$1 data=$2 work=$3 source=$4
fail() { echo "eval_events: $*" >&2; exit 1; }
files=$data/benchmark_hub/cachefiles/dedispersion_milo
[ -f "$files/A4000.json.gz" ] || fail "dataset $files/A4000.json.gz not found (set GPUFORECAST_DATA)"
rm -rf "$work"; mkdir -p "$work"; cd "$work"

"$cli" train --data "$files/A4000.json.gz" --out knn.gfm --surrogate knn >train.out 2>&1 || fail "train: $(cat train.out)"
"$cli" eval --selective --model knn.gfm --data "$files/A100.json.gz" --calibration-fraction 0.3 --seeds 2 \
  --events run.jsonl >eval.out 2>&1 || fail "eval: $(cat eval.out)"
for seed in 0 1; do
  f=run.seed$seed.jsonl
  [ -s "$f" ] || fail "no $f"
  counts=$(python3 "$source/tests/monitor/check_events.py" "$f") || fail "$f does not follow docs/events.md"
  # The test half of a 30/70 split: as many decisions as the table's test column.
  test_size=$(awk -F'|' -v s=$seed '$2 + 0 == s && $4 ~ /[0-9]/ {gsub(/ /, "", $4); print $4}' eval.out)
  [ "$counts" = "begin=1 decision=$test_size end=1" ] || fail "$f holds '$counts', expected $test_size decisions"
  grep -q '"event":"decision".*"time_ms":[0-9.]*.*"loss":\(true\|false\)' "$f" || fail "$f: decisions lack their measured time or loss"
done

if "$cli" eval --protocol interpolate --data "$files/A100.json.gz" --events x.jsonl >bad.out 2>&1; then
  fail "--events without --selective was accepted"
fi
grep -q 'add --selective' bad.out || fail "--events without --selective: unclear error: $(cat bad.out)"
if "$cli" eval --selective --model knn.gfm --data "$files/A100.json.gz" --seeds 1 --events /nonexistent-dir/x.jsonl \
  >bad.out 2>&1; then
  fail "an unwritable --events path was accepted"
fi
grep -q '/nonexistent-dir/x.jsonl: cannot open the event log' bad.out || fail "unwritable path not named: $(cat bad.out)"
echo "eval_events: ok"
