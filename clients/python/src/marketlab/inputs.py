"""What a notebook passes, as the API reads it: dates of any common type as
`YYYY-MM-DD`, one symbol or many, and numpy or pandas scalars in a body as
plain JSON numbers."""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any, Iterable, Mapping, Union

import numpy as np
import pandas as pd

#: A date as any argument takes it: `YYYY-MM-DD` text, a `date`, a
#: `datetime` or `pd.Timestamp` at midnight, or a `numpy.datetime64`.
DateLike = Union[str, dt.date, dt.datetime, pd.Timestamp, np.datetime64]


def as_date(value: Any) -> str:
    """`value` as `YYYY-MM-DD`: text is passed as it is (the server says
    what is wrong with it); a `date`, `datetime`, `pd.Timestamp` or
    `numpy.datetime64` gives its date (a time of day other than midnight
    is refused: the API's dates are sessions)."""
    if isinstance(value, str):
        return value
    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value)
    if isinstance(value, dt.datetime):
        if value.time() != dt.time(0) or getattr(value, "nanosecond", False):
            raise ValueError(f"{value!r} has a time of day; pass its date")
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"expected a date (text, date, datetime or pd.Timestamp), got {type(value).__name__}")


def as_month(value: Any) -> str:
    """`YYYY-MM` text as it is, or the month of a date of any type above."""
    if isinstance(value, str):
        return value
    return as_date(value)[:7]


def symbol_list(symbols: str | Iterable[str]) -> str:
    """One symbol, or several, as the comma-separated list the API takes."""
    if isinstance(symbols, str):
        return symbols
    return ",".join(symbols)


def plain(value: Any) -> Any:
    """A value JSON cannot hold as it is, in a form it can: dates as
    `YYYY-MM-DD` (times as ISO 8601), numpy and pandas scalars and arrays
    as numbers and lists."""
    if isinstance(value, (pd.Timestamp, dt.datetime, np.datetime64)):
        stamp = pd.Timestamp(value)
        return stamp.date().isoformat() if stamp == stamp.normalize() else stamp.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (np.ndarray, pd.Series, pd.Index)):
        return [plain(v) for v in value.tolist()]
    raise TypeError(f"{type(value).__name__} cannot be sent as JSON")


def json_text(body: Any) -> str:
    """The body as JSON text; a NaN or infinity is refused here (JSON has
    neither)."""
    try:
        return json.dumps(body, default=plain, allow_nan=False, separators=(",", ":"))
    except ValueError as e:
        raise ValueError(f"the request holds a value JSON cannot: {e}") from None


def query(params: Mapping[str, Any] | None) -> dict[str, str] | None:
    """Query parameters as text: dates as `YYYY-MM-DD`, booleans as
    `true`/`false`; a `None` value is left out."""
    if params is None:
        return None
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (dt.date, np.datetime64)):
            out[key] = str(plain(value))
        elif isinstance(value, float) and math.isnan(value):
            raise ValueError(f"query parameter {key!r} is NaN")
        else:
            out[key] = str(plain(value) if isinstance(value, np.generic) else value)
    return out
