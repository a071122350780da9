"""Bars sent with a backtest: a frame as the file a CSV-mode submit takes,
built column by column from the frame's arrays (no row objects)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def bars_table(bars: pd.DataFrame) -> pa.Table:
    """`bars` (a `Date` index or column, then `Open`, `High`, `Low`,
    `Close`, `Volume` and any signal columns) as a table whose `Date` is a
    date32 column."""
    if "Date" in bars.columns:
        dates, rest = bars["Date"], bars.drop(columns=["Date"])
    else:
        dates, rest = bars.index.to_series(), bars
    days = pd.DatetimeIndex(pd.to_datetime(dates)).to_numpy().astype("datetime64[D]")
    arrays = [pa.array(days, pa.date32())]
    names = ["Date"]
    for column in rest.columns:
        values = rest[column].to_numpy()
        arrays.append(pa.array(values if values.dtype != np.dtype("O") else list(values)))
        names.append(str(column))
    return pa.Table.from_arrays(arrays, names=names)


def bars_file(bars: pd.DataFrame) -> tuple[str, bytes, str]:
    """The multipart `bars` part: its file name, content and media type."""
    sink = io.BytesIO()
    pq.write_table(bars_table(bars), sink, compression="none")
    return "bars.parquet", sink.getvalue(), "application/vnd.apache.parquet"
