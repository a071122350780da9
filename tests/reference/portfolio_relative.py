"""Benchmark-relative figures of an equity curve as quants compute them:
empyrical-reloaded's alpha_beta, up_capture and down_capture, its
excess_sharpe, the annualised sample deviation of the active returns
(tracking error) and quantstats' information_ratio, each on the curves'
pct_change returns.

Input: {"equity": [...], "benchmark": [...], "annualization": 252} (the
captures take empyrical's daily period, 252 bars a year).
"""
import json
import sys

import empyrical
import numpy as np
import pandas as pd
import quantstats as qs

req = json.load(sys.stdin)
ann = req["annualization"]
index = pd.bdate_range("2001-01-01", periods=len(req["equity"]))
r = pd.Series(req["equity"], index=index).pct_change().dropna()
b = pd.Series(req["benchmark"], index=index).pct_change().dropna()
alpha, beta = empyrical.alpha_beta(r, b, annualization=ann)
active = r - b
json.dump({
    "alpha": float(alpha),
    "beta": float(beta),
    "up_capture": float(empyrical.up_capture(r, b, period="daily")),
    "down_capture": float(empyrical.down_capture(r, b, period="daily")),
    "excess_sharpe": float(empyrical.excess_sharpe(r, b)),
    "tracking_error": float(active.std(ddof=1) * np.sqrt(ann)),
    "information_ratio": float(qs.stats.information_ratio(r, b)),
}, sys.stdout)
