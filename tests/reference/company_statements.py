"""The company statements' derived fields recomputed with pandas from the
tables: ratios and margins of revenue, year-over-year growth, current ratio,
debt to equity, free cash flow and its share of operating cash flow, and the
earnings' surprises, growth, averages and beat/miss counts.

stdin: {"dir": market dir, "symbols": [...]}
stdout: {symbol: {"annual"|"quarter": {"income": [...], "balance": [...],
         "cash": [...]}, "earnings": {...}}}, newest first, 5 years.
"""
import json
import sys

import numpy as np
import pandas as pd

q = json.load(sys.stdin)
base = q["dir"] + "/tables/"
read = lambda name: pd.read_parquet(base + name + ".parquet")
income, balance, cash, earn = (
    read("income_statements"),
    read("balance_sheets"),
    read("cash_flows"),
    read("earnings"),
)


def clean(v):
    if v is None or (isinstance(v, float) and (np.isnan(v) or np.isinf(v))):
        return None
    return float(v)


def five_years(df, sym, period, derive):
    d = df[(df.symbol == sym) & (df.period == period)].sort_values("date").copy()
    back = 1 if period == "annual" else 4
    d = derive(d, back)
    keep = 5 if period == "annual" else 20
    d = d.tail(keep).iloc[::-1]
    return [{k: (clean(v) if not isinstance(v, str) else v) for k, v in r.items() if k not in ("symbol", "period", "date", "filling_date")} | {"date": str(r["date"])[:10]} for r in d.to_dict("records")]


def pct(now, before):
    return (now / before - 1.0) * 100.0


def inc(d, back):
    for c, r in [("gross_profit", "gross_profit_ratio"), ("operating_income", "operating_income_ratio"),
                 ("net_income", "net_income_ratio"), ("ebitda", "ebitdaratio")]:
        d[r] = d[c] / d["revenue"]
    d["gross_margin"], d["operating_margin"] = d["gross_profit_ratio"], d["operating_income_ratio"]
    d["net_margin"], d["ebitda_margin"] = d["net_income_ratio"], d["ebitdaratio"]
    for c in ["revenue", "gross_profit", "operating_income", "net_income", "ebitda"]:
        d[c + "_growth_yoy"] = pct(d[c], d[c].shift(back))
    return d


def bal(d, back):
    d["current_ratio"] = d["total_current_assets"] / d["total_current_liabilities"]
    d["debt_to_equity"] = d["total_liabilities"] / d["total_stockholders_equity"]
    return d


def cf(d, back):
    ocf = d["net_cash_provided_by_operating_activities"]
    d["free_cash_flow"] = ocf - d["capital_expenditure"].abs()
    d["fcf_to_ocf_ratio"] = d["free_cash_flow"] / ocf
    return d.drop(columns=["dividends_paid"])


def earnings(sym):
    e = earn[earn.symbol == sym].sort_values("fiscal_date_ending")
    rep = e[e.eps.notna()].copy()
    rep["eps_surprise"] = pct(rep.eps, rep.eps_estimated)
    rep["revenue_surprise"] = rep.revenue - rep.revenue_estimated
    rep["qoq_growth"] = pct(rep.revenue, rep.revenue.shift(1))
    rep["yoy_growth"] = pct(rep.revenue, rep.revenue.shift(4))
    last = rep.tail(12)
    s = last.eps_surprise.dropna()
    return {
        "newest_date": str(rep.fiscal_date_ending.iloc[-1])[:10],
        "avg_eps": float(last.eps.mean()),
        "avg_eps_surprise": float(s.mean()),
        "beat_count": int((s.abs() < 10).sum()),
        "miss_count": int((s.abs() >= 10).sum()),
        "history": [
            {"fiscal_date_ending": str(r["fiscal_date_ending"])[:10]}
            | {k: clean(r[k]) for k in ["eps", "eps_estimated", "eps_surprise", "revenue", "revenue_estimated",
                                         "revenue_surprise", "qoq_growth", "yoy_growth"]}
            for r in rep.iloc[::-1].to_dict("records")
        ],
    }


out = {}
for sym in q["symbols"]:
    out[sym] = {
        p: {"income": five_years(income, sym, p, inc), "balance": five_years(balance, sym, p, bal),
            "cash": five_years(cash, sym, p, cf)}
        for p in ["annual", "quarter"]
    } | {"earnings": earnings(sym)}
json.dump(out, sys.stdout)
