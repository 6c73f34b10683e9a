"""Model.screen(): certified screening against an incumbent, calibrated on measured configurations."""
import numpy as np
import pytest

import gpuforecast


def _split(conv_cache, device, seed=3):
    data = gpuforecast.read_cache(conv_cache(device))
    ok = np.array([i for i, s in enumerate(data.status) if s == "ok"])
    rng = np.random.default_rng(seed)
    rng.shuffle(ok)
    configs = data.configs()
    half = len(ok) // 2
    calibration = [configs[i] for i in ok[:half]]
    test = [configs[i] for i in ok[half:]]
    return data, calibration, data.median_ms[ok[:half]], test, data.median_ms[ok[half:]]


def test_screen_skips_slow_configurations_and_keeps_its_miss_rate(xgboost_model, conv_cache):
    # Trained on A4000: the A100 is a device the model never saw; the calibration half is measured there.
    data, calibration, calibration_ms, test, test_ms = _split(conv_cache, "A100")
    incumbent = float(np.quantile(test_ms, 0.1))
    out = xgboost_model.screen(test, incumbent, calibration, calibration_ms, device="A100",
                               problem_size=data.problem_size, alpha=0.1, delta=0.1)
    assert out["skip"].dtype == bool and out["skip"].shape == (len(test),)
    assert out["median_ms"].shape == (len(test),)
    assert out["certified"], out["reason"]
    assert out["improvements"] >= 22 and out["risk_upper_bound"] <= 0.1 + 1e-9
    improvements = test_ms < incumbent
    miss = out["skip"][improvements].mean()
    # One split: the guarantee is (alpha, delta); 0.2 leaves room for the 1 - delta failures.
    assert miss <= 0.2, f"A100 held-out half: {miss:.3f} of {improvements.sum()} improvements skipped"
    assert out["skip"].mean() > 0.3, "most A100 configurations are slower than the 10% quantile"


def test_screen_without_enough_faster_calibration_points_measures_everything(xgboost_model, conv_cache):
    data, calibration, calibration_ms, test, _ = _split(conv_cache, "A100")
    best = float(np.min(calibration_ms))  # nothing in the calibration half beats it
    out = xgboost_model.screen(test[:50], best, calibration, calibration_ms, device="A100",
                               problem_size=data.problem_size)
    assert not out["certified"] and not out["skip"].any()
    assert "improvement pairs" in out["reason"]


def test_screen_names_bad_calibration(xgboost_model, conv_cache):
    data, calibration, calibration_ms, test, _ = _split(conv_cache, "A100")
    with pytest.raises(ValueError, match="calibration_ms has 3 times"):
        xgboost_model.screen(test[:5], 1.0, calibration, calibration_ms[:3], device="A100",
                             problem_size=data.problem_size)
    bad = calibration_ms.copy()
    bad[7] = np.nan
    with pytest.raises(gpuforecast.InvalidArgumentError, match="pair 7 of"):
        xgboost_model.screen(test[:5], 1.0, calibration, bad, device="A100", problem_size=data.problem_size)
    with pytest.raises(gpuforecast.InvalidArgumentError, match="alpha"):
        xgboost_model.screen(test[:5], 1.0, calibration, calibration_ms, device="A100",
                             problem_size=data.problem_size, alpha=1.5)
