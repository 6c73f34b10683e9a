"""Model.calibrate_pairs() and Model.compare(): bin sets and the deferral verdict of pairs, with
forecast()'s checks; LlmSurrogate against a fake OpenAI-compatible server on 127.0.0.1."""
import gzip
import json
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import SOURCE_DIR

import gpuforecast


@pytest.fixture(scope="module")
def pairs(xgboost_model, conv_cache):
    return xgboost_model.calibrate_pairs([conv_cache("A100")], alpha=0.2, delta=0.2, kind="random", seed=2)


def test_calibration_describes_its_rule(pairs):
    assert pairs.alpha == 0.2 and pairs.delta == 0.2
    assert pairs.loss == "wrong_direction" and pairs.kind == "random" and pairs.calibration_pairs > 100
    assert 0 <= pairs.answered_fraction <= 1
    assert "PairCalibration" in repr(pairs)


def test_compare_gives_bins_sets_and_verdicts(xgboost_model, pairs, conv_cache):
    data = gpuforecast.read_cache(conv_cache("A100"))
    ok = [c for c, s in zip(data.configs(), data.status) if s == "ok"]
    out = xgboost_model.compare(ok[0], ok[1:41], pairs=pairs, device="A100", problem_size=data.problem_size)
    assert out["bin_probabilities"].shape == (40, 8)
    np.testing.assert_allclose(out["bin_probabilities"].sum(axis=1), 1.0, atol=1e-9)
    assert ((out["predicted_bin"] >= 1) & (out["predicted_bin"] <= 8)).all()
    assert out["faster"].dtype == bool and out["defer"].dtype == bool
    nonempty = out["set_high"] >= out["set_low"]
    assert ((out["set_low"][nonempty] >= 1) & (out["set_high"][nonempty] <= 8)).all()
    assert out["extrapolation"] == [""] * 40


def test_compare_covers_measured_bins_on_held_out_pairs(xgboost_model, conv_cache, tmp_path):
    """Calibrated on half of A100's measurements, the bin sets of the other half's disjoint pairs
    hold the measured bin at least 1 - alpha of the time (less three standard deviations)."""
    data = gpuforecast.read_cache(conv_cache("A100"))
    configs = data.configs()
    key_of = {",".join(str(v) for v in c.values()): i for i, c in enumerate(configs)}
    # calibrate_pairs reads files: the calibration half goes back into a Kernel Tuner cache.
    cache = json.load(gzip.open(conv_cache("A100")))
    ok_keys = sorted(k for k in cache["cache"] if k in key_of and data.status[key_of[k]] == "ok")
    rng = np.random.default_rng(5)
    rng.shuffle(ok_keys)
    half = len(ok_keys) // 2
    cache["cache"] = {k: cache["cache"][k] for k in ok_keys[:half]}
    (tmp_path / "half.json").write_text(json.dumps(cache))
    pairs = xgboost_model.calibrate_pairs([tmp_path / "half.json"], alpha=0.2, delta=0.2, kind="random", seed=1)
    test = [key_of[k] for k in ok_keys[half:]]
    assert len(test) > 400
    covered = total = 0
    for a, b in zip(test[0::2], test[1::2]):
        out = xgboost_model.compare(configs[a], [configs[b]], pairs=pairs, device="A100", problem_size=data.problem_size)
        speedup = data.median_ms[a] / data.median_ms[b]
        true_bin = int(np.clip(np.floor(2 * np.log2(speedup)) + 4, 1, 8))
        covered += out["set_low"][0] <= true_bin <= out["set_high"][0]
        total += 1
    assert covered / total >= 0.8 - 3 * np.sqrt(0.16 / total), (covered, total)


def test_compare_checks_the_reference_and_candidates(xgboost_model, pairs, conv_cache):
    data = gpuforecast.read_cache(conv_cache("A100"))
    good = data.configs()[:3]
    bad_reference = dict(good[0])
    bad_reference["blok_size_x"] = bad_reference.pop("block_size_x")
    with pytest.raises(gpuforecast.ConfigurationError, match=r"the reference, .*did you mean block_size_x\?") as e:
        xgboost_model.compare(bad_reference, good, pairs=pairs, device="A100", problem_size=data.problem_size)
    assert e.value.parameter == "blok_size_x"
    nan_row = [good[1], dict(good[2], tile_size_x=float("nan"))]
    with pytest.raises(gpuforecast.ConfigurationError, match="configuration 1 .*tile_size_x=nan is not a finite number"):
        xgboost_model.compare(good[0], nan_row, pairs=pairs, device="A100", problem_size=data.problem_size)
    with pytest.raises(TypeError, match="calibrate_pairs"):
        xgboost_model.compare(good[0], good, pairs=None, device="A100")


def test_compare_against_a_measured_parent(xgboost_model, conv_cache):
    """Child pairs: calibrated with each point against a measured neighbour; compare() with the
    parent's measured time sets the children against it, not against its forecast."""
    pairs = xgboost_model.calibrate_pairs([conv_cache("A100")], alpha=0.2, delta=0.2, kind="child", pairs=500, seed=3)
    assert pairs.calibration_pairs == 500 and pairs.kind == "child"
    data = gpuforecast.read_cache(conv_cache("A100"))
    ok = [c for c, s in zip(data.configs(), data.status) if s == "ok"]
    slow = xgboost_model.compare(ok[0], ok[1:6], pairs=pairs, device="A100", problem_size=data.problem_size,
                                 reference_ms=1e9)
    fast = xgboost_model.compare(ok[0], ok[1:6], pairs=pairs, device="A100", problem_size=data.problem_size,
                                 reference_ms=1e-9)
    assert slow["faster"].all() and (slow["predicted_bin"] == 8).all()
    assert not fast["faster"].any() and (fast["predicted_bin"] == 1).all()
    with pytest.raises(gpuforecast.InvalidArgumentError, match="measured runtime must be finite and positive"):
        xgboost_model.compare(ok[0], ok[1:6], pairs=pairs, device="A100", reference_ms=-1.0)
    with pytest.raises(TypeError, match="reference_ms"):
        xgboost_model.compare(ok[0], ok[1:6], pairs=pairs, device="A100", reference_ms="1 ms")
    with pytest.raises(gpuforecast.InvalidArgumentError, match="calibrated on child pairs"):
        xgboost_model.compare(ok[0], ok[1:6], pairs=pairs, device="A100", problem_size=data.problem_size)


def test_calibrate_pairs_refuses_bad_options(xgboost_model, conv_cache):
    with pytest.raises(gpuforecast.InvalidArgumentError, match="unknown pair kind \"nearby\""):
        xgboost_model.calibrate_pairs([conv_cache("A100")], kind="nearby")
    with pytest.raises(gpuforecast.InvalidArgumentError, match="alpha"):
        xgboost_model.calibrate_pairs([conv_cache("A100")], alpha=1.5)


@pytest.fixture
def fake_llm(tmp_path):
    """The LLM tests' fake server (tests/llm/fake_llm_server.py) on 127.0.0.1, stopped after."""
    port_file = tmp_path / "port"
    server = subprocess.Popen([sys.executable, str(SOURCE_DIR / "tests" / "llm" / "fake_llm_server.py"), str(port_file)])
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text().strip()}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.skipif(not hasattr(gpuforecast._native, "LlmSurrogate"), reason="this build has no LLM client (libcurl)")
def test_llm_surrogate_by_configuration(fake_llm, conv_cache, tmp_path):
    llm = gpuforecast.LlmSurrogate(base_url=fake_llm, model="fake", api_key="secret-key", cache_dir=tmp_path / "cache",
                                   retries=0, timeout_seconds=10)
    assert "secret-key" not in repr(llm)
    data = gpuforecast.read_cache(conv_cache("A100"))
    configs = data.configs()
    llm.learn([conv_cache("A100")])
    out = llm.compare(configs[0], configs[1:6], kernel="convolution_milo", device="A100", problem_size=data.problem_size)
    assert out["status"] == ["ok"] * 5, out["error"]
    np.testing.assert_allclose(out["bin_probabilities"].sum(axis=1), 1.0, atol=1e-9)
    assert ((out["predicted_bin"] >= 1) & (out["predicted_bin"] <= 8)).all()
    again = llm.compare(configs[0], configs[1:6], kernel="convolution_milo", device="A100", problem_size=data.problem_size)
    assert again["from_cache"].all()
    np.testing.assert_array_equal(again["predicted_bin"], out["predicted_bin"])
    assert llm.counts["cache_hits"] >= 5


@pytest.mark.skipif(not hasattr(gpuforecast._native, "LlmSurrogate"), reason="this build has no LLM client (libcurl)")
def test_llm_surrogate_without_endpoint_says_so(monkeypatch):
    monkeypatch.delenv("GPUFORECAST_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("GPUFORECAST_LLM_MODEL", raising=False)
    with pytest.raises(gpuforecast.InvalidArgumentError, match="base URL"):
        gpuforecast.LlmSurrogate(model="m")


@pytest.fixture(scope="module")
def siblings_model(tmp_path_factory, conv_cache):
    """A k-NN of convolution_milo's A100 and A6000, with a k-NN view of each (rehearse())."""
    files = [conv_cache("A100"), conv_cache("A6000")]
    path = tmp_path_factory.mktemp("views") / "siblings.gfm"
    gpuforecast.train(files, surrogate="knn", out=path)
    return gpuforecast.rehearse(path, files, surrogate="knn", max_configurations=200)


def _median_abs_log_error(model, data, device):
    ok = [(c, t) for c, t, s in zip(data.configs(), data.median_ms, data.status) if s == "ok"]
    out = model.forecast([c for c, _ in ok], device=device, problem_size=data.problem_size)
    return float(np.median(np.abs(np.log(out["median_ms"] / np.array([t for _, t in ok])))))


def test_a_model_for_a_new_device_stacks_its_siblings_views(siblings_model, conv_cache):
    adapted = siblings_model.for_new_device([conv_cache("A4000")], ratio_surrogate="knn")
    assert not adapted.info["calibrated"]
    assert "A4000" in adapted.info["calibration"] and "in memory" in adapted.info["path"]
    a4000 = gpuforecast.read_cache(conv_cache("A4000"))
    before = _median_abs_log_error(siblings_model, a4000, "A4000")
    after = _median_abs_log_error(adapted, a4000, "A4000")
    assert after < 0.5 * before, (before, after)
    # Another GPU: forecast as the model does.
    a100 = gpuforecast.read_cache(conv_cache("A100"))
    configs = a100.configs()[:20]
    np.testing.assert_array_equal(adapted.forecast(configs, device="A100", problem_size=a100.problem_size)["median_ms"],
                                  siblings_model.forecast(configs, device="A100", problem_size=a100.problem_size)["median_ms"])
    # Not calibrated: every configuration deferred.
    assert adapted.forecast(a4000.configs()[:5], device="A4000", problem_size=a4000.problem_size)["defer"].all()
    # Child pairs on it: its rule answers more than the model's.
    mine = adapted.calibrate_pairs([conv_cache("A4000")], kind="child", pairs=500, seed=3)
    theirs = siblings_model.calibrate_pairs([conv_cache("A4000")], kind="child", pairs=500, seed=3)
    assert mine.answered_fraction > theirs.answered_fraction


def test_a_model_for_a_new_device_is_written_as_gpuforecast_adapt_writes_it(siblings_model, conv_cache, tmp_path):
    in_memory = siblings_model.for_new_device([conv_cache("A4000")], ratio_surrogate="knn")
    written = siblings_model.for_new_device([conv_cache("A4000")], ratio_surrogate="knn", out=tmp_path / "a4000.gfm")
    assert written.info["path"] == str(tmp_path / "a4000.gfm") and not written.info["calibrated"]
    a4000 = gpuforecast.read_cache(conv_cache("A4000"))
    configs = a4000.configs()[:50]
    np.testing.assert_allclose(gpuforecast.load(tmp_path / "a4000.gfm").forecast(configs, device="A4000", problem_size=a4000.problem_size)["median_ms"],
                               in_memory.forecast(configs, device="A4000", problem_size=a4000.problem_size)["median_ms"], rtol=1e-5)
    with pytest.raises(gpuforecast.InvalidArgumentError, match="through views stacked by gpuforecast adapt"):
        gpuforecast.calibrate(written, [conv_cache("A4000")], out=tmp_path / "x.gfm")


def test_calibrate_with_device_samples_stacks_the_views(siblings_model, conv_cache, tmp_path):
    # K = 50 runs of the A4000: 15 stack the A100's and A6000's views and fit the correction, 35 certify.
    options = dict(device_samples=50, loss="wrong_bin", confidence="top_bin_probability", seed=1)
    stacked = gpuforecast.calibrate(siblings_model, [conv_cache("A4000")], out=tmp_path / "k.gfm", **options)
    single = gpuforecast.calibrate(siblings_model, [conv_cache("A4000")], out=tmp_path / "k1.gfm", views=False, **options)
    assert "forecast as log t" in stacked.info["calibration"] and "RTX A6000" in stacked.info["calibration"]
    assert "forecast as log t" not in single.info["calibration"]
    a4000 = gpuforecast.read_cache(conv_cache("A4000"))
    before = _median_abs_log_error(siblings_model, a4000, "A4000")
    assert _median_abs_log_error(stacked, a4000, "A4000") < 0.5 * before
    # Only the A4000 is calibrated: another GPU's forecasts are deferred.
    a100 = gpuforecast.read_cache(conv_cache("A100"))
    assert stacked.forecast(a100.configs()[:20], device="A100", problem_size=a100.problem_size)["defer"].all()
    with pytest.raises(gpuforecast.InvalidArgumentError, match="takes one file"):
        gpuforecast.calibrate(siblings_model, [conv_cache("A4000"), conv_cache("A100")], out=tmp_path / "x.gfm",
                              device_samples=50)
    with pytest.raises(TypeError, match="device_samples"):
        gpuforecast.calibrate(siblings_model, [conv_cache("A4000")], out=tmp_path / "x.gfm", device_samples=-1)


def test_for_new_device_refuses_by_name(siblings_model, xgboost_model, conv_cache):
    with pytest.raises(gpuforecast.InvalidArgumentError, match="holds no views"):
        xgboost_model.for_new_device([conv_cache("A100")])
    with pytest.raises(gpuforecast.InvalidArgumentError, match="no view of convolution_milo on another AMD GPU"):
        siblings_model.for_new_device([conv_cache("W6600")])
    with pytest.raises(TypeError, match="ratio_surrogate"):
        siblings_model.for_new_device([conv_cache("A4000")], ratio_surrogate=3)
    with pytest.raises(TypeError, match="surrogate"):
        gpuforecast.rehearse(xgboost_model, [conv_cache("A100")], surrogate=5)
