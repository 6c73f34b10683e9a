#!/usr/bin/env bash
# `eval --protocol pairs --surrogate llm` against the real local server (scripts/llm-server,
# started here and stopped by its pid), then every fault: a wrong port, and a proxy that
# delays, garbles, answers HTTP 500 or 429, fails every other request, or dies mid-run.
# Each must end in deferral with a clear message; nothing answered may be lost.
# Usage: real_server_test.sh GPUFORECAST_CLI SOURCE_DIR DATA_DIR   (ctest label: llm)
set -uo pipefail
cli=$1 src=$2 data=$3
space=$data/benchmark_hub/cachefiles/convolution_milo/A4000.json.gz
[ -f "$space" ] || { echo "FAIL: shared datasets expected at $data (set GPUFORECAST_DATA): $space is missing"; exit 1; }
work=$(mktemp -d)
export GPUFORECAST_LLM_STATE=$work/server
proxy_pid=
cleanup() {
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
  "$src/scripts/llm-server" stop
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

url=$("$src/scripts/llm-server" start)
started=$?
# Never a skip: the pinned server runs on every x86-64 CPU with AVX2 (scripts/llm-server), and a
# machine that cannot start it fails here.
[ "$started" = 3 ] && fail "the pinned server cannot run on this CPU (scripts/llm-server says why above)"
[ "$started" = 0 ] || fail "scripts/llm-server did not start"
export GPUFORECAST_LLM_MODEL=SmolLM2-135M-Instruct
ask() {  # ask NAME BASE_URL extra-args...: output in $work/NAME.out, status in $rc
  local name=$1 base=$2
  shift 2
  GPUFORECAST_LLM_BASE_URL=$base "$cli" eval --protocol pairs --data "$space" --surrogate llm --seeds 1 \
    --pair-kind random --splits 2 "$@" > "$work/$name.out" 2>&1
  rc=$?
}
expect() {  # expect NAME ok|fail REGEX
  local name=$1 want=$2 re=$3
  if [ "$want" = ok ] && [ "$rc" != 0 ]; then fail "$name: exited $rc:"$'\n'"$(cat "$work/$name.out")"; fi
  if [ "$want" = fail ] && [ "$rc" = 0 ]; then fail "$name: succeeded, expected an error:"$'\n'"$(cat "$work/$name.out")"; fi
  grep -Eq "$re" "$work/$name.out" || fail "$name: output does not match \"$re\":"$'\n'"$(cat "$work/$name.out")"
  echo "ok: $name"
}
start_proxy() {  # start_proxy MODE: sets $proxy_url
  rm -f "$work/proxy.port"
  python3 "$src/tests/llm/llm_proxy.py" "$url" "$1" "$work/proxy.port" &
  proxy_pid=$!
  for _ in $(seq 1 100); do [ -f "$work/proxy.port" ] && break; sleep 0.05; done
  proxy_url=http://127.0.0.1:$(cat "$work/proxy.port")
}
stop_proxy() { kill "$proxy_pid" 2>/dev/null; wait "$proxy_pid" 2>/dev/null; proxy_pid=; }

ask direct "$url" --pairs 4
expect direct ok "llm convolution_milo@.* random .*wrong_direction"
grep -q "4 answered (0 text-only), 0 deferred" "$work/direct.out" || fail "direct: not all answered with log-probabilities:"$'\n'"$(cat "$work/direct.out")"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
ask wrong_port "http://127.0.0.1:$port" --pairs 4
expect wrong_port fail "answered 0 of 4 random pairs; first failure: request to http://127.0.0.1:$port/v1/chat/completions failed: .*onnect"

for mode in "delay=3" malformed status=500 status=429; do
  start_proxy "$mode"
  ask "proxy_$mode" "$proxy_url" --pairs 4 --llm-timeout 1
  stop_proxy
  case $mode in
    delay=3) expect "proxy_$mode" fail "answered 0 of 4 .*first failure: .*imeout" ;;
    malformed) expect "proxy_$mode" fail "answered 0 of 4 .*first failure: .*not JSON" ;;
    status=500) expect "proxy_$mode" fail "answered 0 of 4 .*first failure: .*HTTP 500" ;;
    status=429) expect "proxy_$mode" fail "answered 0 of 4 .*first failure: .*HTTP 429" ;;
  esac
done

start_proxy flaky
ask flaky "$proxy_url" --pairs 4
stop_proxy
expect flaky ok "4 answered \(0 text-only\), 0 deferred"
grep -Eq "\(([1-9][0-9]*) retries\)" "$work/flaky.out" || fail "flaky: no retries counted"

# Killed mid-run: the proxy forwards 3 requests and dies. Those answers are kept (cached);
# the rest are deferred with the reason; a rerun against the server serves the 3 from the cache.
# (Without --llm-in-flight the client keeps 4 requests in flight.)
start_proxy die_after=3
ask killed "$proxy_url" --pairs 6 --llm-in-flight 1 --llm-cache "$work/cache"
proxy_pid=
expect killed ok "3 answered \(0 text-only\), 3 deferred"
grep -q "first: request to $proxy_url" "$work/killed.out" || fail "killed: the reason names no endpoint"
ask rerun "$url" --pairs 6 --llm-in-flight 1 --llm-cache "$work/cache"
expect rerun ok "3 from the cache, 6 answered"
echo "all LLM server and fault cases passed"
