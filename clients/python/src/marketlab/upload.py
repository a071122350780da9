"""Bars sent with a backtest: a frame as the Arrow IPC stream a CSV-mode
submit takes, built from the frame's arrays in one copy (no rows, no
per-column Series) and only of the columns the server reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

#: The columns a CSV-mode backtest reads besides the date (any case).
COLUMNS = ("Open", "High", "Low", "Close", "Volume", *(f"Entry{i}" for i in range(1, 6)), *(f"Exit{i}" for i in range(1, 6)))
_WANTED = {c.lower() for c in COLUMNS}

ARROW_STREAM = "application/vnd.apache.arrow.stream"


def _days(dates: pd.Index | pd.Series) -> np.ndarray:
    """Dates of any form pandas reads, as datetime64[D]."""
    index = dates if isinstance(dates, pd.DatetimeIndex) else pd.DatetimeIndex(pd.to_datetime(dates))
    if index.tz is not None:
        index = index.tz_localize(None)
    return index.to_numpy().astype("datetime64[D]")


def bars_batch(bars: pd.DataFrame) -> pa.RecordBatch:
    """`bars` (a `Date` index or column, then `Open`, `High`, `Low`,
    `Close`, `Volume` and any `Entry1`..`Exit5` columns, in any case) as a
    record batch: `Date` as date32, the rest as float64 under their own
    names. Other columns are left out: the server reads none of them.

    Raises:
        ValueError: no `Date` column or date index."""
    date_column = next((c for c in bars.columns if str(c).lower() == "date"), None)
    if date_column is not None:
        days = _days(bars[date_column])
    elif isinstance(bars.index, pd.DatetimeIndex) or str(bars.index.name).lower() == "date":
        days = _days(bars.index)
    else:
        raise ValueError("bars need a Date column or a date index")
    keep = [str(c).lower() in _WANTED for c in bars.columns]
    names = [c for c, k in zip(bars.columns, keep) if k]
    # One copy of the block: selecting columns first would build a frame.
    values = (bars if all(keep) else bars.loc[:, keep]).to_numpy(dtype="float64").T.copy()
    arrays = [pa.array(days, pa.date32()), *(pa.array(v) for v in values)]
    return pa.RecordBatch.from_arrays(arrays, names=["Date", *(str(n) for n in names)])


def bars_file(bars: pd.DataFrame) -> tuple[str, bytes, str]:
    """The multipart `bars` part: its file name, content and media type."""
    batch = bars_batch(bars)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return "bars.arrow", sink.getvalue().to_pybytes(), ARROW_STREAM
