"""Screens recomputed with pandas from the Parquet files: the 200-session
average of the trend screens and the ideas, the month averages of the
seasonality screens, the hedgers' 3-year z-scores, and the dividend screens'
performance fields, with the same selection rules.

stdin: {"dir": market dir, "date": "YYYY-MM-DD" (for the ideas)}
stdout: {key: [records]}
"""
import json
import sys

import numpy as np
import pandas as pd

q = json.load(sys.stdin)
d = q["dir"]
syms = pd.read_parquet(d + "/reference/symbols.parquet")
cat = pd.read_parquet(d + "/indicators/catalog.parquet")
klass = dict(zip(syms.symbol, syms.asset_class))
names = dict(zip(syms.symbol, syms.name))


def prices(s):
    p = pd.read_parquet(f"{d}/prices/daily/{s}.parquet")
    p["date"] = pd.to_datetime(p["date"])
    return p.set_index("date")


def series(code):
    try:
        s = pd.read_parquet(f"{d}/indicators/series/{code}.parquet")
    except FileNotFoundError:
        return None
    s["date"] = pd.to_datetime(s["date"])
    return s.set_index("date")


def f(x):
    return None if x is None or pd.isna(x) else float(x)


optix = cat[(cat.type == "optix") & (~cat.internal)]
out = {}
for key, cls in [("etf", "etf"), ("commod", "commodity")]:
    trend, seasonal = [], []
    for _, m in optix.iterrows():
        if klass.get(m.market_symbol) != cls:
            continue
        s, p = series(m.url), prices(m.market_symbol)
        last = s.index[-1]
        ma = p.close.rolling(200).mean()
        trend.append({"symbol": m.market_symbol, "last_value": float(s.close.iloc[-1]),
                      "close": float(p.close.iloc[-1]), "MA": f(ma.iloc[-1])})
        month_end = p.close.resample("ME").last().dropna()
        r = (month_end / month_end.shift(1) - 1) * 100
        r = r[(r.index.month == last.month) & (r.index.year < last.year)].dropna()
        seasonal.append({"symbol": m.market_symbol, "AvgReturn": f(r.mean()) if len(r) else None,
                         "last_update": str(last.date())})
    out[f"{key}-sentiment-trend"] = sorted(trend, key=lambda x: x["symbol"])
    out[f"{key}-sentiment-seasonality"] = sorted(seasonal, key=lambda x: x["symbol"])

hedge = []
for _, m in cat[cat.groups.apply(lambda g: "Hedgers" in list(g)) & ~cat.internal].iterrows():
    if klass.get(m.market_symbol) != "commodity":
        continue
    s = series(m.url)
    last = s.index[-1]
    w = s.close[s.index >= last - pd.DateOffset(years=3)]
    z = (w.iloc[-1] - w.mean()) / w.std(ddof=1)
    hedge.append({"symbol": m.market_symbol, "last_value": float(w.iloc[-1]), "three_year_max": float(w.max()),
                  "three_year_min": float(w.min()), "net_position": float(z)})
out["commod-hedger-extremes"] = sorted(hedge, key=lambda x: (-abs(x["net_position"]), x["symbol"]))

metrics = pd.read_parquet(d + "/tables/key_metrics.parquet").sort_values("date").groupby("symbol").tail(1)
div = []
members = syms[(syms.asset_class == "stock") & syms.universes.apply(lambda u: "sp1500" in list(u))]
for _, s in members.iterrows():
    m = metrics[metrics.symbol == s.symbol]
    if m.empty or not (m.dividend_yield.iloc[0] > 0):
        continue
    c = prices(s.symbol).close
    perf = {n: f((c.iloc[-1] / c.iloc[-1 - k] - 1) * 100) if len(c) > k else None
            for n, k in [("onemonthperf", 21), ("threemonthperf", 63), ("sixmonthperf", 126),
                         ("oneyearperf", 252), ("twoyearperf", 504)]}
    div.append({"symbol": s.symbol, "divyield": float(m.dividend_yield.iloc[0]),
                "report_date": str(m.date.iloc[0])[:10], "pe_ratio": f(m.pe_ratio.iloc[0])} | perf)
out["sp1500-dividend"] = sorted(div, key=lambda x: (-x["divyield"], x["symbol"]))

day = pd.Timestamp(q["date"])
for side in ["long", "short"]:
    ideas = []
    for _, s in members.iterrows():
        o = series(f"{s.symbol}_OPTIX")
        if o is None:
            continue
        o = o[o.index <= day]
        p = prices(s.symbol)
        p = p[p.index <= day]
        if o.empty or len(p) < 200:
            continue
        v, close, ma = float(o.close.iloc[-1]), float(p.close.iloc[-1]), float(p.close.iloc[-200:].mean())
        ok = (close > ma and v <= 40) if side == "long" else (close < ma and v >= 60)
        if ok:
            ideas.append({"symbol": s.symbol, "last_value": v, "five_ma": float(o.close.iloc[-5:].mean()),
                          "equity_close": close, "ma_200": ma, "date": q["date"]})
    ideas.sort(key=lambda x: ((x["last_value"] if side == "long" else -x["last_value"]), x["symbol"]))
    out[f"stocks-{side}-ideas"] = ideas
json.dump(out, sys.stdout)
