"""gpuforecast.kernel_tuner inside Kernel Tuner 1.5's own simulation mode."""
import gzip
import json
import os
import random
import shutil

import numpy as np
import pytest

import kernel_tuner  # required: a missing Kernel Tuner fails the suite

import gpuforecast
import gpuforecast.kernel_tuner as gk
from conftest import t1_space


def _tune(cache_path, t1_path, strategy, max_fevals, seed):
    random.seed(seed)
    np.random.seed(seed)
    tune_params, restrictions = t1_space(t1_path)
    results, env = kernel_tuner.tune_kernel(
        "convolution_kernel", "", (4096, 4096), [], tune_params, restrictions=restrictions, cache=cache_path,
        simulation_mode=True, strategy=strategy, strategy_options={"max_fevals": max_fevals}, quiet=True)
    return results


def _fraction_of_optimum(results, optimum):
    times = [r["time"] for r in results if isinstance(r["time"], (int, float))]
    return optimum / min(times) if times else 0.0


def test_strategy_beats_random_sample_over_10_seeds_at_50(conv_cache, conv_t1, plain_json):
    path = plain_json(conv_cache("A4000"))
    data = gpuforecast.read_cache(path)
    optimum = np.nanmin(data.median_ms)
    ours, theirs = [], []
    for seed in range(1, 11):
        r = _tune(path, conv_t1, gk.Strategy(seed=seed), 50, seed)
        assert len({tuple(x[p] for p in data.parameters) for x in r}) == 50  # the budget, exactly
        ours.append(_fraction_of_optimum(r, optimum))
        theirs.append(_fraction_of_optimum(_tune(path, conv_t1, "random_sample", 50, seed), optimum))
    print(f"fraction of optimum at 50, seeds 1..10: ours {np.mean(ours):.3f}, random_sample {np.mean(theirs):.3f}")
    assert np.mean(ours) > np.mean(theirs)


def test_strategy_with_a_pretrained_model_and_the_same_seed_repeats(xgboost_model, conv_cache, conv_t1, plain_json):
    path = plain_json(conv_cache("A100"))
    a = _tune(path, conv_t1, gk.Strategy(xgboost_model.info["path"], seed=7), 30, 7)
    b = _tune(path, conv_t1, gk.Strategy(xgboost_model.info["path"], seed=7), 30, 7)
    assert len(a) == 30
    assert [r["time"] for r in a] == [r["time"] for r in b]


def test_strategy_options_reach_the_cpp_search(conv_cache, conv_t1, plain_json):
    path = plain_json(conv_cache("A100"))
    assert len(_tune(path, conv_t1, gk.Strategy(seed=1, measurements_per_round=3), 20, 1)) == 20
    with pytest.raises(gpuforecast.InvalidArgumentError, match="no_such_option"):
        _tune(path, conv_t1, gk.Strategy(seed=1, no_such_option=3), 20, 1)


def test_rank_orders_a_searchspace_by_forecast(xgboost_model, conv_cache, conv_t1):
    from kernel_tuner.searchspace import Searchspace
    tune_params, restrictions = t1_space(conv_t1)
    ss = Searchspace(tune_params, restrictions, 1024)
    ranked = gk.rank(xgboost_model, ss, device="A100")
    assert sorted(ranked) == sorted(tuple(c) for c in ss.list)
    top = gk.rank(xgboost_model, ss, device="A100", keep=0.1)
    assert top == ranked[: len(top)] and len(top) == int(np.ceil(0.1 * len(ranked)))
    # the top tenth by forecast is faster on the GPU than the space as a whole
    data = gpuforecast.read_cache(conv_cache("A100"))
    t = {tuple(c.values()): m for c, m in zip(data.configs(), data.median_ms)}
    assert np.nanmedian([t[c] for c in top]) < np.nanmedian([t[c] for c in ranked])


def _cached_space_tune(plain_path: str, strategy, max_fevals: int, seed):
    """tune_kernel in simulation mode over the cache's valid configurations (Kernel Tuner's
    tune_cache space, as the peers' recorded runs use), the membership test a function restriction."""
    cache = json.load(open(plain_path))
    names = cache["tune_params_keys"]
    valid = {k for k, v in cache["cache"].items() if isinstance(v["time"], (int, float))}

    def in_cache(p):  # a def, not a lambda: Kernel Tuner would try to rewrite a lambda's source
        return ",".join(str(p[n]) for n in names) in valid

    results, _ = kernel_tuner.tune_kernel(
        cache["kernel_name"], "", tuple(np.atleast_1d(cache["problem_size"]).tolist()), [], cache["tune_params"],
        restrictions=[in_cache], cache=plain_path, simulation_mode=True,
        strategy=strategy, strategy_options={"max_fevals": max_fevals}, quiet=True, seed=seed)
    distinct = list(dict.fromkeys(tuple(r[n] for n in names) for r in results))
    return distinct


def _rtx_3090_cache(hub, tmp_path_factory, kernel):
    """The shared RTX 3090 cache of `kernel`, and a decompressed copy (Kernel Tuner reads plain .json)."""
    src = os.path.join(hub, "cachefiles", kernel, "RTX_3090.json.gz")
    out = tmp_path_factory.mktemp(kernel) / f"{kernel}_RTX_3090.json"
    with gzip.open(src, "rb") as f, open(out, "wb") as g:
        shutil.copyfileobj(f, g)
    return src, str(out)


@pytest.fixture(scope="module")
def gemm_plain(hub, tmp_path_factory):
    return _rtx_3090_cache(hub, tmp_path_factory, "gemm")


def test_kernel_tuner_path_measures_what_the_replay_measures(gemm_plain):
    """The same search through Kernel Tuner and through `search --replay --space cached --sampling
    mean` (Kernel Tuner's simulation serves the stored mean): the same configurations, in order."""
    gz, plain = gemm_plain
    strategy = gk.Strategy(kernel="gemm")  # seed=None: tune_kernel's
    through_kt = _cached_space_tune(plain, strategy, 200, seed=3)
    result = gpuforecast.run(gpuforecast.Plan(replay=gz, strategy="surrogate", seeds=1, first_seed=3, budget=200,
                                              replay_space="cached", sampling="mean"))
    replayed = [values for values, _, _ in result.runs[0].trace]
    assert strategy.last_run["seed"] == 3
    assert len(through_kt) == 200  # max_fevals distinct configurations, all spent
    assert strategy.last_run["measured"] == 200
    assert strategy.last_run["search_ms_per_measurement"] > 0
    first_differing = next((i for i, (a, b) in enumerate(zip(through_kt, replayed)) if a != b), None)
    assert first_differing is None or first_differing >= 100, (
        f"gemm/RTX_3090 seed 3: measurement {first_differing + 1} differs: Kernel Tuner {through_kt[first_differing]}, "
        f"replay {replayed[first_differing]}")
    print(f"gemm/RTX_3090: {strategy.last_run['search_ms_per_measurement']:.1f} ms of search per measurement "
          f"through Kernel Tuner; sequences agree for {first_differing or len(through_kt)} measurements")


@pytest.fixture(scope="module")
def pnpoly_plain(hub, tmp_path_factory):
    """pnpoly's four parameters: Kernel Tuner builds its space in a moment, where gemm's takes 20 s."""
    return _rtx_3090_cache(hub, tmp_path_factory, "pnpoly")


def test_kernel_tuner_path_spends_the_budget_and_different_seeds_differ(pnpoly_plain):
    _, plain = pnpoly_plain
    a = _cached_space_tune(plain, gk.Strategy(), 200, seed=4)
    b = _cached_space_tune(plain, gk.Strategy(seed=5), 200, seed=4)  # an explicit seed wins over tune_kernel's
    assert len(a) == 200 and len(b) == 200
    assert a != b


def test_strategy_without_any_seed_draws_one_from_numpys_generator(conv_cache, conv_t1, plain_json):
    path = plain_json(conv_cache("A100"))
    first, again, other = gk.Strategy(), gk.Strategy(), gk.Strategy()
    a = _tune(path, conv_t1, first, 20, 11)  # _tune seeds NumPy; tune_kernel gets no seed
    b = _tune(path, conv_t1, again, 20, 11)
    _tune(path, conv_t1, other, 20, 12)
    assert first.last_run["seed"] == again.last_run["seed"]
    assert [r["time"] for r in a] == [r["time"] for r in b]
    assert other.last_run["seed"] != first.last_run["seed"]
