"""A signal's trade history and statistics recomputed independently with
pandas and numpy: the MA crossing (close against its 20-day mean) and the
52-week high (close equal to the 252-close rolling max), each firing traded
to a volatility-scaled target, stop or time limit, as docs/scanner.md says.

Input (JSON on stdin): {"cases": [{"signal": "MA" | "Symbol 52-Week High",
"close": [...], "hold": n, "asof": bar}]}. Prints per case {"trades":
[[entry, exit, direction, return, reason], ...], "figures": {...}}."""
import json
import math
import sys

import numpy as np
import pandas as pd

TARGET, STOP, VOL = 2.0, 1.5, 252


def firings(signal, close):
    c = pd.Series(close)
    if signal == "MA":
        ma = c.rolling(20).mean()
        prev_c, prev_ma = c.shift(1), ma.shift(1)
        up = (prev_c <= prev_ma) & (c > ma)
        down = (prev_c >= prev_ma) & (c < ma)
        return {int(i): ("Long" if up[i] else "Short") for i in np.flatnonzero(up | down)}
    if signal == "Symbol 52-Week High":
        hit = c == c.rolling(252).max()
        return {int(i): "Long" for i in np.flatnonzero(hit)}
    raise ValueError(signal)


def trades(close, fired, hold, asof):
    out = []
    for i in sorted(fired):
        if i >= asof or i < VOL:
            continue
        r = [close[k] / close[k - 1] - 1.0 for k in range(i + 1 - VOL, i + 1)]
        sd = float(np.std(r, ddof=1))
        if sd <= 0:
            continue
        v = sd * math.sqrt(hold) * 100.0
        target, stop = TARGET * v, STOP * v
        sign = 1.0 if fired[i] == "Long" else -1.0
        for k in range(i + 1, min(i + hold, asof) + 1):
            ret = sign * (close[k] / close[i] - 1.0) * 100.0
            reason = "Profit Target" if ret >= target else "Stop Loss" if ret <= -stop else "Time Is Up" if k == i + hold else None
            if reason:
                out.append([i, k, fired[i], ret, reason])
                break
    return out


def figures(tr):
    r = np.array([t[3] for t in tr])
    n = len(r)
    wins, losses = r[r > 0], r[r <= 0]
    wr = len(wins) / n
    mean = lambda x: float(x.mean()) if len(x) else 0.0
    sd = float(r.std(ddof=1)) if n > 1 else 0.0
    hold = float(np.mean([t[1] - t[0] for t in tr]))
    per_year = 252.0 / max(hold, 1.0)
    equity = np.cumprod(1 + np.array([t[3] for t in sorted(tr, key=lambda t: (t[1], t[0]))]) / 100.0)
    peak = np.maximum.accumulate(np.concatenate(([1.0], equity)))[1:]
    return {
        "trade_number": n,
        "win_rate": wr * 100.0,
        "avg_win": mean(wins),
        "avg_loss": mean(losses),
        "avg_return": float(r.mean()),
        "median_return": float(np.median(r)),
        "std_dev": sd,
        "annual_return": ((1 + r.mean() / 100.0) ** per_year - 1) * 100.0,
        "max_risk": float(max(0.0, (1 - equity / peak).max())) * 100.0,
        "sharpe_ratio": r.mean() / sd * math.sqrt(per_year) if sd > 0 else 0.0,
        "z_score": r.mean() / (sd / math.sqrt(n)) if sd > 0 else 0.0,
        "expected_return": wr * mean(wins) + (1 - wr) * mean(losses),
        "avg_hold": hold,
    }


if __name__ == "__main__":
    req = json.load(sys.stdin)
    out = []
    for case in req["cases"]:
        close = case["close"]
        tr = trades(close, firings(case["signal"], close), case["hold"], case["asof"])
        out.append({"trades": tr, "figures": {k: float(v) for k, v in figures(tr).items()}})
    json.dump(out, sys.stdout)
