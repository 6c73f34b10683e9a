"""Every malformed configuration of the shared table (tests/support/malformed_configurations.json,
also run by the C++ and command-line tests) raises ConfigurationError naming the row, the parameter
and what was expected; a value training never saw is forecast and flagged as extrapolation."""
import json
import math
import re

import pytest
from conftest import SOURCE_DIR

import gpuforecast

TABLE = json.loads((SOURCE_DIR / "tests" / "support" / "malformed_configurations.json").read_text())


def parse(text: str) -> dict:
    """The table's NAME=VALUE,... form (Config::parse) as a Python dict."""
    out = {}
    for item in filter(None, text.split(",")):
        name, value = item.split("=", 1)
        if value.startswith('"'):
            out[name] = value.strip('"')
        elif re.fullmatch(r"-?\d+", value):
            out[name] = int(value)
        elif value in ("nan", "inf", "-inf") or re.fullmatch(r"-?\d*\.\d*(e-?\d+)?", value):
            out[name] = float(value)
        else:
            out[name] = value
    return out


def test_the_table_has_every_kind_of_case():
    assert len(TABLE["cases"]) >= 15
    parsed = parse('a=1,b=1.5,c="0",d=nan,e=x')
    assert parsed["a"] == 1 and parsed["b"] == 1.5 and parsed["c"] == "0" and parsed["e"] == "x"
    assert math.isnan(parsed["d"])


@pytest.fixture(scope="module")
def model(xgboost_model):
    return xgboost_model


@pytest.fixture(scope="module")
def space(conv_t1):
    return gpuforecast.Space.from_t1(conv_t1)


CASES = [c for c in TABLE["cases"] if c.get("python", True)]


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_malformed_configuration_is_refused(model, space, case):
    config = parse(case["config"])
    good = parse(TABLE["valid"])
    # Rows of one batch share their parameter names (rows that disagree are a KeyError naming
    # the row, test_model.py); where this one has the valid names, it goes second, so the error
    # must name row 1.
    batch, row = ([good, config], 1) if list(config) == list(good) else ([config], 0)
    with pytest.raises(gpuforecast.ConfigurationError, match=case["message"]) as caught:
        model.forecast(batch, device="A100", problem_size=[4096, 4096], space=space if case.get("space") else None)
    e = caught.value
    assert isinstance(e, ValueError)
    assert e.row == row, str(e)
    assert str(e).startswith(f"configuration {row} ")
    assert e.parameter == case["parameter"], str(e)
    assert e.expected, str(e)


def test_a_value_never_seen_is_forecast_and_flagged(model):
    out = model.forecast([parse(TABLE["valid"]), parse(TABLE["extrapolated"])], device="A100",
                         problem_size=[4096, 4096])
    assert out["extrapolation"][0] == ""
    assert "never seen in training: block_size_x=512" in out["extrapolation"][1]
    assert math.isfinite(out["median_ms"][1])


def test_the_model_knows_its_parameters(model):
    params = model.info["parameters"]["convolution_milo"]
    assert len(params) == 10 and 16 in params["block_size_x"]
