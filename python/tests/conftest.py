"""Shared fixtures: the datasets (GPUFORECAST_DATA; a missing folder fails, never skips) and a
small XGBoost model trained and calibrated once per session."""
import gzip
import json
import os
import pathlib
import shutil

import pytest

import gpuforecast


# The repository (tests/support's tables, tests/llm's fake server): GPUFORECAST_SOURCE_DIR when
# the tests run outside it (scripts/test-wheel copies them next to an installed wheel).
SOURCE_DIR = pathlib.Path(os.environ.get("GPUFORECAST_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])


def _data_dir() -> str:
    d = os.environ.get("GPUFORECAST_DATA", "")
    if not d or not os.path.isdir(os.path.join(d, "benchmark_hub")):
        pytest.fail(f"GPUFORECAST_DATA={d!r} is not the datasets folder (with benchmark_hub/); the tests need it")
    return d


@pytest.fixture(scope="session")
def hub() -> str:
    return os.path.join(_data_dir(), "benchmark_hub")


@pytest.fixture(scope="session")
def conv_cache(hub):
    return lambda device: os.path.join(hub, "cachefiles", "convolution_milo", f"{device}.json.gz")


@pytest.fixture(scope="session")
def conv_t1(hub) -> str:
    return os.path.join(hub, "kernels", "convolution_milo.json")


@pytest.fixture(scope="session")
def xgboost_model(tmp_path_factory, conv_cache) -> gpuforecast.Model:
    """Trained on convolution_milo A4000, calibrated on A6000."""
    path = tmp_path_factory.mktemp("model") / "xgboost.gfm"
    gpuforecast.train([conv_cache("A4000")], surrogate="xgboost", out=path, seed=1)
    return gpuforecast.calibrate(path, [conv_cache("A6000")], alpha=0.2, delta=0.2, tolerance=0.5)


@pytest.fixture(scope="session")
def plain_json(tmp_path_factory):
    """A shared .json.gz decompressed (Kernel Tuner's simulation mode reads plain .json only)."""
    folder = tmp_path_factory.mktemp("plain")

    def make(gz_path: str) -> str:
        out = folder / os.path.basename(gz_path)[: -len(".gz")]
        if not out.exists():
            with gzip.open(gz_path, "rb") as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
        return str(out)

    return make


def t1_space(t1_path: str):
    """Kernel Tuner's tune_params and restrictions from a T1 file."""
    t1 = json.load(open(t1_path))
    tune_params = {p["Name"]: json.loads(p["Values"]) if isinstance(p["Values"], str) else p["Values"]
                   for p in t1["ConfigurationSpace"]["TuningParameters"]}
    return tune_params, [c["Expression"] for c in t1["ConfigurationSpace"]["Conditions"]]


@pytest.fixture(scope="session")
def features_dir() -> pathlib.Path:
    """The repository's stored static feature tables (scripts/features)."""
    d = SOURCE_DIR / "data" / "features"
    if not d.is_dir():
        pytest.fail(f"{d} is missing: the stored static feature tables are part of the repository")
    return d
