#!/usr/bin/env python3
"""Vectorised forecasts from Python against the same batch from C++.

The same model and the same configurations (a whole cache file's space) are forecast by
Model.forecast (a pandas DataFrame and a list of dicts: conversion, the C++ batch with the GIL
released, numpy arrays back) and by gpuforecast::forecast() on candidates built in C++ (timed
inside the module). Prints the median time per batch of each and the Python overhead; --json
prints the same as JSON. The target: the DataFrame path costs at most 10% more than C++.

    python benchmarks/python_forecast_speed.py [--surrogate xgboost] [--repeats 7] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import gpuforecast


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--surrogate", default="xgboost", help="surrogate kind to train (default xgboost)")
    ap.add_argument("--model", default=None, help="use this model file instead of training one")
    ap.add_argument("--space", default="convolution_milo/A100", help="KERNEL/DEVICE cache whose configs are forecast")
    ap.add_argument("--train", default="convolution_milo/A4000", help="KERNEL/DEVICE cache to train on")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--data", default=os.environ.get("GPUFORECAST_DATA", ""))
    a = ap.parse_args()
    hub = os.path.join(a.data, "benchmark_hub", "cachefiles")
    if not os.path.isdir(hub):
        ap.error("give --data or set GPUFORECAST_DATA to the datasets folder")
    cache = lambda s: os.path.join(hub, *s.split("/")) + ".json.gz"  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        if a.model:
            model = gpuforecast.load(a.model)
        else:
            model = gpuforecast.train([cache(a.train)], surrogate=a.surrogate, out=os.path.join(tmp, "m.gfm"))
        data = gpuforecast.read_cache(cache(a.space))
        df = data.to_dataframe()[data.parameters]
        dicts = data.configs()
        kernel, device, ps = data.kernel, data.device, data.problem_size

        def timed(fn):
            fn()  # warm
            out = []
            for _ in range(a.repeats):
                t0 = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t0)
            return statistics.median(out)

        names, columns = gpuforecast._columns.columns_of(df)
        cpp_runs = model._native._time_forecast_in_cpp(kernel, device, ps, names, columns, a.repeats + 1)[1:]
        cpp = statistics.median(cpp_runs)
        py_df = timed(lambda: model.forecast(df, device=device, problem_size=ps, kernel=kernel))
        py_dicts = timed(lambda: model.forecast(dicts, device=device, problem_size=ps, kernel=kernel))
    rows = [("C++ forecast() on built candidates", cpp), ("Python Model.forecast(DataFrame)", py_df),
            ("Python Model.forecast(list of dicts)", py_dicts)]
    report = {"surrogate": model.info["surrogate_kind"], "batch": len(dicts), "repeats": a.repeats,
              "seconds_per_batch": {"cpp": cpp, "python_dataframe": py_df, "python_dicts": py_dicts},
              "overhead_dataframe": py_df / cpp - 1, "overhead_dicts": py_dicts / cpp - 1}
    if a.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{model.info['surrogate_kind']} model, batch of {len(dicts)} configurations ({a.space}), "
          f"median of {a.repeats} runs")
    for name, s in rows:
        print(f"  {name:40} {1000 * s:9.2f} ms  {len(dicts) / s:12.0f} forecasts/s  {100 * (s / cpp - 1):+6.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
