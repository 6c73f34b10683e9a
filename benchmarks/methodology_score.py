#!/usr/bin/env python3
"""The community's yardstick: autotuning_methodology 1.1.0 (Willemsen et al., "A methodology for
comparing optimization algorithms for auto-tuning", FGCS 2024) scoring our search beside Kernel
Tuner's strategies on shared spaces.

The methodology runs every strategy through Kernel Tuner's tune_kernel_T1 in simulation mode,
with a budget cut off where a random search would reach 95% of the way from the median to the
optimum (in simulated time: compile + benchmark + framework + the strategy's own time), and
scores each strategy by the area between its best-so-far curve and the calculated baseline of
random search, normalised so that 0 is random search and 1 the optimum from the start; the
aggregate is the mean over spaces. Ours is loaded by path, as any custom strategy is
(custom_search_method_path = gpuforecast/kernel_tuner.py, class Strategy: it implements Kernel
Tuner's OptAlg protocol), with no options: an online surrogate, seeded from NumPy's generator.

What this script prepares, under --out (default build/methodology_score), per space:
the hub's T1 file with its KernelFile made absolute (dedispersion_milo's names a HIP file that
is not shared; the CUDA source beside it is used, and the script says so), the cache file
decompressed (Kernel Tuner's simulation reads plain .json), and the whole space as a T4 file
made by Kernel Tuner's own converter (get_t4_results) from that cache. The methodology caches
its runs in the experiment folder, so a rerun continues where one stopped.

    scripts/methodology [--spaces convolution_milo/A100,...] [--repeats 10] [--json FILE]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import sys
import time

KERNEL_TUNER_STRATEGIES = ["random_sample", "genetic_algorithm", "simulated_annealing", "pso", "diff_evo",
                           "greedy_ils", "mls", "basinhopping", "dual_annealing"]
DEFAULT_SPACES = ["convolution_milo/A100", "convolution_milo/A4000", "dedispersion_milo/A100", "dedispersion_milo/A4000"]


def prepare_space(hub: pathlib.Path, setup: pathlib.Path, space: str) -> None:
    """T1 file, plain cache and T4 whole space of one kernel/GPU under setup/kernels and setup/cachefiles."""
    from kernel_tuner.file_utils import get_t4_results

    kernel, gpu = space.split("/")
    t1_path = hub / "kernels" / f"{kernel}.json"
    if not t1_path.exists():
        raise SystemExit(f"{space}: no T1 file {t1_path} (the methodology needs one; gemm has none)")
    t1 = json.loads(t1_path.read_text())
    source = hub / "kernels" / t1["KernelSpecification"]["KernelFile"]
    if not source.exists():
        alternative = source.with_suffix("") if source.suffix == ".hip" else None
        if alternative is None or not alternative.exists():
            raise SystemExit(f"{t1_path}: KernelFile {source} does not exist")
        print(f"{t1_path}: KernelFile {source.name} is not shared; using {alternative.name} beside it "
              "(simulation mode never compiles it)", file=sys.stderr)
        source = alternative
    t1["KernelSpecification"]["KernelFile"] = str(source.resolve())
    kernels = setup / "kernels"
    kernels.mkdir(parents=True, exist_ok=True)
    (kernels / f"{kernel}.json").write_text(json.dumps(t1, indent=1))

    folder = setup / "cachefiles" / kernel
    folder.mkdir(parents=True, exist_ok=True)
    plain, t4 = folder / f"{gpu}.json", folder / f"{gpu}_T4.json"
    if plain.exists() and t4.exists():
        return
    with gzip.open(hub / "cachefiles" / kernel / f"{gpu}.json.gz", "rt") as f:
        cache = json.load(f)
    plain.write_text(json.dumps(cache))
    tune_params = cache["tune_params"]
    results = []
    for entry in cache["cache"].values():
        r = dict(entry)
        for key in ("compile_time", "benchmark_time", "framework_time", "strategy_time", "verification_time"):
            r.setdefault(key, 0)
        results.append(r)
    t4.write_text(json.dumps(get_t4_results(results, tune_params, objective="time")))


def experiment(out: pathlib.Path, spaces: list[str], repeats: int) -> dict:
    """The experiments file: every space (as application x GPU groups), ours and Kernel Tuner's."""
    import gpuforecast.kernel_tuner as gk

    applications = sorted({s.split("/")[0] for s in spaces})
    gpus = sorted({s.split("/")[1] for s in spaces})
    if len(applications) * len(gpus) != len(spaces):
        # The methodology crosses every application with every GPU: run one experiment per GPU set.
        raise SystemExit(f"--spaces must be a full cross of kernels and GPUs (got {spaces}); split the run")
    strategies = [{"name": "gpuforecast", "search_method": "Strategy", "display_name": "gpuforecast (ours)",
                   "autotuner": "KernelTuner", "custom_search_method_path": str(pathlib.Path(gk.__file__).resolve())}]
    strategies += [{"name": s, "search_method": s, "display_name": s, "autotuner": "KernelTuner"}
                   for s in KERNEL_TUNER_STRATEGIES]
    setup = out / "setup"
    return {
        "version": "1.2.0",
        "name": "gpuforecast against Kernel Tuner",
        "parent_folder": str(out / "experiment"),
        "experimental_groups_defaults": {
            "applications": [{"name": a, "folder": str(setup / "kernels"), "input_file": f"{a}.json",
                              "objective_performance_keys": ["time"]} for a in applications],
            "gpus": gpus,
            "pattern_for_full_search_space_filenames": {
                "regex": str(setup / "cachefiles" / "${applications}" / "${gpus}_T4.json")},
            "stochastic": True,
            "repeats": repeats,
            "samples": 32,
            "minimum_fraction_of_budget_valid": 0.1,
            "minimum_number_of_valid_search_iterations": 10,
            "ignore_cache": False,
        },
        "search_strategies": strategies,
        "statistics_settings": {"cutoff_percentile": 0.95, "cutoff_percentile_start": 0.01, "cutoff_type": "time",
                                "objective_time_keys": ["all"]},
        "visualization_settings": {"plots": [{"scope": "aggregate", "style": "line"}], "resolution": 1000.0,
                                   "confidence_level": 0.95, "compare_baselines": False, "compare_split_times": False},
    }


def main() -> int:
    root = pathlib.Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.environ.get("GPUFORECAST_DATA") or str(root.parent / "shared" / "datasets"))
    p.add_argument("--spaces", default=",".join(DEFAULT_SPACES),
                   help="kernel/GPU pairs; they must cross every kernel named with every GPU named")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--out", default=str(root / "build" / "methodology_score"))
    p.add_argument("--json", default="")
    args = p.parse_args()
    import numpy as np
    from autotuning_methodology.report_experiments import get_strategy_scores

    spaces = [s for s in args.spaces.split(",") if s]
    out = pathlib.Path(args.out).resolve()
    hub = pathlib.Path(args.data) / "benchmark_hub"
    for s in spaces:
        prepare_space(hub, out / "setup", s)
    path = out / "experiments.json"
    path.write_text(json.dumps(experiment(out, spaces, args.repeats), indent=1))
    np.random.seed(1)  # our strategy draws its seed per run from NumPy's generator, as Kernel Tuner's do
    started = time.time()
    scores = get_strategy_scores(str(path))
    print(f"autotuning_methodology 1.1.0 aggregate score over {', '.join(spaces)} ({args.repeats} repeats, "
          f"{time.time() - started:.0f} s): 0 = random search, 1 = the optimum from the start")
    print("± what the methodology reports beside the score: the standard deviation of the aggregate curve over time")
    print(f"{'strategy':<22} {'score':>7} {'±':>7}")
    for name, s in sorted(scores.items(), key=lambda kv: -kv[1]["score"]):
        print(f"{name:<22} {s['score']:>7.3f} {s['error']:>7.3f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"spaces": spaces, "repeats": args.repeats, "scores": scores},
                                                      indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
