"""Seasonality views computed independently with pandas (holiday rules from
pandas.tseries.holiday, sessions from pandas-market-calendars), in the
service's row shapes.

Input (JSON on stdin): {"dates", "close", "fomc", "latest", "start_year",
"end_year", "holidays": [name], "shift", "specific": [{month, day, shift}],
"single": [{month, category}], "curves": [{entry, holding, exit}]}; null
fields take the service's defaults. With "runs": n, prints the median
seconds of n computations instead."""
import calendar
import json
import sys

import numpy as np
import pandas as pd
import pandas_market_calendars as mcal
from pandas.tseries.holiday import (
    GoodFriday,
    USLaborDay,
    USMartinLutherKingJr,
    USMemorialDay,
    USPresidentsDay,
    USThanksgivingDay,
)

from timing import print_median_seconds

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def stats_full(g):
    return {"AVG RET": g.mean(), "MAX": g.max(), "MIN": g.min(), "% POS": (g > 0).mean() * 100}


def mean_pos(g):
    return {"Mean_Return": g.mean(), "Positive_Pct": (g > 0).mean() * 100}


def compute(req):
    idx = pd.to_datetime(req["dates"])
    close = pd.Series(req["close"], index=idx, dtype="float64")
    latest = pd.Timestamp(req["latest"])
    y0 = req["start_year"] if req["start_year"] is not None else latest.year - 20
    y1 = req["end_year"] if req["end_year"] is not None else latest.year
    ret = close.pct_change() * 100
    in_years = (ret.index.year >= y0) & (ret.index.year <= y1)
    r = ret[in_years].dropna()
    n = len(close)
    # Trading day of year / of month: the symbol's N-th bar in it.
    tdy = close.groupby(close.index.year).cumcount() + 1
    tdm = close.groupby([close.index.year, close.index.month]).cumcount() + 1

    nyse = mcal.get_calendar("NYSE")
    sessions = set(d.date() for d in nyse.valid_days(f"{y0 - 1}-01-01", f"{y1 + 1}-12-31"))
    out = {}

    out["performance-by-week"] = [
        {"Weekday": WEEKDAYS[k], "Return": g.mean(), "Positive": (g > 0).mean() * 100}
        for k, g in r.groupby(r.index.day_of_week)
        if k < 5
    ]

    # Monthly returns from month-end closes; the final month only when complete.
    ends = close.groupby([close.index.year, close.index.month]).tail(1)
    mret = ends.pct_change() * 100
    last = close.index[-1]
    month_sessions = nyse.valid_days(last.replace(day=1), last + pd.offsets.MonthEnd(0))
    if month_sessions[-1].date() != last.date():
        mret = mret.iloc[:-1]
    mret = mret.dropna()
    mret = mret[(mret.index.year >= y0) & (mret.index.year <= y1)]
    out["performance-by-month"] = [
        {"Month": calendar.month_name[m], "Return": g.mean(), "Positive": (g > 0).mean() * 100}
        for m, g in mret.groupby(mret.index.month)
    ]

    out["performance-by-day-of-month"] = [
        {"Month": f"{m:02d}", "Day": f"{d:02d}", **stats_full(g)}
        for (m, d), g in r.groupby([r.index.month, r.index.day])
    ]

    ry = r[tdy[r.index] <= 252]
    out["performance-by-day-of-year"] = [
        {"Day": int(k), **stats_full(g)} for k, g in ry.groupby(tdy[ry.index].values)
    ]

    def around(events, shift):
        acc = {k: [] for k in range(-shift, shift + 1)}
        for e in events:
            z = close.index.searchsorted(pd.Timestamp(e))
            if z >= n:
                continue
            for k in range(-shift, shift + 1):
                i = z + k
                if 1 <= i < n:
                    acc[k].append(ret.iloc[i])
        return [
            {"DayOffset": k, **mean_pos(pd.Series(v))} for k, v in acc.items() if v
        ]

    start, end = f"{y0}-01-01", f"{y1}-12-31"
    years = range(y0, y1 + 1)

    def session_on_or_before(d):
        while d.date() not in sessions:
            d -= pd.Timedelta(days=1)
        return d

    expirations = [session_on_or_before(d) for d in pd.date_range(start, end, freq="WOM-3FRI")]
    fixed = lambda m, d: [pd.Timestamp(y, m, d) for y in years]
    events = {
        "Christmas Day": fixed(12, 25),
        "Independence Day": fixed(7, 4),
        "New Year's Day": fixed(1, 1),
        "Good Friday": list(GoodFriday.dates(start, end)),
        "Labor Day": list(USLaborDay.dates(start, end)),
        "MLK Jr. Day": list(USMartinLutherKingJr.dates(start, end)),
        "Memorial Day": list(USMemorialDay.dates(start, end)),
        "President's Day": list(USPresidentsDay.dates(start, end)),
        "Thanksgiving Day": list(USThanksgivingDay.dates(start, end)),
        "Monthly Option Expiration": expirations,
        "March Quad Option Expiration": [d for d in expirations if d.month == 3],
        "June Quad Option Expiration": [d for d in expirations if d.month == 6],
        "September Quad Option Expiration": [d for d in expirations if d.month == 9],
        "December Quad Option Expiration": [d for d in expirations if d.month == 12],
        "Election Day(US)": [
            d + pd.Timedelta(days=1)
            for d in pd.date_range(start, end, freq="WOM-1MON")
            if d.month == 11
        ],
        "FOMC Decision Day": [
            pd.Timestamp(d) for d in req["fomc"] if y0 <= pd.Timestamp(d).year <= y1
        ],
    }
    shift = req["shift"] if req["shift"] is not None else 5
    out["holidays"] = {
        name: {"holiday_name": name, "shift": shift, "data": around(events[name], shift)}
        for name in req["holidays"]
    }

    out["specific"] = []
    for sp in req["specific"]:
        month = sp["month"] or latest.month
        day = sp["day"] or latest.day
        sshift = sp["shift"] if sp["shift"] is not None else 5
        dates = []
        for y in years:
            try:
                dates.append(pd.Timestamp(y, month, day))
            except ValueError:
                pass
        out["specific"].append({
            "target_date": f"{month:02d}-{day:02d}",
            "shift": sshift,
            "data": around(dates, sshift),
        })

    out["single"] = []
    for s in req["single"]:
        m = s["month"] or latest.month
        cat = s["category"] or "calendar_day"
        rm = r[r.index.month == m]
        keys = rm.index.day if cat == "calendar_day" else tdm[rm.index].values
        out["single"].append({
            "month_name": calendar.month_name[m],
            "category": cat,
            "data": [{"Day": f"{int(k):02d}", **mean_pos(g)} for k, g in rm.groupby(keys)],
        })

    out["curves"] = []
    for c in req["curves"]:
        entry = c["entry"] or int(tdy[tdy.index <= latest].iloc[-1])
        holding = (c["exit"] - entry) if c["exit"] else (c["holding"] or 63)
        in_range = (close.index.year >= y0) & (close.index.year <= y1)
        held = np.zeros(n, dtype=bool)
        for i in np.flatnonzero((tdy.to_numpy() == entry) & in_range):
            held[i + 1:min(i + holding, n - 1) + 1] = True
        eq = (1 + ret[held] / 100).cumprod()
        out["curves"].append({
            "entry_trading_day": entry,
            "exit_trading_day": entry + holding,
            "holding_days": holding,
            "data": [{"Date": d.strftime("%Y-%m-%d"), "Equity": v} for d, v in eq.items()],
        })

    return out


def main():
    req = json.load(sys.stdin)
    runs = req.get("runs")
    if runs:
        print_median_seconds(lambda: compute(req), runs)
    else:
        json.dump(compute(req), sys.stdout, default=float)


if __name__ == "__main__":
    main()
