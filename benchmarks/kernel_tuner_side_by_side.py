#!/usr/bin/env python3
"""Kernel Tuner's strategies, ours and Optuna's TPE side by side in Kernel Tuner's own harness.

Every strategy runs through kernel_tuner.tune_kernel(simulation_mode=True) on the shared cache
files (by default convolution_milo and dedispersion_milo on A100, A4000, A6000; --spaces names
any shared space). The space is the T1 file's parameters and restrictions (kernels/, the milo
kernels' T1 files give their values as lists), or with --space cached the file's valid
configurations, the space the peers' recorded runs searched (../shared/baselines/search-peers/).
Ours is gpuforecast.kernel_tuner.Strategy (the C++ surrogate-filtered search, an online surrogate
unless --model is given). Optuna's TPE sampler
(multivariate) sees each parameter as a categorical; a proposal outside the space is refused
(told as pruned) and not counted, a repeated one is answered from memory and not counted.

With --pretrained, ours starts on each space from a model of the default surrogate (seed 1) trained
on the same kernel's other shared GPUs of the same vendor, never the searched one: the model
benchmarks/search_suite's surrogate(pretrained=default) trains, so the two paths can be compared.

Printed: mean fraction of optimum (best time in the space / best time found) after 25, 50, 100,
200 distinct valid configurations, with its standard error over seeds; --json prints the same
as JSON. Seeds are first_seed .. first_seed + seeds - 1 (numpy's and random's global seeds for
Kernel Tuner's strategies, the sampler's seed for TPE, the strategy's seed for ours).

    python benchmarks/kernel_tuner_side_by_side.py --seeds 20 [--json] [--spaces convolution_milo/A100,...]
                                                   [--space t1|cached] [--pretrained]
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import sys
import tempfile
import time
import warnings

import numpy as np

KERNEL_TUNER_STRATEGIES = ["random_sample", "genetic_algorithm", "dual_annealing", "simulated_annealing", "pso",
                           "greedy_ils", "diff_evo", "mls", "basinhopping", "bayes_opt"]
ALL_SPACES = [f"{k}/{d}" for k in ("convolution_milo", "dedispersion_milo") for d in ("A100", "A4000", "A6000")]
BUDGETS = [25, 50, 100, 200]


class SimulatedSpace:
    """One cache file decompressed for Kernel Tuner, with its space and optimum: the T1 file's
    parameters and conditions, or (cached) the file's valid configurations, the space the peers'
    recorded runs in ../shared/baselines/search-peers/ searched."""

    def __init__(self, data_dir: str, name: str, tmp: str, cached: bool = False):
        kernel, device = name.split("/")
        src = os.path.join(data_dir, "benchmark_hub", "cachefiles", kernel, device + ".json.gz")
        t1_path = os.path.join(data_dir, "benchmark_hub", "kernels", kernel + ".json")
        with gzip.open(src, "rt") as f:
            self.cache = json.load(f)
        self.name = name
        self.path = os.path.join(tmp, f"{kernel}_{device}.json")
        with open(self.path, "w") as f:
            json.dump(self.cache, f)
        if cached:
            self.tune_params = self.cache["tune_params"]
            names = list(self.tune_params)
            valid = {k for k, v in self.cache["cache"].items() if isinstance(v["time"], (int, float))}

            def in_cache(p):  # a def, not a lambda: Kernel Tuner would try to rewrite a lambda's source
                return ",".join(str(p[n]) for n in names) in valid

            self.restrictions = [in_cache]
        else:
            t1 = json.load(open(t1_path))
            self.tune_params = {p["Name"]: json.loads(p["Values"]) if isinstance(p["Values"], str) else p["Values"]
                                for p in t1["ConfigurationSpace"]["TuningParameters"]}
            if list(self.tune_params) != list(self.cache["tune_params_keys"]):
                raise ValueError(f"{t1_path}: parameters differ from {src}")
            self.restrictions = [c["Expression"] for c in t1["ConfigurationSpace"]["Conditions"]]
        self.times = {k: v["time"] for k, v in self.cache["cache"].items()}
        self.optimum = min(t for t in self.times.values() if isinstance(t, (int, float)) and t > 0)

    def tune(self, strategy, budget: int):
        import kernel_tuner
        size = self.cache["problem_size"]  # a number for one-dimensional kernels (pnpoly)
        results, _ = kernel_tuner.tune_kernel(
            self.cache["kernel_name"], "", tuple(size) if isinstance(size, list) else size, [], self.tune_params,
            restrictions=self.restrictions, cache=self.path, simulation_mode=True, strategy=strategy,
            strategy_options={"max_fevals": budget}, quiet=True)
        return results


def train_on_other_gpus(data_dir: str, name: str, tmp: str) -> str:
    """A default-surrogate model file trained on `name`'s kernel on every other shared GPU of the
    same vendor (T4 copies of a cache are the same GPU again), files in name order."""
    import gpuforecast
    kernel, device = name.split("/")
    folder = os.path.join(data_dir, "benchmark_hub", "cachefiles", kernel)

    def vendor(path: str) -> str:
        # The cache's device_name as the driver reported it: NVIDIA's start "NVIDIA"; the shared
        # spaces' other GPUs are AMD's ("AMD Radeon PRO W6600", or empty for the MI250X).
        with gzip.open(path, "rt") as f:
            return "NVIDIA" if json.load(f).get("device_name", "").startswith("NVIDIA") else "AMD"

    target_vendor = vendor(os.path.join(folder, device + ".json.gz"))
    sources = [os.path.join(folder, f) for f in sorted(os.listdir(folder))
               if f.endswith(".json.gz") and not f.endswith("_T4.json.gz") and f != device + ".json.gz"]
    sources = [f for f in sources if vendor(f) == target_vendor]
    if not sources:
        raise ValueError(f"{name}: no other shared GPU of its vendor measured {kernel}")
    out = os.path.join(tmp, f"{kernel}_{device}_others.gfm")
    gpuforecast.train(sources, surrogate="default", out=out, seed=1)
    return out


def curve(times_in_order: list, optimum: float, budget: int) -> list[float]:
    """Fraction of optimum after each of the first `budget` distinct configurations."""
    best, out = math.inf, []
    for t in times_in_order[:budget]:
        if isinstance(t, (int, float)) and t > 0:
            best = min(best, t)
        out.append(optimum / best if best < math.inf else 0.0)
    while out and len(out) < budget:  # stopped early: it keeps what it found
        out.append(out[-1])
    return out


def kernel_tuner_run(space: SimulatedSpace, strategy, seed: int, budget: int) -> list[float]:
    random.seed(seed)
    np.random.seed(seed)
    results = space.tune(strategy, budget)
    seen, times = set(), []
    for r in results:
        key = ",".join(str(r[p]) for p in space.tune_params)
        if key in seen:
            continue
        seen.add(key)
        t = r.get("time")
        times.append(t if isinstance(t, (int, float)) else None)
    return curve(times, space.optimum, budget)


def tpe_run(space: SimulatedSpace, seed: int, budget: int) -> list[float]:
    import optuna
    from kernel_tuner.searchspace import Searchspace
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    valid = getattr(space, "_valid", None)
    if valid is None:
        ss = Searchspace(space.tune_params, space.restrictions, 1 << 30)
        valid = space._valid = set(",".join(str(v) for v in c) for c in ss.list)
    sampler = optuna.samplers.TPESampler(multivariate=True, seed=seed)
    study = optuna.create_study(sampler=sampler, direction="minimize")
    told: dict[str, float | None] = {}
    times = []
    asks = 0
    while len(times) < budget and asks < 50 * budget:
        asks += 1
        trial = study.ask()
        config = [trial.suggest_categorical(p, v) for p, v in space.tune_params.items()]
        key = ",".join(str(v) for v in config)
        if key not in valid:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            continue
        if key not in told:
            t = space.times.get(key)
            told[key] = t if isinstance(t, (int, float)) and t > 0 else None
            times.append(told[key])
        if told[key] is None:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            study.tell(trial, told[key])
    return curve(times, space.optimum, budget)


def summarise(curves: list[list[float]], budgets: list[int]) -> list[dict]:
    out = []
    for b in budgets:
        v = np.array([c[min(b, len(c)) - 1] if c else 0.0 for c in curves])
        se = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0
        out.append({"measurements": b, "mean": float(v.mean()), "standard_error": se})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--spaces", default=",".join(ALL_SPACES), help="comma-separated KERNEL/DEVICE")
    ap.add_argument("--strategies", default=",".join(["gpuforecast"] + KERNEL_TUNER_STRATEGIES + ["optuna_tpe"]),
                    help="comma-separated: gpuforecast, optuna_tpe and Kernel Tuner's names")
    ap.add_argument("--budget", type=int, default=200, help="largest budget (distinct valid configurations)")
    ap.add_argument("--model", default=None, help="pre-trained model file for ours (default: online surrogate)")
    ap.add_argument("--space", choices=["t1", "cached"], default="t1",
                    help="the T1 file's space, or the file's valid configurations (as the peers' record)")
    ap.add_argument("--pretrained", action="store_true",
                    help="ours starts from a model trained on the kernel's other GPUs of the same vendor")
    ap.add_argument("--option", action="append", default=[], help="NAME=VALUE for our strategy (repeatable)")
    ap.add_argument("--data", default=os.environ.get("GPUFORECAST_DATA", ""), help="datasets folder (GPUFORECAST_DATA)")
    args = ap.parse_args()
    if not args.data or not os.path.isdir(os.path.join(args.data, "benchmark_hub")):
        ap.error("give --data or set GPUFORECAST_DATA to the datasets folder (with benchmark_hub/)")
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    budgets = [b for b in BUDGETS if b <= args.budget] or [args.budget]
    strategies = [s for s in args.strategies.split(",") if s]
    unknown = [s for s in strategies if s not in KERNEL_TUNER_STRATEGIES + ["gpuforecast", "optuna_tpe"]]
    if unknown:
        ap.error(f"unknown strategies: {', '.join(unknown)}")
    options = {}
    for o in args.option:
        if "=" not in o:
            ap.error(f"--option {o}: expected NAME=VALUE")
        k, v = o.split("=", 1)
        options[k] = v
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    warnings.filterwarnings("ignore")

    if args.pretrained and args.model:
        ap.error("--pretrained trains a model per space: give it or --model, not both")
    report = {"seeds": seeds, "budgets": budgets, "model": "pretrained on the other GPUs" if args.pretrained else args.model,
              "spaces": []}
    with tempfile.TemporaryDirectory(prefix="gf-side-by-side-") as tmp:
        for name in [s for s in args.spaces.split(",") if s]:
            space = SimulatedSpace(args.data, name, tmp, cached=args.space == "cached")
            entry = {"space": name, "optimum_ms": space.optimum, "strategies": []}
            model = train_on_other_gpus(args.data, name, tmp) if args.pretrained else args.model
            for strategy in strategies:
                t0 = time.perf_counter()
                curves = []
                for seed in seeds:
                    if strategy == "optuna_tpe":
                        curves.append(tpe_run(space, seed, args.budget))
                    elif strategy == "gpuforecast":
                        import gpuforecast.kernel_tuner as gk
                        curves.append(kernel_tuner_run(space, gk.Strategy(model, seed=seed, **options), seed,
                                                       args.budget))
                    else:
                        curves.append(kernel_tuner_run(space, strategy, seed, args.budget))
                seconds = (time.perf_counter() - t0) / len(seeds)
                entry["strategies"].append({"strategy": strategy, "seconds_per_run": seconds,
                                            "fraction_of_optimum": summarise(curves, budgets)})
                if not args.json:
                    row = "  ".join(f"{s['mean']:.3f}±{s['standard_error']:.3f}"
                                    for s in entry["strategies"][-1]["fraction_of_optimum"])
                    print(f"{name:24} {strategy:20} {row}   ({seconds:.1f} s/run)", flush=True)
            report["spaces"].append(entry)
            if not args.json:
                print(flush=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"columns: fraction of optimum ± standard error at {', '.join(map(str, budgets))} distinct valid "
              f"configurations; seeds {seeds[0]}..{seeds[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
