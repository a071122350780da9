"""The correlation endpoints' answers computed independently with pandas and
numpy, in the service's shapes.

Input (JSON on stdin): {"series": [[symbol, dates, closes], ...] (the first
is the benchmark), "start", "end", "window", "pattern": [[symbol, start, end],
[symbol, start, end]] or null}. With "runs": n, prints the median seconds
of n computations of the frames (not the rows) instead."""
import json
import sys

import numpy as np
import pandas as pd

from timing import print_median_seconds


def value(v):
    return None if pd.isna(v) else float(v)


def frames(req):
    """The computation itself: join, returns, matrix, rolling correlation and beta."""
    closes = {
        name: pd.Series(c, index=pd.to_datetime(d), dtype="float64")
        for name, d, c in req["series"]
    }
    names = [name for name, _, _ in req["series"]]
    df = pd.concat([closes[n] for n in names], axis=1, join="inner", keys=names)
    df = df.loc[req["start"]:req["end"]]
    rets = df.pct_change().iloc[1:]
    w = req["window"]
    bench = names[0]
    corr = rets.corr()
    roll_corr = {n: rets[n].rolling(w).corr(rets[bench]) for n in names[1:]}
    roll_beta = {n: rets[n].rolling(w).cov(rets[bench]) / rets[bench].rolling(w).var() for n in names[1:]}
    return closes, names, df, rets, corr, roll_corr, roll_beta


def compute(req):
    closes, names, df, rets, corr, roll_corr, roll_beta = frames(req)
    w = req["window"]
    bench = names[0]
    out = {
        "corr_matrix": [
            {"index": a, **{b: value(corr.loc[a, b]) for b in names}} for a in names
        ],
        "start_date": df.index[0].strftime("%Y-%m-%d"),
        "end_date": df.index[-1].strftime("%Y-%m-%d"),
    }
    dates = rets.index[w - 1:]
    out["corr_roll"] = [
        {"Date": d.strftime("%Y-%m-%dT00:00:00"),
         **{n: value(roll_corr[n][d]) for n in names[1:]},
         "stock_price": float(df.loc[d, bench])}
        for d in dates
    ]
    out["beta_roll"] = []
    for d in dates:
        row = {"Date": d.strftime("%Y-%m-%dT00:00:00")}
        for n in names[1:]:
            row[n] = value(roll_beta[n][d])
            row[f"{n}_price"] = float(df.loc[d, n])
        row["stock_price"] = float(df.loc[d, bench])
        out["beta_roll"].append(row)

    if req.get("pattern"):
        (ref, rs, re_), (cmp_, cs, ce) = req["pattern"]
        a = closes[ref].loc[rs:re_].to_numpy()
        b = closes[cmp_].loc[cs:ce].to_numpy()
        resampled = np.interp(np.linspace(0, len(b) - 1, len(a)), np.arange(len(b)), b)
        r = np.corrcoef(a, resampled)[0, 1]
        out["pattern_corr"] = max(0.0, float(r) * 100)

    return out


def main():
    req = json.load(sys.stdin)
    runs = req.get("runs")
    if runs:
        # Benchmark mode: the computation only.
        print_median_seconds(lambda: frames(req), runs)
    else:
        json.dump(compute(req), sys.stdout)


if __name__ == "__main__":
    main()
