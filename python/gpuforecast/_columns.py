"""Configurations (list of dicts, pandas DataFrame, dict of columns) as parameter columns."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from . import _gpuforecast as _native


def _column(values):
    a = np.asarray(values)
    if a.ndim == 1 and a.dtype.kind in "iub":
        return np.ascontiguousarray(a, dtype=np.int64)
    if a.ndim == 1 and a.dtype.kind == "f":
        return np.ascontiguousarray(a, dtype=np.float64)
    return list(values)


def columns_of(configs, parameters: Sequence[str] | None = None) -> tuple[list[str], list]:
    """Names and one column per parameter. Raises TypeError/KeyError naming what is wrong."""
    if hasattr(configs, "columns") and hasattr(configs, "to_numpy"):  # a pandas DataFrame
        names = [str(c) for c in configs.columns] if parameters is None else list(parameters)
        missing = [p for p in names if p not in configs.columns]
        if missing:
            raise KeyError(f"the DataFrame lacks parameter column(s) {', '.join(missing)}")
        return names, [_column(configs[p].to_numpy()) for p in names]
    if isinstance(configs, Mapping):  # {parameter: column}
        names = list(configs.keys()) if parameters is None else list(parameters)
        missing = [p for p in names if p not in configs]
        if missing:
            raise KeyError(f"no column for parameter(s) {', '.join(map(str, missing))}")
        return [str(n) for n in names], [_column(configs[p]) for p in names]
    if isinstance(configs, (str, bytes)) or not hasattr(configs, "__iter__"):
        raise TypeError(f"configs must be a list of dicts or a pandas DataFrame, got {type(configs).__name__}")
    rows = configs if type(configs) is list else list(configs)
    if not rows:
        return (list(parameters) if parameters else []), [[] for _ in (parameters or [])]
    # The common case (every row a dict with exactly the parameters) in one pass in C++: the
    # checks and comprehensions below cost ~10% of an XGBoost batch. Irregular rows fall through
    # so that the error below names what is wrong.
    if isinstance(rows[0], dict):
        keys = list(rows[0].keys()) if parameters is None else list(parameters)
        fast = _native._dict_columns(rows, keys)
        if fast is not None:
            return [str(n) for n in keys], fast
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping):
            raise TypeError(f"configs[{i}] is {r!r}, not a dict of parameter values")
    names = list(rows[0].keys()) if parameters is None else list(parameters)
    for i, r in enumerate(rows):
        if len(r) != len(names) or any(p not in r for p in names):
            missing = [p for p in names if p not in r]
            extra = [k for k in r if k not in names]
            what = []
            if missing:
                what.append(f"lacks {', '.join(map(str, missing))}")
            if extra:
                what.append(f"has unexpected {', '.join(map(str, extra))}")
            raise KeyError(f"configs[{i}] {' and '.join(what)} (parameters: {', '.join(map(str, names))})")
    return [str(n) for n in names], [_column([r[p] for r in rows]) for p in names]
