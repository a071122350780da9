"""Reads OHLCV columns as JSON on stdin and prints TA-Lib's outputs as JSON.

Each indicator is computed with the parameters given in the request, so the
Rust side decides what is compared. NaN (warm-up) becomes null.
"""
import json
import sys

import numpy as np
import talib


def clean(values):
    return [None if np.isnan(v) else float(v) for v in values]


def main():
    req = json.load(sys.stdin)
    o, h, l, c, v = (np.asarray(req[k], dtype=float) for k in ("open", "high", "low", "close", "volume"))
    p = req["params"]
    out = {
        "sma": talib.SMA(c, timeperiod=p["sma"]),
        "ema": talib.EMA(c, timeperiod=p["ema"]),
        "rsi": talib.RSI(c, timeperiod=p["rsi"]),
        "atr": talib.ATR(h, l, c, timeperiod=p["atr"]),
        "adx": talib.ADX(h, l, c, timeperiod=p["adx"]),
        "cci": talib.CCI(h, l, c, timeperiod=p["cci"]),
        "willr": talib.WILLR(h, l, c, timeperiod=p["willr"]),
        "roc": talib.ROC(c, timeperiod=p["roc"]),
        "mfi": talib.MFI(h, l, c, v, timeperiod=p["mfi"]),
        "obv": talib.OBV(c, v),
    }
    m = p["macd"]
    out["macd"], out["macd_signal"], out["macd_hist"] = talib.MACD(c, fastperiod=m[0], slowperiod=m[1], signalperiod=m[2])
    b = p["bbands"]
    out["bb_upper"], out["bb_middle"], out["bb_lower"] = talib.BBANDS(c, timeperiod=b[0], nbdevup=b[1], nbdevdn=b[2], matype=0)
    s = p["stoch"]
    out["stoch_k"], out["stoch_d"] = talib.STOCH(h, l, c, fastk_period=s[0], slowk_period=s[1], slowk_matype=0, slowd_period=s[2], slowd_matype=0)
    json.dump({k: clean(vals) for k, vals in out.items()}, sys.stdout)


if __name__ == "__main__":
    main()
