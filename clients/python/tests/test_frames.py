"""Frames as a quant reads them: every seasonality view in one naming
scheme (its period as the index, months and weekdays as ordered
categoricals, dates as datetimes) holding the server's numbers, and the
correlation frames with only the columns they document."""

import calendar

import numpy as np
import pandas as pd
import pytest

VIEWS = {
    "week": ("performance-by-week", {}, ["weekday"], ["mean_return", "positive_pct"]),
    "month": ("performance-by-month", {}, ["month"], ["mean_return", "positive_pct"]),
    "day_of_month": ("performance-by-day-of-month", {}, ["month", "day"], ["mean_return", "max_return", "min_return", "positive_pct"]),
    "day_of_year": ("performance-by-day-of-year", {}, ["day"], ["mean_return", "max_return", "min_return", "positive_pct"]),
    "holiday": ("performance-around-holiday", {"holiday_name": "Christmas Day", "shift": 3}, ["day_offset"], ["mean_return", "positive_pct"]),
    "specific_days": ("performance-around-specific-days", {"month": 3, "day": 15, "shift": 4}, ["day_offset"], ["mean_return", "positive_pct"]),
    "single_month": ("performance-by-day-of-single-month", {"target_month": "March"}, ["day"], ["mean_return", "positive_pct"]),
    "dollar_curve": ("one-dollar-curve", {"entry_day": 5, "holding_days": 10}, ["date"], ["equity"]),
}
# The server's names for the same numbers, per column.
SERVER = {
    "mean_return": ("Return", "AVG RET", "Mean_Return"),
    "max_return": ("MAX",),
    "min_return": ("MIN",),
    "positive_pct": ("Positive", "% POS", "Positive_Pct"),
    "equity": ("Equity",),
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_every_seasonality_view_in_one_scheme_with_the_server_s_numbers(client, view):
    path, params, index, columns = VIEWS[view]
    frame = client.seasonality("SPX", view, start_year=2005, end_year=2024, **params)
    answer = client.request("GET", f"/seasonality/{path}", params={"ticker": "SPX", "start_year": 2005, "end_year": 2024, **params}).json()["data"]
    rows = answer["data"] if isinstance(answer, dict) else answer
    assert list(frame.index.names) == index and list(frame.columns) == columns
    assert len(frame) == len(rows) > 0
    for column in columns:
        sent = next(name for name in SERVER[column] if name in rows[0])
        np.testing.assert_array_equal(frame[column].to_numpy(), np.array([r[sent] for r in rows], dtype=float))
    if isinstance(answer, dict):
        assert {k: v for k, v in answer.items() if k != "data"} == frame.attrs
    levels = [frame.index] if len(index) == 1 else [frame.index.get_level_values(i) for i in range(len(index))]
    for name, level in zip(index, levels):
        if name in ("weekday", "month"):
            assert isinstance(level.dtype, pd.CategoricalDtype) and level.dtype.ordered
        elif name == "date":
            assert isinstance(level, pd.DatetimeIndex)
            assert [d.strftime("%Y-%m-%d") for d in level] == [r["Date"] for r in rows]
        else:
            assert level.dtype == "int64"


def test_months_and_weekdays_sort_in_calendar_order(client):
    months = client.seasonality("SPX", "month")
    assert list(months.sort_index().index) == list(calendar.month_name)[1:]
    assert months.index.min() == "January" and months.index.max() == "December"
    weekdays = client.seasonality("SPX", "week")
    assert list(weekdays.sort_index().index) == list(calendar.day_name)[:5]
    by_day = client.seasonality("SPX", "day_of_month")
    # Months by name, in order, and each month's days ascending.
    assert list(by_day.index.get_level_values("month").unique()) == list(calendar.month_name)[1:]
    assert by_day.loc["February"].index.max() <= 29


def test_correlation_frames_hold_only_what_they_document(client):
    symbols = ["AAPL", "MSFT"]
    rolling = client.correlation("SPX", symbols, "2020-01-02", "2021-12-31")
    assert list(rolling.columns) == symbols and rolling.index.name == "Date"
    assert isinstance(rolling.index, pd.DatetimeIndex)
    matrix = client.correlation_matrix("SPX", symbols, "2020-01-02", "2021-12-31")
    assert matrix.index.name == "symbol" and list(matrix.index) == list(matrix.columns)
    # The matrix is the returns' correlation: recomputed from the prices.
    closes = pd.DataFrame({s: client.prices(s, "2020-01-02", "2021-12-31")["Close"] for s in ["SPX", *symbols]}).dropna()
    expected = closes.pct_change().dropna().corr()
    np.testing.assert_allclose(matrix.loc[expected.index, expected.columns].to_numpy(), expected.to_numpy(), rtol=1e-9)
