"""gpuforecast inside Kernel Tuner (1.5): a tuning strategy and a ranking helper.

    import kernel_tuner, gpuforecast.kernel_tuner as gk
    kernel_tuner.tune_kernel(..., strategy=gk.Strategy(model=None),
                             strategy_options={"max_fevals": 50})

Strategy runs the C++ surrogate-filtered search (make_strategy("surrogate")) through the
binding; every configuration it wants measured goes through Kernel Tuner's CostFunc, so Kernel
Tuner's runner, cache, simulation mode, observers and budget (max_fevals, time_limit) apply
unchanged. When the budget runs out, Kernel Tuner raises StopCriterionReached inside the
measurement; the C++ search unwinds and tune() returns what was measured.

The search draws from Kernel Tuner's own Searchspace (its list, whatever its restrictions are
written as), so with the same space, seed and measured values it measures what `gpuforecast
search --replay FILE --space cached --sampling mean` measures, and it spends max_fevals distinct
configurations (or the whole space).
"""
from __future__ import annotations

import os
import time
import warnings
from typing import Any, Iterable, Sequence

import numpy as np

from . import Model, Plan, Space, load, run

__all__ = ["Strategy", "rank", "space_of"]


def space_of(searchspace) -> Space:
    """Our Space for a Kernel Tuner Searchspace: its tune_params, and its restrictions when they
    are expressions (strings). Restrictions given as functions cannot be read; the measuring
    callback then refuses what Kernel Tuner's searchspace refuses."""
    tune_params = searchspace.tune_params
    constraints = []
    restrictions = getattr(searchspace, "_restrictions_unmodified", None)
    if restrictions is None:
        restrictions = getattr(searchspace, "restrictions", None)
    if isinstance(restrictions, str):
        restrictions = [restrictions]
    for r in restrictions or []:
        if isinstance(r, str):
            constraints.append(r)
    max_threads = getattr(searchspace, "max_threads", None)
    block = [p for p in ("block_size_x", "block_size_y", "block_size_z") if p in tune_params]
    if block and max_threads and max_threads < 2**31:
        constraints.append(f"{'*'.join(block)}<={int(max_threads)}")
    return Space([(name, list(values)) for name, values in tune_params.items()], constraints)


def _device_name(runner, default: str = "") -> str:
    for get in (lambda: runner.dev.name, lambda: runner.get_device_info().name):
        try:
            name = get()
            if name:
                return str(name)
        except Exception:  # noqa: BLE001 - runners differ in what they expose
            pass
    return default


def _problem_size(runner) -> list[int]:
    ps = getattr(getattr(runner, "kernel_options", None), "problem_size", None)
    if ps is None:
        return []
    if isinstance(ps, (int, np.integer)):
        return [int(ps)]
    try:
        return [int(x) for x in ps]
    except (TypeError, ValueError):
        return []  # sizes given as functions or strings


def _kernel_name(runner) -> str:
    return str(getattr(getattr(runner, "kernel_options", None), "kernel_name", "") or "")


def _objective(tuning_options) -> tuple[str, bool]:
    """The objective the search minimises and its direction. Kernel Tuner 1.5 keeps both as lists
    (several objectives); the search takes the first."""
    objective = tuning_options.objective
    higher_is_better = tuning_options.objective_higher_is_better
    if isinstance(objective, (list, tuple)):
        objective = objective[0]
    if isinstance(higher_is_better, (list, tuple)):
        higher_is_better = higher_is_better[0]
    return objective, bool(higher_is_better)


class Strategy:
    """Kernel Tuner strategy object: tune_kernel(..., strategy=Strategy(model=None, **options)).

    model: None (a surrogate is trained online from the search's own measurements) or the path
    of a model file (gpuforecast train / calibrate). surrogate: the online surrogate kind
    ("default", "xgboost", "forest", ...). seed: every random choice. kernel, device: the names
    the model knows the space and GPU by (default: the model's only kernel, or the kernel's
    name; the device Kernel Tuner reports). Other keyword options go to the C++ strategy by
    name (SurrogateFilteredOptions fields, e.g. measurements_per_round=5). seed=None (the default)
    takes tune_kernel's seed; without one it is drawn from NumPy's global generator, as Kernel
    Tuner's own strategies draw theirs (np.random.seed makes it repeatable). Certified screening:
    screen=True, screen_alpha=0.1, screen_delta=0.1 (docs/calibration.md, "Certified screening").
    events: the path of the search's event log, written as it goes (JSON Lines, docs/events.md;
    gpuforecast.read_events reads it into a DataFrame).

    After tune(), `last_run` holds what the search cost beside Kernel Tuner's measurements: the seed
    used, the configurations measured, and the search's own time per measurement (its wall time
    less the time spent inside Kernel Tuner's runner).
    """

    def __init__(self, model: str | os.PathLike | None = None, *, surrogate: str = "default", seed: int | None = None,
                 kernel: str | None = None, device: str | None = None, events: str | os.PathLike | None = None,
                 **options: Any):
        if model is not None and not isinstance(model, (str, os.PathLike)):
            raise TypeError(f"model must be None or the path of a model file, got {model!r}")
        self.model_path = "" if model is None else os.fspath(model)
        if self.model_path and not os.path.exists(self.model_path):
            raise FileNotFoundError(f"model file {self.model_path!r} does not exist")
        self.surrogate = surrogate
        self.seed = None if seed is None else int(seed)
        self.last_run: dict | None = None
        self.kernel = kernel
        self.device = device
        self.events = "" if events is None else os.fspath(events)
        # the C++ options table parses text; Python's True/False become "true"/"false"
        self.options = {str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()}

    def __repr__(self) -> str:
        return f"gpuforecast.kernel_tuner.Strategy(model={self.model_path or None!r}, seed={self.seed})"

    def _kernel_for(self, runner) -> str:
        if self.kernel:
            return self.kernel
        if self.model_path:
            kernels = load(self.model_path).info["kernels"]
            if len(kernels) == 1:
                return kernels[0]
        return _kernel_name(runner)

    # Kernel Tuner's custom-method protocol (kernel_tuner.strategies.wrapper.OptAlg), which
    # tune_kernel_T1's custom_search_method_path and autotuning_methodology use: configurations
    # are handed to the CostFunc as they are, neither scaled nor snapped.
    costfunc_kwargs = {"scaling": False, "snap": False}
    constraint_aware = False

    def tune(self, searchspace, runner, tuning_options):
        """Kernel Tuner's strategy protocol: tune_kernel(..., strategy=Strategy(...))."""
        from kernel_tuner.strategies.common import CostFunc

        return self._search(CostFunc(searchspace, tuning_options, runner, snap=False), searchspace)

    def __call__(self, cost_func, searchspace):
        """Kernel Tuner's custom-method protocol (OptAlg): measures through the given CostFunc."""
        self._search(cost_func, searchspace)
        objective, higher_is_better = _objective(cost_func.tuning_options)
        sign = -1.0 if higher_is_better else 1.0
        scored = [r for r in cost_func.results if isinstance(r.get(objective), (int, float)) and np.isfinite(r[objective])]
        if not scored:
            return None, float("inf")
        best = min(scored, key=lambda r: sign * r[objective])
        return tuple(best[p] for p in searchspace.tune_params), best[objective]

    def _search(self, cost_func, searchspace):
        from kernel_tuner.util import ErrorConfig, StopCriterionReached

        runner, tuning_options = cost_func.runner, cost_func.tuning_options
        # The C++ search draws from exactly Kernel Tuner's valid list: restrictions written as
        # functions are honoured too, and no proposal is refused (a refusal would spend the C++
        # budget without spending Kernel Tuner's).
        space = space_of(searchspace).restricted_to(searchspace.list)
        names = space.names
        if list(names) != list(searchspace.tune_params.keys()):
            raise ValueError("parameter order differs between Kernel Tuner and gpuforecast")
        objective, higher_is_better = _objective(tuning_options)
        valid = set(map(tuple, searchspace.list))
        # Kernel Tuner 1.5 keeps its budget in tuning_options.budget (max_fevals already capped at
        # the space's size); a time limit is enforced by Kernel Tuner inside the CostFunc.
        tuning_budget = tuning_options.get("budget") if hasattr(tuning_options, "get") else None
        max_fevals = getattr(tuning_budget, "max_fevals", None) or tuning_options.get("max_fevals", None)
        budget = len(valid) if not max_fevals else min(int(max_fevals), len(valid))

        measuring = {"seconds": 0.0}

        def measure(batch: list[tuple]) -> list[tuple]:
            # A guard: the space is Kernel Tuner's list, so nothing outside it should be proposed;
            # if something were, it is answered "invalid" rather than sent to Kernel Tuner.
            wanted = [c for c in batch if c in valid]
            if wanted:
                started = time.perf_counter()
                try:
                    cost_func.eval_all([list(c) for c in wanted], check_restrictions=False)
                finally:
                    measuring["seconds"] += time.perf_counter() - started
            out = []
            for c in batch:
                if c not in valid:
                    out.append(("invalid", None, 0.0))
                    continue
                r = cost_func.unique_results.get(",".join(str(v) for v in c))
                if r is None:  # the runner did not measure it (budget)
                    raise StopCriterionReached("budget exhausted")
                value = r.get(objective)
                seconds = sum(float(r.get(k, 0) or 0) for k in ("compile_time", "benchmark_time", "verification_time")) / 1000
                # A failure is an ErrorConfig live, and its name ("RuntimeFailedConfig") from a cache.
                failure = type(value).__name__ if isinstance(value, ErrorConfig) else value if isinstance(value, str) else None
                if failure is not None or value is None or not np.isfinite(float(value)):
                    known = ("CompilationFailedConfig", "RuntimeFailedConfig", "InvalidConfig")
                    out.append((failure if failure in known else "runtime_failed", None, seconds))
                else:
                    v = float(value)
                    if higher_is_better:
                        v = 1.0 / v if v > 0 else float("inf")
                    out.append(("ok", v, seconds) if np.isfinite(v) and v > 0 else ("invalid", None, seconds))
            return out

        kernel = self._kernel_for(runner)
        device = self.device or _device_name(runner, "unknown GPU")
        seed = self._seed_for(tuning_options)
        started = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore" if not tuning_options.get("verbose", False) else "default")
                run(Plan(strategy="surrogate", space=space, measure=measure, kernel=kernel, device=device,
                         problem_size=_problem_size(runner), stops=(StopCriterionReached,), model=self.model_path or None,
                         surrogate=self.surrogate, options=self.options, budget=budget, seeds=1, first_seed=seed,
                         events=self.events or None))
        except StopCriterionReached as e:
            if tuning_options.get("verbose", False):
                print(e)
        searched = time.perf_counter() - started - measuring["seconds"]
        measured = len(cost_func.unique_results)
        self.last_run = {"seed": seed, "measured": measured, "search_seconds": searched,
                         "search_ms_per_measurement": 1000.0 * searched / measured if measured else 0.0}
        if tuning_options.get("verbose", False):
            print(f"gpuforecast: {measured} configurations measured, {self.last_run['search_ms_per_measurement']:.1f} ms "
                  "of search per measurement")
        return cost_func.results

    def _seed_for(self, tuning_options) -> int:
        if self.seed is not None:
            return self.seed
        seed = tuning_options.get("seed", None) if hasattr(tuning_options, "get") else None
        if seed is None:
            # As Kernel Tuner's own strategies: a draw from NumPy's global generator, so that
            # repeated runs differ and np.random.seed(...) makes them repeatable (last_run says which).
            return int(np.random.randint(0, 2**31 - 1))
        return int(seed)


def rank(model: Model | str | os.PathLike, searchspace, device: str | None = None, kernel: str | None = None,
         problem_size=None, keep: float | int | None = None) -> list[tuple]:
    """Valid configurations of a Kernel Tuner Searchspace (or any list of value tuples / dicts,
    with `searchspace.tune_params` or a Space giving the names) ordered by forecast cost:
    median / (1 - p_fail), best first. keep: a fraction (0, 1] or a count to prune to."""
    if not isinstance(model, Model):
        model = load(model)
    if hasattr(searchspace, "list") and hasattr(searchspace, "tune_params"):
        names = list(searchspace.tune_params.keys())
        configs = [tuple(c) for c in searchspace.list]
    else:
        configs = list(searchspace)
        if configs and isinstance(configs[0], dict):
            names = list(configs[0].keys())
            configs = [tuple(c[p] for p in names) for c in configs]
        else:
            raise TypeError("rank: give a Kernel Tuner Searchspace or a list of configuration dicts")
    if device is None:
        devices = model.info["devices"]
        if len(devices) != 1:
            raise ValueError(f"rank: the model knows devices {devices}; name the target with device=")
        device = devices[0]
    if not configs:
        return []
    columns = {p: [c[i] for c in configs] for i, p in enumerate(names)}
    f = model.forecast(columns, device=device, problem_size=problem_size, kernel=kernel, parameters=names)
    cost = f["median_ms"] / (1.0 - np.clip(f["p_fail"], 0.0, 0.95))
    order = np.argsort(cost, kind="stable")
    if keep is not None:
        n = int(np.ceil(keep * len(order))) if isinstance(keep, float) and keep <= 1.0 else int(keep)
        if n < 1:
            raise ValueError(f"keep={keep!r} keeps nothing")
        order = order[:n]
    return [configs[i] for i in order]
