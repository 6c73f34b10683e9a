#!/usr/bin/env python3
"""Checks an event log against docs/events.md, schema version 2: every line a JSON object with
the common fields, seq 0, 1, 2, ..., begin first, and each kind with its fields and their types;
a fault line right after the failed measured line it is about; a rank_lost line says where the
candidate it held went. A search stopped by a signal ends with an end line too, giving the
reason; one killed may not (--allow-no-end).
Prints the counts per kind; exits 1 naming the line and the field on the first violation."""
import json
import sys

NUMBER = (int, float)
NULLABLE_NUMBER = (int, float, type(None))
COMMON = {"v": int, "seq": int, "t": NUMBER, "run": str, "event": str}
KINDS = {
    "begin": {"kernel": str, "device": str, "problem_size": list, "parameters": list, "budget": dict},
    "forecasts": {"proposed": int, "answered": int, "deferred": int, "best_forecast_ms": NULLABLE_NUMBER},
    "decision": {"config": dict, "forecast_ms": NULLABLE_NUMBER, "interval_ms": list, "confidence": NULLABLE_NUMBER,
                 "answered": bool, "p_fail": NULLABLE_NUMBER},
    "screened": {"incumbent_ms": NULLABLE_NUMBER, "certified": bool, "margin": NULLABLE_NUMBER,
                 "improvements": int, "risk_upper_bound": NULLABLE_NUMBER, "proposed": int, "skipped": int,
                 "reason": str},
    "measured": {"index": int, "config": dict, "status": str, "time_ms": NULLABLE_NUMBER, "ci_ms": list,
                 "samples": int, "compile_ms": NULLABLE_NUMBER, "cost_s": NULLABLE_NUMBER,
                 "best_ms": NULLABLE_NUMBER, "forecast": (dict, type(None))},
    "anomaly": {"index": int, "kind": str, "config": dict, "statistic": NULLABLE_NUMBER,
                "p_value": NULLABLE_NUMBER, "detail": str},
    "fault": {"index": int, "kind": str, "config": dict, "detail": str},
    "resumed": {"from": str, "configurations": int},
    "rank_lost": {"index": int, "rank": int, "device": str, "reason": str, "held": (dict, type(None)),
                  "went": (str, type(None))},
    "round": {"round": int, "measured": int, "best_ms": NULLABLE_NUMBER},
    "end": {"measurements": int, "best_ms": NULLABLE_NUMBER, "stopped": bool},
}
FORECAST = {"forecast_ms": NULLABLE_NUMBER, "interval_ms": list, "confidence": NULLABLE_NUMBER,
            "answered": bool, "p_fail": NULLABLE_NUMBER}
STATUSES = {"ok", "compile_failed", "launch_failed", "runtime_failed", "invalid", "timeout"}
FAULT_KINDS = {"compile_failed": "compile_error", "launch_failed": "launch_failure", "runtime_failed": "crash",
               "timeout": "hang"}
VERSION = 2


def fail(path, n, message):
    sys.exit(f"{path}:{n}: {message}")


def check_fields(path, n, obj, fields, where):
    for name, kind in fields.items():
        if name not in obj:
            fail(path, n, f"{where}: field '{name}' missing")
        value = obj[name]
        # bool is an int to Python: an int field must not hold true/false.
        if isinstance(value, bool) and kind is not bool and (kind is int or int in (kind if isinstance(kind, tuple) else (kind,))):
            fail(path, n, f"{where}: field '{name}' is a bool, expected {kind}")
        if not isinstance(value, kind):
            fail(path, n, f"{where}: field '{name}' = {value!r} is not {kind}")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    allow_no_end = "--allow-no-end" in sys.argv
    if len(args) != 1:
        sys.exit("usage: check_events.py EVENTS.jsonl [--allow-no-end]")
    path = args[0]
    counts = {}
    last = None
    last_measured = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                fail(path, n, f"not JSON: {e}")
            check_fields(path, n, obj, COMMON, "every line")
            if obj["v"] != VERSION:
                fail(path, n, f"version {obj['v']}, expected {VERSION}")
            if obj["seq"] != n - 1:
                fail(path, n, f"seq {obj['seq']}, expected {n - 1}")
            kind = obj["event"]
            if kind not in KINDS:
                fail(path, n, f"unknown event '{kind}'")
            if (n == 1) != (kind == "begin"):
                fail(path, n, "begin must be the first line, and only it")
            if kind == "resumed" and n != 2:
                fail(path, n, "a resumed line must come right after begin")
            check_fields(path, n, obj, KINDS[kind], kind)
            if kind == "measured":
                if obj["status"] not in STATUSES:
                    fail(path, n, f"status '{obj['status']}' unknown")
                if obj["forecast"] is not None:
                    check_fields(path, n, obj["forecast"], FORECAST, "measured.forecast")
            # Every fault has its line right after its measured line, and only a fault has one.
            expected = FAULT_KINDS.get(last_measured["status"]) if last == "measured" else None
            if expected and kind != "fault":
                fail(path, n, f"measurement {last_measured['index']} failed ({last_measured['status']}): expected its fault line")
            if kind == "fault":
                if last != "measured" or obj["index"] != last_measured["index"] or obj["kind"] != expected:
                    fail(path, n, f"fault '{obj['kind']}' does not follow the failed measurement it names")
            if kind == "rank_lost" and (obj["went"] not in (None, "requeued", "failed") or
                                        (obj["held"] is None) != (obj["went"] is None)):
                fail(path, n, f"rank_lost: 'went' = {obj['went']!r} must be requeued or failed for a held candidate, "
                              f"null for none")
            if kind == "end" and obj["stopped"] and not isinstance(obj.get("reason"), str):
                fail(path, n, "a stopped search's end line gives no reason")
            if kind == "measured":
                last_measured = obj
            counts[kind] = counts.get(kind, 0) + 1
            last = kind
    if last is None:
        fail(path, 0, "empty event log")
    if last != "end" and not allow_no_end:
        fail(path, n, f"the last line is '{last}', expected 'end'")
    print(" ".join(f"{k}={v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
