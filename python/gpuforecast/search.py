"""Running a search: a Plan in, a Result out, as the command line and the Kernel Tuner strategy run one.

    import gpuforecast
    plan = gpuforecast.Plan(replay="A100.json.gz", strategy="surrogate", budget=100, seeds=5)
    result = gpuforecast.run(plan)
    result.fraction_of_optimum(50)     # mean over the seeds, after 50 measurements

A Plan replays recorded measurements (`replay`: a Kernel Tuner cache or T4 file), or measures
through the caller's function (`space` and `measure`): measure(batch) is called with a list of
value tuples in the space's parameter order and returns a (status, time_ms, cost_s) triple for
each, status "ok" or the failure's name. docs/search.md lists the strategies and their options.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from . import _gpuforecast as _native


@dataclass
class Plan:
    """What a search is to run: where measurements come from, the strategy, the budget and seeds,
    and where each run's records go (a path with several seeds gets ".seedN" before ".json")."""

    strategy: str = "surrogate"
    # Replay: recorded measurements, the configurations a strategy may propose ("auto", "t1",
    # "cached", "cartesian"), what a measurement reads ("one_run", "bootstrap", "median",
    # "mean"), a T1 file whose Conditions constrain the space, simulated workers.
    replay: Optional[str | os.PathLike] = None
    replay_space: str = "auto"
    sampling: str = "one_run"
    t1: Optional[str | os.PathLike] = None
    workers: int = 1
    # Or the caller measures: the space, the function, and the kernel, device and problem size
    # the model forecasts for.
    space: Optional[_native.Space] = None
    measure: Optional[Callable[[list], Sequence[tuple]]] = None
    kernel: str = ""
    device: str = ""
    problem_size: Sequence[int] = ()
    # Exceptions raised by `measure` that end a search as its normal end (still raised again).
    stops: tuple = ()
    # The caller measures on a GPU: NVML's index of it. Its throttling, heat, ECC and Xid errors
    # become anomaly events (docs/monitoring.md); without NVML, one warning and no watch.
    watch_gpu: Optional[int] = None
    # The strategy's model (surrogate strategy): a model file, else a surrogate trained online.
    model: Optional[str | os.PathLike] = None
    surrogate: str = "default"
    options: dict = field(default_factory=dict)  # NAME -> value, as `--option NAME=VALUE`
    budget: int = 200  # measurements per run (0: no count limit)
    budget_seconds: float = 0.0  # simulated (replay) or real seconds per run (0: no limit)
    seeds: int = 10
    first_seed: int = 1
    threads: int = 0  # replayed runs side by side (0: one per hardware thread); any count gives the same result
    trace: Optional[str | os.PathLike] = None  # each run's trace (T4)
    events: Optional[str | os.PathLike] = None  # each run's event log (JSON Lines, docs/events.md)
    cache: Optional[str | os.PathLike] = None  # each run's Kernel Tuner cache, written as it goes
    resume: bool = False  # continue the runs whose cache exists


@dataclass
class SeedRun:
    """One run: its seed, every measurement in order as (values, status, time_ms or None), and
    (replay only) the fraction of the optimum after each measurement."""

    seed: int
    trace: list
    curve: list
    seconds: float

    def best(self) -> Optional[tuple]:
        """The fastest successful measurement (values, status, time_ms), None when none succeeded."""
        ok = [t for t in self.trace if t[1] == "ok"]
        return min(ok, key=lambda t: t[2]) if ok else None


@dataclass
class Result:
    """Every run of a Plan; `optimum_ms` is the replayed data's best time (0 when the caller measured)."""

    optimum_ms: float
    runs: list

    def fraction_of_optimum(self, measurements: int) -> float:
        """Mean over the runs of optimum / best found within `measurements` (replay only)."""
        if not self.runs or not self.runs[0].curve:
            raise ValueError("fraction_of_optimum: only a replayed search knows the optimum")
        values = [r.curve[min(measurements, len(r.curve)) - 1] for r in self.runs]
        return sum(values) / len(values)


def _text(p, what: str) -> str:
    if p is None:
        return ""
    if not isinstance(p, (str, os.PathLike)):
        raise TypeError(f"Plan.{what} must be a path (str or os.PathLike), got {p!r}")
    return os.fspath(p)


def run(plan: Plan) -> Result:
    """Carries out `plan` (run/run.hpp): one search per seed, each with its own strategy, model and
    benchmarker, so the same seeds give the same result."""
    if not isinstance(plan, Plan):
        raise TypeError(f"run() takes a gpuforecast.Plan, got {plan!r}")
    replay = _text(plan.replay, "replay")
    if bool(replay) == (plan.measure is not None):
        raise ValueError("Plan: give either replay (recorded measurements) or space and measure (the caller measures)")
    if plan.measure is not None and not isinstance(plan.space, _native.Space):
        raise TypeError(f"Plan.space must be a gpuforecast.Space when the caller measures, got {plan.space!r}")
    if plan.measure is not None and not callable(plan.measure):
        raise TypeError(f"Plan.measure must be callable, got {plan.measure!r}")
    from . import _problem_size  # the package's one reading of a problem size

    stops = tuple(plan.stops) if plan.stops else None
    out = _native._run(
        strategy=plan.strategy, model_path=_text(plan.model, "model"), surrogate=plan.surrogate,
        options={str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in plan.options.items()},
        budget=int(plan.budget),
        budget_seconds=float(plan.budget_seconds), seeds=int(plan.seeds), first_seed=int(plan.first_seed),
        threads=int(plan.threads), trace=_text(plan.trace, "trace"), events=_text(plan.events, "events"),
        cache=_text(plan.cache, "cache"), resume=bool(plan.resume), replay=replay, replay_space=plan.replay_space,
        sampling=plan.sampling, t1=_text(plan.t1, "t1"), workers=int(plan.workers), space=plan.space,
        kernel=plan.kernel, device=plan.device, problem_size=_problem_size(plan.problem_size) if plan.problem_size else [],
        measure=plan.measure, stops=stops, watch_gpu=None if plan.watch_gpu is None else int(plan.watch_gpu))
    return Result(optimum_ms=out["optimum_ms"], runs=[SeedRun(**r) for r in out["runs"]])
