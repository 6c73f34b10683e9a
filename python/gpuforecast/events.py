"""Reading a search's event log (JSON Lines, docs/events.md) into a pandas DataFrame."""
from __future__ import annotations

import json
import os
import warnings

#: The newest event log version this package reads.
EVENT_LOG_VERSION = 2


def read_events(path):
    """The event log at `path` as a pandas DataFrame: one row per event, in file order, with the
    nested fields flattened ("config.block_size_x", "forecast.forecast_ms", "budget.measurements").

    A last line cut short (a search killed while writing it) is left out with a warning; a bad
    line anywhere else raises ValueError naming the file and the line, as does a log written by a
    newer gpuforecast than this one."""
    import pandas as pd

    path = os.fspath(path)
    rows = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    # The file ends with a newline: the part after it is empty, or the cut-short last line.
    last = len(lines) - 1
    for number, text in enumerate(lines, start=1):
        if not text:
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as e:
            if number - 1 == last:
                warnings.warn(f"{path}:{number}: the last line is cut short (a killed search?); left out",
                              stacklevel=2)
                continue
            raise ValueError(f"{path}:{number}: not a JSON object: {e.msg} at column {e.colno}") from None
        if not isinstance(row, dict) or "event" not in row or "v" not in row:
            raise ValueError(f"{path}:{number}: not an event (needs \"v\" and \"event\")")
        if row["v"] > EVENT_LOG_VERSION:
            raise ValueError(f"{path}:{number}: event log version {row['v']} is newer than this gpuforecast reads "
                             f"({EVENT_LOG_VERSION}): upgrade gpuforecast")
        rows.append(row)
    return pd.json_normalize(rows, sep=".")
