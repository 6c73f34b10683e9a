#!/usr/bin/env python3
"""Seed corpus for fuzz/cache_reader_fuzzer: slices of the real measurement files, each cut after
its first entries and closed again so it stays valid (plain and gzipped), a T4 slice, and a few
hand-made files for the corners (unclosed Kernel Tuner file, failed entries, names after cache).

Usage: fuzz/seeds/cache_reader.py OUTDIR   (datasets from $GPUFORECAST_DATA or ../shared/datasets)
"""
import gzip
import json
import os
import pathlib
import sys

ENTRIES = 20   # entries per slice (the brief: first ~20)
SMALL = 2      # small slices mutate faster


def kernel_tuner_layout(doc: dict) -> str:
    """Kernel Tuner's own layout: the header, then one line per entry (append-only)."""
    header = {k: v for k, v in doc.items() if k != "cache"}
    text = json.dumps(header, indent="")[:-2] + ',\n"cache": {\n'
    text += ",\n".join(json.dumps(k) + ": " + json.dumps(v) for k, v in doc["cache"].items())
    return text + "}\n}\n"


def cache_slice(doc: dict, n: int, style: str) -> str:
    """The first n entries of a cache file, closed again, in the file's own layout."""
    part = dict(doc, cache=dict(list(doc["cache"].items())[:n]))
    if style == "compact":
        return json.dumps(part)
    if style == "indent":
        return json.dumps(part, indent=2)
    return kernel_tuner_layout(part)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    root = pathlib.Path(__file__).resolve().parents[2]
    data = pathlib.Path(os.environ.get("GPUFORECAST_DATA") or root.parent / "shared" / "datasets")
    files = sorted((data / "benchmark_hub" / "cachefiles").glob("*/*.json.gz"))
    if not files:
        print(f"cache_reader.py: no files under {data}/benchmark_hub/cachefiles (set GPUFORECAST_DATA)",
              file=sys.stderr)
        return 1
    seeds = {}
    for path in files:
        text = gzip.decompress(path.read_bytes()).decode()
        stem = f"{path.parent.name}_{path.name.split('.')[0]}"
        if path.name.split(".")[0].endswith("_T4"):
            doc = json.loads(text)
            for n in (ENTRIES, SMALL):
                part = dict(doc, results=doc["results"][:n])
                # Failed results sit later in the file; keep one so the slice reaches that code.
                failed = [r for r in doc["results"] if r.get("invalidity") != "correct"][:1]
                part["results"] = part["results"] + failed
                seeds[f"{stem}_{n}.json"] = json.dumps(part).encode()
            continue
        doc = json.loads(text)
        style = "kt" if '\n"cache": {\n' in text else ("compact" if text.count("\n") < 5 else "indent")
        for n in (ENTRIES, SMALL):
            seeds[f"{stem}_{n}.json"] = cache_slice(doc, n, style).encode()
        # Failed entries (string `time`) are rare near the start: a slice with some of them.
        failed = [(k, v) for k, v in doc["cache"].items() if isinstance(v.get("time"), str)][:3]
        if failed:
            part = dict(doc, cache=dict(list(doc["cache"].items())[:SMALL] + failed))
            seeds[f"{stem}_failed.json"] = kernel_tuner_layout(part).encode()
        # Kernel Tuner's unclosed append-only file after a crash.
        closed = kernel_tuner_layout(dict(doc, cache=dict(list(doc["cache"].items())[:SMALL])))
        seeds[f"{stem}_unclosed.json"] = (closed[: -len("}\n}\n")] + ",\n").encode()
    seeds["names_after_cache.json"] = (
        b'{"cache": {"1,2": {"a": 1, "b": 2, "time": 1.5, "times": [1.5, 1.5], "GB/s": 3}}, '
        b'"tune_params_keys": ["a", "b"], "device_name": "A100"}')
    seeds["nan.json"] = b'{"tune_params_keys": ["a"], "cache": {"1": {"a": 1, "time": NaN, "times": [NaN]}}}'
    n = 0
    for name, body in seeds.items():
        (out / name).write_bytes(body)
        (out / (name + ".gz")).write_bytes(gzip.compress(body, mtime=0))
        n += 2
    print(f"cache_reader.py: wrote {n} seeds to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
