"""A batch's grid as a quant reads it: each varied key by a short name (the
last segments of its path that tell it from the others, or a name the
caller gives), values with their numeric dtype, and a row turned back into
the strategy it ran."""

from __future__ import annotations

import copy
from typing import Any, Iterable, Mapping

import pandas as pd


def short_names(keys: Iterable[str], given: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each grid key's column name: `given[key]` when the caller named it,
    else the last segment of its (first) path, lengthened segment by
    segment while two keys would share it
    (`signal.params.period` and `rule.period`)."""
    given = dict(given or {})
    keys = list(keys)
    segments = {k: k.split(",")[0].split(".") for k in keys}
    depth = {k: 1 for k in keys}
    while True:
        names = {k: given.get(k) or ".".join(segments[k][-depth[k]:]) for k in keys}
        clashing = [k for k in keys if k not in given and list(names.values()).count(names[k]) > 1]
        longer = [k for k in clashing if depth[k] < len(segments[k])]
        if not longer:
            break
        for k in longer:
            depth[k] += 1
    if len(set(names.values())) < len(names):
        raise ValueError(f"two grid keys share a name: {names}")
    return names


def typed(column: pd.Series) -> pd.Series:
    """Values sent as text or numbers, as integers when all are whole
    numbers, else floats when all are numbers, else as they are."""
    numbers = pd.to_numeric(column, errors="coerce")
    if numbers.isna().any() and not column.isna().all():
        return column
    if (numbers == numbers.round()).all() and numbers.abs().max() < 2**53:
        return numbers.astype("int64")
    return numbers.astype("float64")


def with_values(strategy: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """`strategy` with each key's paths (comma-linked) set to its value."""
    out: dict[str, Any] = copy.deepcopy(dict(strategy))
    for key, value in values.items():
        for path in key.split(","):
            node: Any = out
            parts = path.split(".")
            for part in parts[:-1]:
                node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
            last = parts[-1]
            if isinstance(node, list):
                node[int(last)] = value
            else:
                node[last] = value
    return out


def original(grid: Mapping[str, list[Any]], key: str, shown: Any) -> Any:
    """The value of `grid[key]` a results cell shows (the one sent, with
    its own type)."""
    for v in grid.get(key, []):
        if v == shown or str(v) == str(shown):
            return v
    return shown


def bars_rows(bars: pd.DataFrame) -> list[dict[str, Any]]:
    """Bars (a Date index or column, Open, High, Low, Close, Volume and any
    signal columns) as the `csv_data` rows of a CSV-mode strategy."""
    frame = bars.reset_index() if "Date" not in bars.columns else bars.copy()
    if "Date" not in frame.columns:
        frame = frame.rename(columns={frame.columns[0]: "Date"})
    frame["Date"] = pd.to_datetime(frame["Date"]).dt.strftime("%Y-%m-%d")
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict(orient="records")]
