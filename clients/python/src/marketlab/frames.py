"""Answers into DataFrames: Arrow IPC streams, lists of records and
dictionaries of columns, with dates as a DatetimeIndex."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pyarrow as pa


def from_arrow(body: bytes) -> pd.DataFrame:
    """An Arrow IPC stream; its schema metadata (JSON text where it parses)
    goes to `frame.attrs`."""
    table = pa.ipc.open_stream(body).read_all()
    # Every timestamp in the package's one unit (nanoseconds), whatever the stream's.
    frame: pd.DataFrame = table.to_pandas(coerce_temporal_nanoseconds=True)
    for key, value in (table.schema.metadata or {}).items():
        text = value.decode()
        try:
            frame.attrs[key.decode()] = json.loads(text)
        except ValueError:
            frame.attrs[key.decode()] = text
    return frame


def records_frame(rows: list[Any]) -> pd.DataFrame:
    return pd.DataFrame.from_records(rows) if rows else pd.DataFrame()


def dated(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """`column` (dates as text or timestamps) as the frame's DatetimeIndex."""
    if column in frame.columns:
        frame.index = pd.DatetimeIndex(pd.to_datetime(frame.pop(column)), name=column).as_unit("ns")
    return frame
