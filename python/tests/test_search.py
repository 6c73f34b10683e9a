"""gpuforecast.run(Plan): the runner the command line and the Kernel Tuner strategy use, from Python."""
import os

import numpy as np
import pytest

import gpuforecast


@pytest.fixture(scope="module")
def pnpoly(hub) -> str:
    return os.path.join(hub, "cachefiles", "pnpoly", "RTX_3090.json.gz")


def test_a_replayed_plan_is_the_same_for_the_same_seeds_and_knows_the_optimum(pnpoly):
    plan = gpuforecast.Plan(replay=pnpoly, strategy="random", budget=30, seeds=3, first_seed=7)
    a, b = gpuforecast.run(plan), gpuforecast.run(plan)
    assert [r.trace for r in a.runs] == [r.trace for r in b.runs], pnpoly
    assert [r.seed for r in a.runs] == [7, 8, 9]
    assert a.runs[0].trace != a.runs[1].trace  # seeds differ
    assert all(len(r.trace) == 30 and len(r.curve) == 30 for r in a.runs)
    assert a.optimum_ms > 0
    # The curve is the fraction of the optimum reached so far: it never falls.
    for r in a.runs:
        assert np.all(np.diff(r.curve) >= 0)
    assert 0 < a.fraction_of_optimum(30) <= 1
    assert a.fraction_of_optimum(10) <= a.fraction_of_optimum(30)


def test_a_plan_measured_by_the_caller_proposes_from_its_space(pnpoly, tmp_path):
    data = gpuforecast.read_cache(pnpoly)
    stored = {tuple(c.values()): ms for c, ms, s in zip(data.configs(), data.median_ms, data.status)
              if s == "ok"}
    asked = []

    def measure(batch):
        asked.extend(batch)
        return [("ok", stored[c], 1.0) if c in stored else ("invalid", None, 0.0) for c in batch]

    events = tmp_path / "run.jsonl"
    result = gpuforecast.run(gpuforecast.Plan(space=data.space(), measure=measure, kernel=data.kernel,
                                              device=data.device, problem_size=data.problem_size, strategy="genetic",
                                              budget=25, seeds=1, first_seed=2, events=events))
    (run,) = result.runs
    assert len(run.trace) == 25
    assert [values for values, _, _ in run.trace] == asked  # every measurement through the function
    assert run.best()[2] == min(t for _, s, t in run.trace if s == "ok")
    assert run.curve == []  # nothing stored values the run
    df = gpuforecast.read_events(events)
    assert df["event"].iloc[-1] == "end"


def test_a_plan_measured_on_a_gpu_watches_it_through_nvml_or_says_why_not(pnpoly, capfd):
    import ctypes

    data = gpuforecast.read_cache(pnpoly)
    plan = gpuforecast.Plan(space=data.space(), measure=lambda batch: [("ok", 1.0, 0.0) for _ in batch],
                            kernel=data.kernel, device=data.device, strategy="random", budget=5, seeds=1,
                            watch_gpu=0)
    (run,) = gpuforecast.run(plan).runs
    assert len(run.trace) == 5
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        has_nvml = True
    except OSError:
        has_nvml = False
    err = capfd.readouterr().err
    if not has_nvml:  # the search goes on unwatched, and says so once
        assert err.count("not watched: no NVML found") == 1, err


class Enough(Exception):
    pass


def test_a_stop_raised_while_measuring_ends_the_search_and_is_raised_again(pnpoly, tmp_path):
    data = gpuforecast.read_cache(pnpoly)
    count = {"n": 0}

    def measure(batch):
        count["n"] += len(batch)
        if count["n"] > 5:
            raise Enough("five is enough")
        return [("ok", 1.0, 0.0) for _ in batch]

    events = tmp_path / "stopped.jsonl"
    plan = gpuforecast.Plan(space=data.space(), measure=measure, kernel=data.kernel, device=data.device,
                            strategy="random", budget=50, seeds=1, events=events,
                            stops=(Enough,))
    with pytest.raises(Enough, match="five is enough"):
        gpuforecast.run(plan)
    # For the observers it was the search's end.
    assert gpuforecast.read_events(events)["event"].iloc[-1] == "end"


def test_a_plan_without_one_source_of_measurements_is_refused(pnpoly):
    with pytest.raises(ValueError, match="either replay"):
        gpuforecast.run(gpuforecast.Plan())
    with pytest.raises(ValueError, match="either replay"):
        gpuforecast.run(gpuforecast.Plan(replay=pnpoly, measure=lambda batch: []))
    with pytest.raises(TypeError, match="Plan.space"):
        gpuforecast.run(gpuforecast.Plan(measure=lambda batch: []))
    with pytest.raises(TypeError, match="gpuforecast.Plan"):
        gpuforecast.run({"replay": pnpoly})
    with pytest.raises(gpuforecast.InvalidArgumentError, match="annealing"):
        gpuforecast.run(gpuforecast.Plan(replay=pnpoly, strategy="annealing", seeds=1))
