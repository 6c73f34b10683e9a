#!/usr/bin/env bash
# A replayed search watched as a user watches it, while it runs:
#   gpuforecast search --replay ... --events --metrics-port 0 --report --time-scale (slowed down)
# 1. the metrics it serves are scraped once measurements have landed and pass `promtool check metrics`;
# 2. headless Chromium loads the live page; its charts must hold data (the SVGs' data-points);
#    a screenshot is kept beside the test's files (live.png);
# 3. SIGINT stops the search as its budget would: it exits 130, the event log ends with an end
#    line and passes tests/monitor/check_events.py, and the report is written;
# 4. Chromium opens the report from disk, without the server: its charts hold the same data (report.png).
# usage: dashboard_browser_test.sh GPUFORECAST_CLI DATA_DIR WORK_DIR SOURCE_DIR
set -euo pipefail
cli=$1 data=$2 work=$3 source=$4
fail() { echo "dashboard_in_a_browser: $*" >&2; exit 1; }

chromium=$(command -v chromium-headless-shell || command -v chromium || true)
[ -n "$chromium" ] || fail "no headless Chromium on PATH (scripts/setup installs Debian's chromium-headless-shell)"
command -v promtool >/dev/null || fail "no promtool on PATH (scripts/setup installs Debian's prometheus)"
command -v curl >/dev/null || fail "no curl on PATH"
replay=$data/benchmark_hub/cachefiles/convolution_milo/A100.json.gz
[ -f "$replay" ] || fail "dataset file $replay not found (set GPUFORECAST_DATA)"

rm -rf "$work"
mkdir -p "$work"
cd "$work"
browse() {  # URL OUTPUT-DOM OUTPUT-PNG: the page after its scripts ran (virtual time), and a screenshot
  local flags=(--no-sandbox --headless --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$work/chromium"
    --virtual-time-budget=4000 --window-size=1400,1500)
  timeout 120 "$chromium" "${flags[@]}" --dump-dom "$1" >"$2" 2>chromium.log || fail "Chromium could not load $1 (chromium.log)"
  timeout 120 "$chromium" "${flags[@]}" --screenshot="$3" "$1" >>chromium.log 2>&1 || fail "Chromium could not screenshot $1"
  [ -s "$3" ] || fail "no screenshot $3"
}
points() {  # DOM CHART-ID: the number of points the page drew in that chart
  sed -n "s/.*<svg class=\"chart\" id=\"$2\" data-points=\"\([0-9]*\)\".*/\1/p" "$1" | head -n1
}

# Each replayed measurement holds for a tenth of its stored compile + benchmark time (about
# 0.2 s here), so the run lasts minutes unless it is interrupted; the test interrupts it.
"$cli" search --replay "$replay" --strategy surrogate --budget 2000 --seeds 1 --first-seed 7 --no-progress \
  --screen on --time-scale 0.1 --metrics-port 0 --events events.jsonl --report report.html >search.out 2>search.err &
pid=$!
trap 'kill -9 $pid 2>/dev/null || true' EXIT

url=""
for _ in $(seq 600); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' search.err | head -n1 || true)
  [ -n "$url" ] && break
  kill -0 $pid 2>/dev/null || fail "the search ended before it served anything: $(cat search.err)"
  sleep 0.1
done
[ -n "$url" ] || fail "the search never printed its dashboard address: $(cat search.err)"
echo "serving at $url"

# 1. Metrics, once the model has forecast (its initial design is 20 measurements).
measured=0
for _ in $(seq 1200); do
  curl -sf "${url}metrics" >metrics.txt || fail "GET ${url}metrics failed"
  measured=$(awk '/^gpuforecast_measurements_total[{]/ {s += $NF} END {print s + 0}' metrics.txt)
  [ "$measured" -ge 40 ] && break
  kill -0 $pid 2>/dev/null || fail "the search ended early: $(cat search.err)"
  sleep 0.1
done
[ "$measured" -ge 40 ] || fail "fewer than 40 measurements after two minutes ($measured)"
promtool check metrics <metrics.txt >promtool.out 2>&1 || fail "promtool check metrics: $(cat promtool.out)"
grep -q '^gpuforecast_run_finished{run="surrogate seed 7"} 0' metrics.txt || fail "scraped after the run ended (metrics.txt)"
for family in forecasts_total measurements_total best_time_seconds interval_miss_ratio \
  measurement_duration_seconds_bucket forecast_round_duration_seconds_count answered_risk_alpha_ratio; do
  grep -q "^gpuforecast_$family" metrics.txt || fail "no gpuforecast_$family in the scraped metrics (metrics.txt)"
done
echo "metrics: $measured measurements, promtool accepts them"

# 2. The live page in a browser, while the search runs.
browse "$url" live.html live.png
grep -q 'id="status" class="live"' live.html || fail "the live page does not say the run is live (live.html)"
for chart in best risk scatter; do
  n=$(points live.html $chart)
  [ -n "$n" ] && [ "$n" -gt 0 ] || fail "live page: chart '$chart' drew no data (live.html, live.png)"
  echo "live page: chart $chart has $n points"
done

# 3. SIGINT: the search stops, writes everything and says so.
kill -INT $pid
status=0
wait $pid || status=$?
trap - EXIT
[ "$status" -eq 130 ] || fail "an interrupted search should exit 130, it exited $status: $(tail -n 5 search.err)"
grep -q 'interrupted by signal 2' search.err || fail "the interrupted search does not say so (search.err)"
python3 "$source/tests/monitor/check_events.py" events.jsonl || fail "events.jsonl does not follow docs/events.md"
[ -s report.html ] || fail "no report.html written"

# 4. The report, from disk, with no server left.
browse "file://$work/report.html" report_dom.html report.png
grep -q 'id="status" class="done"' report_dom.html || fail "the report does not say the run finished (report_dom.html)"
for chart in best risk scatter; do
  n=$(points report_dom.html $chart)
  [ -n "$n" ] && [ "$n" -gt 0 ] || fail "report: chart '$chart' drew no data (report_dom.html, report.png)"
  echo "report: chart $chart has $n points"
done
grep -Eq '<td class="num">[0-9]+ of [0-9]+ \([0-9]+%\)</td>' report_dom.html ||
  fail "the report does not show how many proposals the run screened out (report_dom.html, report.png)"
echo "dashboard_in_a_browser: ok (screenshots: $work/live.png, $work/report.png)"
