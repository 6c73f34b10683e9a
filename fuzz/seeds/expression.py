#!/usr/bin/env python3
"""Seed corpus for fuzz/expression_fuzzer: the T1 conditions of every kernel in the shared
datasets (plus a few hand-written expressions that reach every operator), one file each.

Usage: fuzz/seeds/expression.py OUTDIR   (datasets from $GPUFORECAST_DATA or ../shared/datasets)
"""
import json
import os
import pathlib
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    root = pathlib.Path(__file__).resolve().parents[2]
    data = pathlib.Path(os.environ.get("GPUFORECAST_DATA") or root.parent / "shared" / "datasets")
    kernels = sorted((data / "benchmark_hub" / "kernels").glob("*.json"))
    if not kernels:
        print(f"expression.py: no T1 files under {data}/benchmark_hub/kernels (set GPUFORECAST_DATA)",
              file=sys.stderr)
        return 1
    seeds = []
    for path in kernels:
        doc = json.loads(path.read_text())
        for i, cond in enumerate(doc["ConfigurationSpace"]["Conditions"]):
            seeds.append((f"{path.stem}_{i}", cond["Expression"]))
        # Launch geometry and argument sizes use the same language (ProblemSize[0], max(...)).
        spec = doc.get("KernelSpecification", {})
        for axis, expr in spec.get("GlobalSize", {}).items():
            seeds.append((f"{path.stem}_global_{axis}", str(expr)))
        for j, arg in enumerate(spec.get("Arguments", [])):
            seeds.append((f"{path.stem}_arg_{j}", str(arg.get("Size", ""))))
    seeds += [
        ("ops", "-7 // 2 + 7 % -3 * 2 ** 10 / 3.5 - +x"),
        ("chain", "1 < x <= 3 != 4 == 4 >= 2 > 0"),
        ("bool", "not (x and s) or s == 'abc' and x != 1"),
        ("calls", "min(1, 2.5, x) + max(ProblemSize) + abs(-3) + int('12') + float(2) + len(s)"),
        ("index", "ProblemSize[-1] * Mixed[1] + len(Empty)"),
        ("hex", "0x1F * 1e3 * .5"),
    ]
    for name, text in seeds:
        (out / f"{name}.txt").write_text(text)
    print(f"expression.py: wrote {len(seeds)} seeds to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
