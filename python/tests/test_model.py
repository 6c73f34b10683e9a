"""load(), Model.forecast(), train(), calibrate(): results, and errors that name the bad value."""
import numpy as np
import pandas as pd
import pytest

import gpuforecast


def test_forecast_from_dicts_and_dataframe_agree(xgboost_model, conv_cache):
    data = gpuforecast.read_cache(conv_cache("A100"))
    configs = data.configs()[:200]
    a = xgboost_model.forecast(configs, device="A100", problem_size=data.problem_size)
    b = xgboost_model.forecast(pd.DataFrame(configs), device="A100", problem_size=data.problem_size)
    assert set(a) >= {"median_ms", "interval_low_ms", "interval_high_ms", "p_fail", "defer", "confidence"}
    for k in a:
        if k == "extrapolation":  # a list of str, one per row
            assert a[k] == b[k] == [""] * 200
            continue
        assert isinstance(a[k], np.ndarray) and a[k].shape == (200,)
        np.testing.assert_array_equal(a[k], b[k])
    assert a["defer"].dtype == bool
    assert np.all(a["median_ms"] > 0)
    assert np.all(a["interval_low_ms"] <= a["median_ms"]) and np.all(a["median_ms"] <= a["interval_high_ms"])
    assert np.all((a["p_fail"] >= 0) & (a["p_fail"] <= 1))


def test_forecasts_rank_the_measured_runtimes(xgboost_model, conv_cache):
    data = gpuforecast.read_cache(conv_cache("A100"))
    ok = [i for i, s in enumerate(data.status) if s == "ok"]
    configs = [data.configs()[i] for i in ok]
    f = xgboost_model.forecast(configs, device="A100", problem_size=data.problem_size)
    measured = data.median_ms[ok]
    # trained on another GPU of the same kernel: the order of runtimes must carry over
    rho = pd.Series(f["median_ms"]).corr(pd.Series(measured), method="spearman")
    assert rho > 0.5


def test_reference_adds_the_eight_bin_probabilities(xgboost_model, conv_cache):
    data = gpuforecast.read_cache(conv_cache("A100"))
    f = xgboost_model.forecast(data.configs()[:50], device="A100", problem_size=data.problem_size, reference_ms=2.0)
    bins = f["bin_probabilities"]
    assert bins.shape == (50, 8)
    np.testing.assert_allclose(bins.sum(axis=1), 1.0, atol=1e-6)
    assert "bin_probabilities" not in xgboost_model.forecast(data.configs()[:5], device="A100")


def test_info_describes_the_model(xgboost_model):
    info = xgboost_model.info
    assert info["surrogate_kind"] == "xgboost"
    assert info["calibrated"]
    assert info["kernels"] == ["convolution_milo"]


def test_space_argument_checks_every_configuration(xgboost_model, conv_t1):
    space = gpuforecast.Space.from_t1(conv_t1)
    good = space.sample(3, seed=1)
    assert xgboost_model.forecast(good, device="A100", space=space)["median_ms"].shape == (3,)
    missing = [{k: v for k, v in c.items() if k != "tile_size_x"} for c in good]
    with pytest.raises(gpuforecast.ConfigurationError, match="parameter tile_size_x is missing"):
        xgboost_model.forecast(missing, device="A100", space=space)
    outside = [dict(good[0], block_size_x=17)]
    with pytest.raises(ValueError, match="block_size_x=17"):
        xgboost_model.forecast(outside, device="A100", space=space)


@pytest.mark.parametrize(
    "configs, kwargs, error, match",
    [
        (5, {}, TypeError, "list of dicts"),
        ([{"block_size_x": None}], {}, TypeError, "block_size_x: value None"),
        ([{"block_size_x": [1, 2]}], {}, TypeError, r"block_size_x: value \[1, 2\]"),
        ([{"block_size_x": 16}, {"block_size_y": 2}], {}, KeyError, "configs\\[1\\] lacks block_size_x"),
        ([{"block_size_x": 16}], {"device": 3}, TypeError, "device must be a GPU name"),
        ([{"block_size_x": 16}], {"reference_ms": -1.0}, gpuforecast.InvalidArgumentError, "reference_ms"),
        ([{"block_size_x": 16}], {"problem_size": "big"}, TypeError, "problem_size"),
    ],
)
def test_bad_input_raises_naming_the_value(xgboost_model, configs, kwargs, error, match):
    kwargs = {"device": "A100", **kwargs}
    with pytest.raises(error, match=match):
        xgboost_model.forecast(configs, **kwargs)


def test_unknown_device_warns_and_still_forecasts(xgboost_model, conv_cache):
    config = gpuforecast.read_cache(conv_cache("A100")).configs()[0]
    with pytest.warns(UserWarning, match="Imaginary GPU 9000"):
        f = xgboost_model.forecast([config], device="Imaginary GPU 9000")
    assert f["median_ms"].shape == (1,)


def test_damaged_model_file_raises_naming_the_file(tmp_path, xgboost_model):
    good = open(xgboost_model.info["path"], "rb").read()
    truncated = tmp_path / "truncated.gfm"
    truncated.write_bytes(good[: len(good) // 2])
    with pytest.raises(gpuforecast.ModelFileError, match="truncated.gfm"):
        gpuforecast.load(truncated)
    flipped = bytearray(good)
    flipped[len(flipped) // 2] ^= 0xFF
    corrupted = tmp_path / "corrupted.gfm"
    corrupted.write_bytes(bytes(flipped))
    with pytest.raises(gpuforecast.ModelFileError, match="corrupted.gfm"):
        gpuforecast.load(corrupted)
    with pytest.raises(ValueError, match="missing.gfm"):  # ModelFileError is also a ValueError
        gpuforecast.load(tmp_path / "missing.gfm")
    with pytest.raises(TypeError):
        gpuforecast.load(5)


def test_train_rejects_unknown_surrogate_with_the_list(conv_cache, tmp_path):
    with pytest.raises(gpuforecast.InvalidArgumentError, match='"nope".*xgboost'):
        gpuforecast.train([conv_cache("A100")], surrogate="nope", out=tmp_path / "m.gfm")


def test_calibrate_warns_about_training_data_and_names_bad_options(xgboost_model, conv_cache, tmp_path):
    # The fixture's surrogate was trained on A4000: the same warning as `gpuforecast calibrate`.
    with pytest.warns(UserWarning, match=r"A4000\.json\.gz was used to train the surrogate"):
        again = gpuforecast.calibrate(xgboost_model, [conv_cache("A4000")], out=tmp_path / "again.gfm",
                                      alpha=0.2, delta=0.2, tolerance=0.5)
    assert again.info["calibrated"]
    with pytest.raises(gpuforecast.InvalidArgumentError, match='unknown conformal method "cqrr"'):
        gpuforecast.calibrate(xgboost_model, [conv_cache("A6000")], out=tmp_path / "bad.gfm", method="cqrr")
    assert not (tmp_path / "bad.gfm").exists()


def test_forecasts_from_threads_agree(xgboost_model, conv_cache):
    # the GIL is released during the batch: threads may share one model
    from concurrent.futures import ThreadPoolExecutor
    data = gpuforecast.read_cache(conv_cache("A100"))
    configs = data.configs()[:500]
    one = xgboost_model.forecast(configs, device="A100")["median_ms"]
    with ThreadPoolExecutor(4) as pool:
        many = list(pool.map(lambda _: xgboost_model.forecast(configs, device="A100")["median_ms"], range(4)))
    for m in many:
        np.testing.assert_array_equal(m, one)
