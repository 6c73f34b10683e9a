#!/usr/bin/env python3
"""What a search and an evaluation produce for fixed seeds, kept to show that a refactoring
changed nothing (issue 40: "the same seeds give identical traces and JSON, wall-clock fields
aside, before and after").

    behaviour_snapshot.py record  CLI DATA SNAPSHOT_DIR   # writes the snapshot (after a deliberate change)
    behaviour_snapshot.py compare CLI DATA SNAPSHOT_DIR   # runs again; exit 1 naming the first difference

CLI is the gpuforecast program, DATA the shared datasets folder. Each case is one command line;
its --json output and the files it writes (event logs, T4 traces) are kept with the fields that
measure wall-clock time removed. Every replay strategy (with and without screening, on one and
on several simulated workers) and eval of every protocol are covered; the Kernel Tuner strategy
is checked to give the replay's traces by python/tests/test_kernel_tuner.py.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

# Fields that time the machine rather than describe the result.
WALL_CLOCK = {"t", "decide_s", "mean_wall_seconds", "fit_seconds", "fit_s", "predict_seconds", "wall_seconds",
              "strategy_seconds", "seconds_per_run", "timestamp", "elapsed_s"}


def cases(data: str, work: pathlib.Path):
    hub = f"{data}/benchmark_hub/cachefiles"
    conv = f"{hub}/convolution_milo"
    pnpoly = f"{hub}/pnpoly"
    search = ["search", "--no-progress", "--budget", "30", "--seeds", "2", "--json"]
    model = work / "model.gfm"
    return [
        ("search_strategies", search + ["--replay", f"{conv}/A4000.json.gz", "--strategy", "random,genetic,surrogate",
                                        "--events", "{work}/events.jsonl", "--trace", "{work}/trace.json"]),
        ("search_screening", search + ["--replay", f"{conv}/A4000.json.gz", "--strategy", "surrogate",
                                       "--screen", f"alpha=0.2,delta=0.1,calibration={conv}/A6000.json.gz",
                                       "--events", "{work}/events.jsonl"]),
        ("search_workers", search + ["--replay", f"{pnpoly}/RTX_3090.json.gz", "--strategy", "random,surrogate",
                                     "--workers", "4", "--events", "{work}/events.jsonl"]),
        ("search_mean_sampling", search + ["--replay", f"{pnpoly}/RTX_3090.json.gz", "--strategy", "genetic",
                                           "--sampling", "mean", "--space", "cached"]),
        ("eval_interpolate", ["eval", "--protocol", "interpolate", "--data", f"{pnpoly}/RTX_3090.json.gz",
                              "--surrogate", "default", "--surrogate", "xgboost", "--surrogate", "ridge",
                              "--train-fraction", "0.05", "--seeds", "2", "--json"]),
        ("eval_transfer_device", ["eval", "--protocol", "transfer-device", "--target", f"{conv}/A4000.json.gz",
                                  "--train", f"{conv}/A100.json.gz", "--target-samples", "0", "--target-samples", "20",
                                  "--surrogate", "default", "--seeds", "1", "--json"]),
        ("eval_transfer_kernel", ["eval", "--protocol", "transfer-kernel", "--target", f"{pnpoly}/RTX_3090.json.gz",
                                  "--train", f"{hub}/convolution/RTX_3090.json.gz", "--target-samples", "20",
                                  "--surrogate", "default", "--seeds", "1", "--json"]),
        ("eval_pairs", ["eval", "--protocol", "pairs", "--data", f"{pnpoly}/RTX_3090.json.gz", "--surrogate",
                        "default", "--pairs", "300", "--seeds", "1", "--json"]),
        ("train", ["train", "--data", f"{pnpoly}/RTX_2080_Ti.json.gz", "--surrogate", "default", "--out", str(model)]),
        ("eval_selective", ["eval", "--selective", "--model", str(model), "--data", f"{pnpoly}/RTX_Titan.json.gz",
                            "--seeds", "2", "--json"]),
    ]


def normalise(x, roots=()):
    """Without the wall-clock fields, and with paths under `roots` (the datasets, the scratch
    folder) reduced to their file names: they differ between checkouts."""
    if isinstance(x, dict):
        return {k: normalise(v, roots) for k, v in x.items() if k not in WALL_CLOCK}
    if isinstance(x, list):
        return [normalise(v, roots) for v in x]
    if isinstance(x, str) and any(r in x for r in roots):
        return os.path.basename(x)
    return x


def file_name(key: str) -> str:
    return key[: -len(".jsonl")] + ".json" if key.endswith(".jsonl") else key if key.endswith(".json") else key + ".json"


def outputs_of(name: str, args: list, cli: str, work: pathlib.Path, data: str) -> dict:
    """Runs one case; returns {file name: normalised content} for its stdout and files."""
    case_dir = work / name
    case_dir.mkdir(parents=True)
    args = [a.replace("{work}", str(case_dir)) for a in args]
    p = subprocess.run([cli] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{name}: gpuforecast {' '.join(args)}\nexited {p.returncode}:\n{p.stdout}{p.stderr}")
    roots = (str(work), data)
    out = {}
    if "--json" in args:
        out[f"{name}.json"] = normalise(json.loads(p.stdout), roots)
    for f in sorted(case_dir.iterdir()):
        text = f.read_text()
        if f.suffix == ".jsonl":
            out[f"{name}.{f.name}"] = [normalise(json.loads(line), roots) for line in text.splitlines() if line]
        else:
            out[f"{name}.{f.name}"] = normalise(json.loads(text), roots)
    return out


def first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return f"{path}: {a!r} became {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: {'added' if k in b else 'removed'}"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items became {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} became {b!r}"


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("record", "compare"):
        raise SystemExit(__doc__)
    mode, cli, data, snapshot = sys.argv[1], sys.argv[2], sys.argv[3], pathlib.Path(sys.argv[4])
    work = pathlib.Path(tempfile.mkdtemp(prefix="gpuforecast-snapshot-"))
    try:
        produced = {}
        for name, args in cases(data, work):
            produced.update(outputs_of(name, args, cli, work, data))
        if mode == "record":
            if snapshot.exists():
                shutil.rmtree(snapshot)
            snapshot.mkdir(parents=True)
            for name, content in produced.items():
                (snapshot / file_name(name)).write_text(json.dumps(content, indent=0, sort_keys=True) + "\n")
            print(f"recorded {len(produced)} outputs in {snapshot}")
            return
        failures = []
        recorded = {f.name: f for f in snapshot.glob("*.json")}
        for name, content in produced.items():
            file = file_name(name)
            if file not in recorded:
                failures.append(f"{file}: not in the snapshot")
                continue
            d = first_difference(json.loads(recorded.pop(file).read_text()), json.loads(json.dumps(content)))
            if d:
                failures.append(f"{file}: {d}")
        failures += [f"{f}: in the snapshot, not produced" for f in recorded]
        if failures:
            print("behaviour changed (a deliberate change: record again, with the reason in the commit):")
            for f in failures:
                print("  " + f)
            sys.exit(1)
        print(f"{len(produced)} outputs identical to the snapshot")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
