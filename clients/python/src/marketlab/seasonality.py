"""Seasonality answers as frames with one naming scheme: each frame is
indexed by its period (`weekday`, `month`, `day`, `day_offset` or `date`)
and its columns are among `mean_return`, `max_return`, `min_return` (all
in percent), `positive_pct` (the share of periods that rose, in percent)
and `equity` (the one-dollar curve). Weekdays and months are ordered
categoricals (they sort in calendar order), dates are datetimes, days are
integers; the answer's settings (`holiday_name`, `shift`, ...) go to
`attrs`."""

from __future__ import annotations

import calendar
from typing import Any, Literal

import pandas as pd

View = Literal["week", "month", "day_of_month", "day_of_year", "holiday", "specific_days", "single_month", "dollar_curve"]

#: GET /seasonality/<path> by the view a notebook asks for.
SEASONALITY: dict[str, str] = {
    "week": "performance-by-week",
    "month": "performance-by-month",
    "day_of_month": "performance-by-day-of-month",
    "day_of_year": "performance-by-day-of-year",
    "holiday": "performance-around-holiday",
    "specific_days": "performance-around-specific-days",
    "single_month": "performance-by-day-of-single-month",
    "dollar_curve": "one-dollar-curve",
}

WEEKDAYS = pd.CategoricalDtype(list(calendar.day_name)[:5], ordered=True)
MONTHS = pd.CategoricalDtype(list(calendar.month_name)[1:], ordered=True)

#: The server's column names (four schemes across the views) to one.
COLUMNS = {
    "Weekday": "weekday",
    "Month": "month",
    "Day": "day",
    "DayOffset": "day_offset",
    "Date": "date",
    "Return": "mean_return",
    "AVG RET": "mean_return",
    "Mean_Return": "mean_return",
    "MAX": "max_return",
    "MIN": "min_return",
    "Positive": "positive_pct",
    "% POS": "positive_pct",
    "Positive_Pct": "positive_pct",
    "Equity": "equity",
}

#: Each view's index, outermost first.
INDEX: dict[str, list[str]] = {
    "week": ["weekday"],
    "month": ["month"],
    "day_of_month": ["month", "day"],
    "day_of_year": ["day"],
    "holiday": ["day_offset"],
    "specific_days": ["day_offset"],
    "single_month": ["day"],
    "dollar_curve": ["date"],
}


def seasonality_frame(view: str, data: Any) -> pd.DataFrame:
    """The frame of one view's `data` (rows, or an object holding them
    under `data` beside its settings)."""
    settings: dict[str, Any] = {}
    rows = data
    if isinstance(data, dict):
        settings = {k: v for k, v in data.items() if k != "data"}
        rows = data.get("data", [])
    frame = pd.DataFrame.from_records(rows).rename(columns=COLUMNS)
    unknown = [c for c in frame.columns if c not in COLUMNS.values()]
    if unknown:
        raise ValueError(f"seasonality answer has columns this package does not know: {unknown}")
    if "weekday" in frame:
        frame["weekday"] = frame["weekday"].astype(WEEKDAYS)
    if "month" in frame:
        # By name, or (day of month) by number.
        month = frame["month"]
        names = month if not month.astype(str).str.isdigit().all() else month.astype(int).map(lambda m: calendar.month_name[m])
        frame["month"] = names.astype(MONTHS)
    for column in ("day", "day_offset"):
        if column in frame:
            frame[column] = frame[column].astype("int64")
    if "date" in frame:
        frame["date"] = pd.to_datetime(frame["date"]).dt.as_unit("ns")
    index = INDEX[view]
    if len(frame):
        frame = frame.set_index(index if len(index) > 1 else index[0])
    frame.attrs.update(settings)
    return frame
