"""The scanner's High/Low and candle signals computed independently: pandas
rolling and expanding max/min of closes, and TA-Lib's CDLHAMMER and
CDLSHOOTINGSTAR.

Input (JSON on stdin): {"series": [{"open", "high", "low", "close"}, ...],
"windows": {"4w": 20, ...}, "all_time_min_history": n}. Prints per series the
bar indices where each signal fires, as {"<name>": [i, ...]}."""
import json
import sys

import numpy as np
import pandas as pd
import talib


def fires(flags):
    return [int(i) for i in np.flatnonzero(np.asarray(flags))]


def signals(s, windows, history):
    o, h, l, c = (np.asarray(s[k], dtype="float64") for k in ("open", "high", "low", "close"))
    close = pd.Series(c)
    out = {}
    for name, w in windows.items():
        out[f"high_{name}"] = fires(close == close.rolling(w).max())
        out[f"low_{name}"] = fires(close == close.rolling(w).min())
    enough = np.arange(len(c)) + 1 >= history
    out["high_all"] = fires((close == close.expanding().max()) & enough)
    out["low_all"] = fires((close == close.expanding().min()) & enough)
    out["hammer"] = fires(talib.CDLHAMMER(o, h, l, c) == 100)
    out["shooting_star"] = fires(talib.CDLSHOOTINGSTAR(o, h, l, c) == -100)
    return out


if __name__ == "__main__":
    req = json.load(sys.stdin)
    json.dump(
        [signals(s, req["windows"], req["all_time_min_history"]) for s in req["series"]],
        sys.stdout,
    )
