"""The search's event log: written by the Kernel Tuner strategy (events=), read by read_events."""
import json

import numpy as np
import pytest

import gpuforecast
import gpuforecast.kernel_tuner as gk
from test_kernel_tuner import _tune


def test_a_kernel_tuner_search_writes_its_events_and_read_events_gives_a_dataframe(conv_cache, conv_t1, plain_json,
                                                                                   tmp_path):
    path = plain_json(conv_cache("A100"))
    events = tmp_path / "run.jsonl"
    results = _tune(path, conv_t1, gk.Strategy(seed=3, events=events, screen=True), 40, 3)
    df = gpuforecast.read_events(events)
    assert list(df["seq"]) == list(range(len(df)))  # every line, in order
    assert df["event"].iloc[0] == "begin" and df["event"].iloc[-1] == "end"
    assert (df["v"] == gpuforecast.events.EVENT_LOG_VERSION).all()
    measured = df[df["event"] == "measured"]
    # Kernel Tuner ends the search by raising inside the batch that spends its budget: what that
    # batch had measured reaches Kernel Tuner's results but not the C++ search, nor its log.
    assert len(results) == 40
    assert 30 <= len(measured) <= 40
    # Every measured row names its configuration, and once the model is ready, the forecast made
    # before the measurement and its realised error.
    assert measured["config.block_size_x"].notna().all()
    with_forecast = measured[measured["forecast.forecast_ms"].notna()]
    assert len(with_forecast) >= 20
    ok = with_forecast[with_forecast["status"] == "ok"]
    expected = np.abs(ok["forecast.forecast_ms"] - ok["time_ms"]) / ok["time_ms"]
    np.testing.assert_allclose(ok["forecast.relative_error"], expected, rtol=1e-9)
    assert set(df["event"]) >= {"begin", "forecasts", "screened", "measured", "round", "end"}
    assert (df["run"] == "surrogate seed 3").all()
    # best_ms never rises.
    best = measured["best_ms"].dropna().to_numpy()
    assert (np.diff(best) <= 0).all()


def test_read_events_leaves_out_a_cut_last_line_and_names_a_bad_one(tmp_path):
    good = {"v": 1, "seq": 0, "t": 0.0, "run": "", "event": "begin"}
    cut = tmp_path / "cut.jsonl"
    cut.write_text(json.dumps(good) + "\n" + '{"v": 1, "seq": 1, "ev')
    with pytest.warns(UserWarning, match="cut.jsonl:2: the last line is cut short"):
        df = gpuforecast.read_events(cut)
    assert len(df) == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"v": 1, "se\n' + json.dumps(good) + "\n")
    with pytest.raises(ValueError, match="bad.jsonl:1: not a JSON object"):
        gpuforecast.read_events(bad)
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps({**good, "v": 99}) + "\n")
    with pytest.raises(ValueError, match="newer.jsonl:1: event log version 99"):
        gpuforecast.read_events(newer)
