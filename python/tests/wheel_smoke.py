"""Smoke check of an installed wheel (scripts/test-wheel runs it; not a pytest file).

    python wheel_smoke.py SOURCE_ROOT EXPECTED_VERSION

Run outside the repository with no compilers on PATH: imports gpuforecast, reads a cache,
trains, loads and forecasts with a model, runs the Kernel Tuner strategy in simulation mode, and
reads /proc/self/maps to check that libxgboost and libcurl come from the wheel (gpuforecast.libs)
and no libfmt is mapped. Prints one row per check; exits 1 when one fails.
"""
import gzip
import os
import shutil
import sys
import tempfile
import time

rows: list[tuple[str, str, str, float]] = []


def check(name: str):
    def run(fn):
        t = time.perf_counter()
        try:
            detail, ok = fn(), True
        except Exception as e:  # noqa: BLE001  (every failure becomes a row)
            detail, ok = f"{type(e).__name__}: {e}", False
        rows.append((name, "ok" if ok else "FAIL", str(detail), time.perf_counter() - t))
        return fn
    return run


source_root = os.path.realpath(sys.argv[1])
expected_version = sys.argv[2]
hub = os.path.join(os.environ["GPUFORECAST_DATA"], "benchmark_hub")
conv = os.path.join(hub, "cachefiles", "convolution_milo")
t1_path = os.path.join(hub, "kernels", "convolution_milo.json")
work = tempfile.mkdtemp(prefix="gpuforecast-wheel-")


@check("no compiler or cmake on PATH")
def _():
    found = {t: shutil.which(t) for t in ("cc", "c++", "gcc", "g++", "clang", "cmake", "ninja", "make", "ld")}
    found = {t: p for t, p in found.items() if p}
    assert not found, f"found {found}"
    return f"PATH={os.environ.get('PATH')}"


import gpuforecast  # noqa: E402  (after the PATH check: it must not need one)
import gpuforecast.kernel_tuner as gk  # noqa: E402


@check("import from the installed wheel")
def _():
    where = os.path.realpath(gpuforecast.__file__)
    sources = os.path.join(source_root, "python") + os.sep
    assert not where.startswith(sources), f"{where} is the source tree's package"
    site = os.path.realpath(os.path.join(sys.prefix, "lib")) + os.sep
    assert where.startswith(site) and "site-packages" in where, f"{where} is not in {sys.prefix}'s site-packages"
    return where


@check("__version__ == pyproject == C++")
def _():
    assert gpuforecast.__version__ == expected_version, (gpuforecast.__version__, expected_version)
    return gpuforecast.__version__


@check("read_cache")
def _():
    data = gpuforecast.read_cache(os.path.join(conv, "A4000.json.gz"))
    assert len(data) > 1000 and data.parameters
    return f"A4000.json.gz: {len(data)} configurations, {len(data.parameters)} parameters"


model_path = os.path.join(work, "xgboost.gfm")


@check("train (xgboost)")
def _():
    gpuforecast.train([os.path.join(conv, "A4000.json.gz")], surrogate="xgboost", out=model_path, seed=1)
    return f"{os.path.getsize(model_path)} bytes"


@check("load + forecast")
def _():
    import numpy as np
    model = gpuforecast.load(model_path)
    data = gpuforecast.read_cache(os.path.join(conv, "A100.json.gz"))
    out = model.forecast(data.configs()[:200], device="A100", problem_size=data.problem_size)
    assert out["median_ms"].shape == (200,) and np.all(np.isfinite(out["median_ms"]))
    return f"200 forecasts, median of medians {np.median(out['median_ms']):.3f} ms"


@check("Kernel Tuner strategy (simulation mode)")
def _():
    import json
    import kernel_tuner
    plain = os.path.join(work, "A100.json")
    with gzip.open(os.path.join(conv, "A100.json.gz"), "rb") as src, open(plain, "wb") as dst:
        shutil.copyfileobj(src, dst)
    t1 = json.load(open(t1_path))
    tune_params = {p["Name"]: json.loads(p["Values"]) if isinstance(p["Values"], str) else p["Values"]
                   for p in t1["ConfigurationSpace"]["TuningParameters"]}
    restrictions = [c["Expression"] for c in t1["ConfigurationSpace"]["Conditions"]]
    counts = []
    for strategy in (gk.Strategy(seed=1), gk.Strategy(model_path, seed=1)):
        results, _env = kernel_tuner.tune_kernel(
            "convolution_kernel", "", (4096, 4096), [], tune_params, restrictions=restrictions, cache=plain,
            simulation_mode=True, strategy=strategy, strategy_options={"max_fevals": 20}, quiet=True)
        assert len(results) == 20, len(results)
        counts.append(len(results))
    return f"kernel_tuner {kernel_tuner.__version__}: online and pre-trained, {counts} configurations"


@check("mapped libraries (xgboost, curl from the wheel; no fmt)")
def _():
    maps = {line.split()[-1] for line in open("/proc/self/maps") if ".so" in line}
    bad = sorted(m for m in maps if any(f"/lib{n}" in m for n in ("xgboost", "curl", "fmt", "dmlc"))
                 and "gpuforecast.libs" not in m)
    assert not bad, f"from the system: {bad}"
    vendored = sorted(os.path.basename(m) for m in maps if "gpuforecast.libs" in m)
    assert any("xgboost" in v for v in vendored), vendored
    return ", ".join(v.split("-")[0] for v in vendored)


width = max(len(r[0]) for r in rows)
print(f"\n{'check':<{width}}  result  seconds  detail")
for name, result, detail, seconds in rows:
    print(f"{name:<{width}}  {result:<6}  {seconds:7.2f}  {detail}")
shutil.rmtree(work, ignore_errors=True)
sys.exit(0 if all(r[1] == "ok" for r in rows) else 1)
