"""gpuforecast: forecast GPU kernel runtimes, know when to trust the forecast, measure when not.

    import gpuforecast
    model = gpuforecast.load("model.gfm")
    out = model.forecast([{"block_size_x": 32, ...}], device="A100", problem_size=[4096, 4096])
    out["median_ms"], out["defer"]

The work is done by the C++ library (module gpuforecast._gpuforecast); this package turns
Python and pandas data into its inputs and its results into numpy arrays.
"""
from __future__ import annotations

import os
import tempfile
import warnings
from typing import Sequence

import numpy as np

from . import _gpuforecast as _native
from ._gpuforecast import (  # noqa: F401  (re-exported)
    ConfigurationError,
    CudaError,
    Error,
    ExpressionError,
    InputError,
    InvalidArgumentError,
    ModelFileError,
    PairCalibration,
    Space,
    UnknownDeviceError,
    surrogate_names,
)
from ._columns import columns_of
from .events import read_events
from .search import Plan, Result, SeedRun, run

__version__ = _native.__version__

__all__ = [
    "Model", "PairCalibration", "LlmSurrogate", "Space", "CacheData", "load", "train", "rehearse", "calibrate", "read_cache",
    "read_events",
    "surrogate_names", "Plan", "Result", "SeedRun", "run",
    "Error", "InputError", "ConfigurationError", "ExpressionError", "UnknownDeviceError", "InvalidArgumentError", "ModelFileError",
    "CudaError",
]


def _problem_size(problem_size) -> list[int]:
    if problem_size is None:
        return []
    if isinstance(problem_size, (int, np.integer)):
        return [int(problem_size)]
    try:
        return [int(x) for x in problem_size]
    except (TypeError, ValueError):
        raise TypeError(f"problem_size must be an int or a sequence of ints, got {problem_size!r}") from None


def _path(p, what: str) -> str:
    if not isinstance(p, (str, os.PathLike)):
        raise TypeError(f"{what} must be a path (str or os.PathLike), got {p!r}")
    return os.fspath(p)


class Model:
    """A trained model file in memory (load(), train() or calibrate()); immutable and thread-safe."""

    def __init__(self, native: _native.Model):
        self._native = native

    @property
    def info(self) -> dict:
        """Surrogate kind, calibration, and the kernels and devices it was trained on."""
        return self._native.info

    def __repr__(self) -> str:
        i = self.info
        return f"<gpuforecast.Model {i['surrogate_kind']} from {i['path']!r}, calibrated={i['calibrated']}>"

    def _kernel(self, kernel: str | None) -> str:
        if kernel is not None:
            if not isinstance(kernel, str):
                raise TypeError(f"kernel must be a str, got {kernel!r}")
            return kernel
        kernels = self.info["kernels"]
        return kernels[0] if len(kernels) == 1 else ""

    def forecast(self, configs, device: str, problem_size=None, reference_ms: float | None = None,
                 kernel: str | None = None, parameters: Sequence[str] | None = None,
                 space: Space | None = None) -> dict[str, np.ndarray]:
        """Calibrated forecasts of many configurations in one batch.

        configs: a list of dicts {parameter: value} or a pandas DataFrame with one column per
        parameter. device: a GPU name ("A100", "NVIDIA RTX A4000"). kernel: the space the model
        knows it by (default: the model's only kernel). reference_ms: a measured runtime; when
        given, the result also holds "bin_probabilities" (n x 8, the half-octave speedup bins).

        Every configuration is checked against what the model knows of the kernel's parameters
        (info["parameters"]): a missing, unknown or misspelt parameter, a value of the wrong type,
        NaN or a negative value where training saw none raises ConfigurationError (a ValueError)
        naming the row and the parameter. space: the kernel's Space; when given, every
        configuration must also lie inside it (each value in its list, the constraints holding).

        Returns numpy arrays of length n: median_ms, lower_ms, upper_ms (surrogate 5/95%),
        interval_low_ms, interval_high_ms (calibrated), p_fail, confidence, spread, defer (bool),
        and extrapolation (a list of str: what of the row training never saw, "" when nothing).
        """
        if not isinstance(device, str):
            raise TypeError(f"device must be a GPU name (str), got {device!r}")
        if reference_ms is not None and not isinstance(reference_ms, (int, float, np.number)):
            raise TypeError(f"reference_ms must be a number, got {reference_ms!r}")
        names, columns = columns_of(configs, parameters)
        if space is not None and not isinstance(space, Space):
            raise TypeError(f"space must be a gpuforecast.Space, got {space!r}")
        rows = 0 if names else len(configs)  # rows without parameters: refused by row, not dropped
        return self._native._forecast(self._kernel(kernel), device, _problem_size(problem_size), names, columns,
                                      None if reference_ms is None else float(reference_ms), space, rows)

    def screen(self, configs, incumbent_ms: float, calibration, calibration_ms, device: str, problem_size=None,
               alpha: float = 0.1, delta: float = 0.1, tolerance: float = 0.0, kernel: str | None = None,
               parameters: Sequence[str] | None = None, space: Space | None = None) -> dict:
        """Which configurations need not be measured: certified as no improvement over the
        incumbent (the best time measured so far, in ms).

        calibration, calibration_ms: configurations measured on the device (a list of dicts or a
        DataFrame) that the model did not train on, and their times. With probability >= 1 - delta
        over them, among the configurations truly faster than incumbent_ms * (1 - tolerance), the
        share skipped is <= alpha (docs/calibration.md, "Certified screening"). Fewer than about
        log(delta) / log(1 - alpha) calibration configurations faster than that bar certify
        nothing: every configuration is measured, and "reason" says why.

        Returns "skip" (bool array, one per configuration), "median_ms" (the forecasts), and the
        rule: "certified", "margin" (log), "improvements", "misses", "risk_upper_bound", "reason".
        """
        if not isinstance(incumbent_ms, (int, float, np.number)):
            raise TypeError(f"incumbent_ms must be a number, got {incumbent_ms!r}")
        measured = np.asarray(calibration_ms, dtype=float).ravel()
        if len(measured) != len(calibration):
            raise ValueError(f"calibration_ms has {len(measured)} times for {len(calibration)} calibration configurations")
        wanted = self.forecast(configs, device, problem_size, kernel=kernel, parameters=parameters, space=space)
        known = self.forecast(calibration, device, problem_size, kernel=kernel, parameters=parameters, space=space)
        out = _native._screen(known["median_ms"].tolist(), measured.tolist(), wanted["median_ms"].tolist(),
                              float(incumbent_ms), float(alpha), float(delta), float(tolerance))
        out["median_ms"] = wanted["median_ms"]
        return out

    def for_new_device(self, files, ratio_surrogate: str = "default", seed: int = 0, out=None) -> "Model":
        """A model of a GPU this one was not trained on, from measurement files of it (one kernel on
        one device): the model's views of the kernel's other GPUs of that vendor (one model per
        training GPU, stored by rehearse()) stacked by the measurements, times a `ratio_surrogate`
        fitted to what the stacking misses. Other devices are forecast as before. Not calibrated
        (forecast() defers every configuration): calibrate_pairs() on other measurements of the GPU,
        kind="child", gives compare() its rule. In memory unless `out` names a model file to write
        (as `gpuforecast adapt` does; this model must then be a file's)."""
        if not isinstance(ratio_surrogate, str):
            raise TypeError(f"ratio_surrogate must be a surrogate name such as 'default', got {ratio_surrogate!r}")
        if out is not None:
            return Model(_native._write_new_device_model(self.info["path"], _files(files), _path(out, "out"),
                                                         ratio_surrogate, int(seed)))
        return Model(_native._for_new_device(self._native, _files(files), ratio_surrogate, int(seed)))

    def calibrate_pairs(self, files, alpha: float = 0.1, delta: float = 0.1, kind: str = "neighbour",
                        pairs: int = 2000, loss: str = "wrong_direction", confidence: str = "direction_probability",
                        seed: int = 0) -> PairCalibration:
        """Fits conformal bin sets and the deferral rule of pairs on measurement files the model
        did not train on: pairs of `kind` ("neighbour": configurations one parameter apart, both
        forecast, disjoint; "child": each configuration against one of its neighbours at that
        neighbour's measured time, as compare(reference_ms=...) asks; "random", disjoint) drawn
        within each space. With probability >= 1 - delta,
        the `loss` ("wrong_direction" or "wrong_bin") among the pairs compare() answers is <= alpha,
        and each bin set holds the true bin with probability >= 1 - alpha."""
        for name, value in (("kind", kind), ("loss", loss), ("confidence", confidence)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {value!r}")
        return _native._calibrate_pairs(self._native, _files(files), float(alpha), float(delta), kind, int(pairs), loss,
                                        confidence, int(seed))

    def compare(self, reference: dict, candidates, pairs: PairCalibration, device: str, problem_size=None,
                kernel: str | None = None, parameters: Sequence[str] | None = None,
                space: Space | None = None, reference_ms: float | None = None) -> dict[str, np.ndarray]:
        """Is each candidate faster than `reference` (a dict {parameter: value}), by how much, and
        may the answer be used without measuring. pairs: from calibrate_pairs(). reference_ms: the
        reference's measured runtime (a search's parent), used instead of its forecast; calibrate
        with kind="child" for that question. The reference and every candidate are checked as in
        forecast() (ConfigurationError naming the row, or the reference).

        Returns, per candidate: bin_probabilities (n x 8, half-octave speedup bins; bin 4 and up:
        the candidate is as fast or faster), predicted_bin (1..8), faster (bool, the called
        direction), set_low and set_high (the conformal bin set set_low..set_high; empty when
        set_high < set_low), confidence, defer (bool: measure the candidate) and extrapolation.
        """
        if not isinstance(pairs, PairCalibration):
            raise TypeError(f"pairs must come from Model.calibrate_pairs(), got {pairs!r}")
        if not isinstance(device, str):
            raise TypeError(f"device must be a GPU name (str), got {device!r}")
        if space is not None and not isinstance(space, Space):
            raise TypeError(f"space must be a gpuforecast.Space, got {space!r}")
        ref_names, ref_columns = _reference(reference)
        names, columns = columns_of(candidates, parameters)
        if reference_ms is not None and not isinstance(reference_ms, (int, float)):
            raise TypeError(f"reference_ms must be a number of milliseconds, got {reference_ms!r}")
        return _native._compare(self._native, pairs, self._kernel(kernel), device, _problem_size(problem_size),
                                ref_names, ref_columns, names, columns, space, 0 if names else len(candidates),
                                None if reference_ms is None else float(reference_ms))


def _reference(reference) -> tuple[list[str], list]:
    if not isinstance(reference, dict):
        raise TypeError(f"reference must be a dict {{parameter: value}}, got {reference!r}")
    return [str(k) for k in reference], [[v] for v in reference.values()]


def load(path) -> Model:
    """Reads a model file written by train() / calibrate() or `gpuforecast train`."""
    return Model(_native._load(_path(path, "path")))


def _files(files) -> list[str]:
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    out = [_path(f, "every file") for f in files]
    if not out:
        raise ValueError("give at least one measurement file")
    return out


def train(files, surrogate: str = "default", out=None, seed: int = 0) -> Model:
    """Fits a surrogate on Kernel Tuner cache / T4 files and writes it to `out` (a temporary
    file when None). The model defers every decision until it is calibrated (calibrate())."""
    if not isinstance(surrogate, str):
        raise TypeError(f"surrogate must be a name such as 'xgboost', got {surrogate!r}")
    if out is None:
        fd, out = tempfile.mkstemp(suffix=".gfm", prefix="gpuforecast-")
        os.close(fd)
    out = _path(out, "out")
    _native._train(_files(files), out, surrogate, int(seed))
    return load(out)


def rehearse(model, files, out=None, surrogate: str | None = None, seed: int = 1,
             max_configurations: int = 2000) -> Model:
    """Stores what the model's training GPUs teach about a new one, as `gpuforecast calibrate
    --rehearse` does: the surrogate refitted once per GPU of `files` (the training data) leaving
    that GPU out (`surrogate`: that kind instead of the model's own), and one model per GPU fitted
    on it alone (the views for_new_device() stacks). Writes the model to `out` (default: over the
    model's file)."""
    model_path = model.info["path"] if isinstance(model, Model) else _path(model, "model")
    out = model_path if out is None else _path(out, "out")
    if surrogate is not None and not isinstance(surrogate, str):
        raise TypeError(f"surrogate must be a name such as 'knn', got {surrogate!r}")
    _native._rehearse(model_path, _files(files), out, surrogate or "", int(seed), int(max_configurations))
    return load(out)


def calibrate(model, files, out=None, alpha: float = 0.1, delta: float = 0.1, risk_alpha: float | None = None,
              method: str = "split", group_by: str = "none", loss: str = "relative_error", tolerance: float = 0.1,
              confidence: str = "interval_width", deferral_fraction: float = 0.0, seed: int = 0,
              device_samples: int = 0, adapt_fraction: float = 0.3, views: bool = True) -> Model:
    """Adds conformal intervals and the Learn-then-Test deferral rule, fitted on measurements the
    surrogate did not train on, and writes the model to `out` (default: over the model's file).
    Warns (UserWarning) for each file the surrogate was also trained on, as `gpuforecast calibrate` does.

    `device_samples` K > 0 adapts the model to the one device of the one file instead, as
    `gpuforecast calibrate --device-samples K` does: K runs drawn with `seed`, `adapt_fraction` of
    them fit the correction (after stacking the model's per-GPU views of the device's kernel and
    vendor, when rehearse() stored them and `views` is true), the rest certify; every other device
    is deferred."""
    model_path = model.info["path"] if isinstance(model, Model) else _path(model, "model")
    out = model_path if out is None else _path(out, "out")
    if isinstance(device_samples, bool) or not isinstance(device_samples, int) or device_samples < 0:
        raise TypeError(f"device_samples must be a count of runs (0: plain calibration), got {device_samples!r}")
    for message in _native._calibrate(model_path, _files(files), out, float(alpha), float(delta),
                                      None if risk_alpha is None else float(risk_alpha), method, group_by, loss,
                                      float(tolerance), confidence, float(deferral_fraction), int(seed),
                                      device_samples, float(adapt_fraction), bool(views)):
        warnings.warn(message, stacklevel=2)
    return load(out)


class CacheData:
    """One measurement file (Kernel Tuner cache or T4, .json or .json.gz) as columns."""

    def __init__(self, d: dict):
        self.path: str = d["path"]
        self.kernel: str = d["kernel"]
        self.kernel_name: str = d["kernel_name"]
        self.device: str = d["device"]
        self.problem_size: list[int] = d["problem_size"]
        self.parameters: list[str] = d["parameters"]
        self.values: dict[str, list] = d["values"]
        self.constraints: list[str] = d["constraints"]
        self.columns: dict[str, list] = dict(zip(d["parameters"], d["columns"]))
        self.status: list[str] = d["status"]
        self.reason: list[str] = d["reason"]
        self.median_ms: np.ndarray = d["median_ms"]
        # Static features (read_cache(..., features=...)): one array per name, NaN where a
        # configuration has none; static_features says how many had them, and why not.
        self.features: dict[str, np.ndarray] = d["features"]
        self.static_features: dict | None = d.get("static_features")

    def __len__(self) -> int:
        return len(self.status)

    def __repr__(self) -> str:
        return f"<gpuforecast.CacheData {self.kernel} on {self.device}: {len(self)} entries>"

    def configs(self) -> list[dict]:
        return [dict(zip(self.parameters, row)) for row in zip(*self.columns.values())]

    def space(self) -> Space:
        """The file's parameters and value lists (without constraints)."""
        return Space([(p, self.values[p]) for p in self.parameters], self.constraints)

    def to_dataframe(self):
        import pandas as pd
        df = pd.DataFrame(self.columns)
        df["status"] = self.status
        df["median_ms"] = self.median_ms
        for name, column in self.features.items():
            df[name] = column
        return df


class LlmSurrogate:
    """A language model behind any OpenAI-compatible endpoint (llama.cpp server, vLLM, a hosted
    model) that forecasts pairs: how much faster a candidate is than a reference, as eight bin
    probabilities from the answer's log-probabilities (docs/llm.md). Settings not given come from
    GPUFORECAST_LLM_BASE_URL, GPUFORECAST_LLM_MODEL, GPUFORECAST_LLM_API_KEY and GPUFORECAST_LLM_CACHE.
    The key goes into the Authorization header only. An endpoint fault never raises: that
    candidate's status is "failed" with the reason in "error" (measure it instead)."""

    def __init__(self, base_url: str = "", model: str = "", api_key: str = "", cache_dir=None, in_flight: int = 4,
                 timeout_seconds: float = 60.0, retries: int = 3, backoff_seconds: float = 0.5, examples: int = 4):
        if not hasattr(_native, "LlmSurrogate"):
            raise Error("the LLM client is not in this build of gpuforecast (it needs libcurl)")
        for name, value in (("base_url", base_url), ("model", model), ("api_key", api_key)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {value!r}")
        self._native = _native.LlmSurrogate(base_url, model, api_key,
                                            "" if cache_dir is None else _path(cache_dir, "cache_dir"), int(in_flight),
                                            float(timeout_seconds), int(retries), float(backoff_seconds), int(examples))

    def __repr__(self) -> str:
        return f"<gpuforecast.LlmSurrogate {self._native.describe()}>"

    @property
    def counts(self) -> dict:
        """Prompts asked, requests sent, cache hits, answers, text-only answers, failures, retries."""
        return self._native.counts

    def learn(self, files) -> None:
        """Measurements shown in the prompts as worked examples."""
        self._native.learn(_files(files))

    def compare(self, reference: dict, candidates, kernel: str, device: str, problem_size=None,
                parameters: Sequence[str] | None = None) -> dict:
        """Each candidate against `reference`: bin_probabilities (n x 8), predicted_bin (1..8, 0 when
        failed), faster (bool), status ("ok", "text_only", "failed"), error and from_cache."""
        if not isinstance(kernel, str) or not isinstance(device, str):
            raise TypeError("kernel and device must be str")
        ref_names, ref_columns = _reference(reference)
        names, columns = columns_of(candidates, parameters)
        return self._native._compare(kernel, device, _problem_size(problem_size), ref_names, ref_columns, names,
                                     columns, 0 if names else len(candidates))


def read_cache(path, features=None) -> CacheData:
    """Reads a Kernel Tuner cache file or a T4 results file (.json or .json.gz, by content).
    features: a static feature table, or a folder of them (the repository's data/features/),
    joined to the configurations by their parameters (docs/features.md)."""
    return CacheData(_native._read_cache(_path(path, "path"), "" if features is None else _path(features, "features")))
