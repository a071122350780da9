"""A grid of SMA crossovers in vectorbt: every fast window against every slow
window, long on the fast average crossing above the slow one, flat on it
crossing below, filled at the signal bar's close with no costs.

Input JSON: {"close": [...] (or "goog": true for backtesting.py's bundled
GOOG bars), "fast": [...], "slow": [...], "start": first tradable bar,
"sample": [[fast, slow], ...], "repeat": timed runs (0: results only)}.
Output: the bars used (GOOG), per sampled pair the trade count and total
return, and the median seconds of the whole job and of `from_signals` alone.

vectorbt's rolling mean subtracts running cumulative sums, so two nearly
equal averages can come out the wrong way round. With "exact": true each
sampled pair also lists the bars (from start - 1 on) where the sign of
fast - slow in vectorbt differs from the sign between the exact means, each
correctly rounded (exact integer arithmetic), with that sign.
"""
import json
import statistics
from fractions import Fraction
import sys
import time
import warnings

import numpy as np
import pandas as pd
import vectorbt as vbt

warnings.filterwarnings("ignore")


def main():
    req = json.load(sys.stdin)
    out = {}
    if req.get("goog"):
        from backtesting.test import GOOG

        close = GOOG.Close.astype(float).reset_index(drop=True)
        out["bars"] = {
            "dates": [d.strftime("%Y-%m-%d") for d in GOOG.index],
            "open": GOOG.Open.tolist(),
            "high": GOOG.High.tolist(),
            "low": GOOG.Low.tolist(),
            "close": GOOG.Close.tolist(),
            "volume": GOOG.Volume.astype(float).tolist(),
        }
    else:
        close = pd.Series(req["close"], dtype=float)
    start = int(req.get("start", 0))

    # Every (fast, slow) pair as one column, as MA.run_combs lays them out.
    fast_w = [f for f in req["fast"] for _ in req["slow"]]
    slow_w = [s for _ in req["fast"] for s in req["slow"]]
    columns = pd.MultiIndex.from_arrays([fast_w, slow_w], names=["fast", "slow"])

    def signals():
        fast = vbt.MA.run(close, window=fast_w, short_name="fast")
        slow = vbt.MA.run(close, window=slow_w, short_name="slow")
        slow_ma = pd.DataFrame(slow.ma.values, index=close.index, columns=fast.ma.columns)
        entries = fast.ma_crossed_above(slow_ma)
        exits = fast.ma_crossed_below(slow_ma)
        entries.columns = columns
        exits.columns = columns
        entries.iloc[:start] = False
        exits.iloc[:start] = False
        return entries, exits

    def portfolio(entries, exits):
        return vbt.Portfolio.from_signals(close, entries, exits, init_cash=100.0, fees=0.0, freq="1D")

    def job():
        entries, exits = signals()
        pf = portfolio(entries, exits)
        return pf, pf.total_return(), pf.trades.count(), entries, exits

    pf, total, count, entries, exits = job()  # also compiles the numba kernels
    out["combos"] = int(entries.shape[1])
    out["results"] = [
        {
            "fast": f,
            "slow": s,
            "trades": int(count[(f, s)]),
            "total_return": float(total[(f, s)]) * 100.0,
        }
        for f, s in req.get("sample", [])
    ]
    if req.get("exact"):
        errors = sign_errors(close.to_numpy(), req.get("sample", []), start)
        for r in out["results"]:
            r["vbt_sign_errors"] = errors[(r["fast"], r["slow"])]
    runs = int(req.get("repeat", 0))
    # The warm-up's results are not held while the timed runs make their own.
    del pf, total, count
    if runs:
        whole, signals_only = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            job()
            whole.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            pf = portfolio(entries, exits)
            pf.total_return()
            pf.trades.count()
            signals_only.append(time.perf_counter() - t0)
        out["whole_seconds"] = statistics.median(whole)
        out["from_signals_seconds"] = statistics.median(signals_only)
    json.dump(out, sys.stdout)


def sign_errors(close, pairs, start):
    """Bars where vectorbt's sign of SMA(fast) - SMA(slow) differs from the
    sign of the difference of the exact means, each correctly rounded."""
    # Every price is an integer over one power of two, so window sums are
    # exact integers, and Python's int / int is correctly rounded.
    scale = 2 ** max(Fraction(float(x)).denominator.bit_length() for x in close)
    scaled = [Fraction(float(x)) * scale for x in close]
    assert all(v.denominator == 1 for v in scaled), "every price scales to an integer"
    prefix = [0]
    for v in scaled:
        prefix.append(prefix[-1] + int(v))
    n = len(close)
    ideal, vbt_ma = {}, {}
    for w in {w for pair in pairs for w in pair}:
        ideal[w] = np.array(
            [np.nan] * (w - 1) + [(prefix[i + 1] - prefix[i + 1 - w]) / (w * scale) for i in range(w - 1, n)]
        )
        vbt_ma[w] = vbt.MA.run(pd.Series(close), window=w).ma.to_numpy()
    out = {}
    first = max(start - 1, 0)
    for f, s in pairs:
        exact = np.sign(ideal[f][first:] - ideal[s][first:])
        theirs = np.sign(vbt_ma[f][first:] - vbt_ma[s][first:])
        known = ~np.isnan(exact)
        bad = np.nonzero(known & (exact != theirs))[0]
        out[(f, s)] = [[int(i) + first, int(exact[i])] for i in bad]
    return out


if __name__ == "__main__":
    main()
