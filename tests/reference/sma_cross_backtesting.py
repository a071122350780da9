"""An SMA crossover on backtesting.py's bundled GOOG daily bars (real prices).

Input JSON: {"fast": n, "slow": m}. Output: the bars used and every trade
(entry/exit dates and return) as backtesting.py computes them, trading on the
close with no commission, the last open trade closed at the final bar.
"""
import json
import sys
import warnings

import pandas as pd
from backtesting import Backtest, Strategy
from backtesting.lib import crossover
from backtesting.test import GOOG

warnings.filterwarnings("ignore")


def sma(values, n):
    return pd.Series(values).rolling(n).mean()


def main():
    req = json.load(sys.stdin)
    fast_n, slow_n = req["fast"], req["slow"]

    class SmaCross(Strategy):
        def init(self):
            self.fast = self.I(sma, self.data.Close, fast_n)
            self.slow = self.I(sma, self.data.Close, slow_n)

        def next(self):
            if not self.position and crossover(self.fast, self.slow):
                self.buy()
            elif self.position and crossover(self.slow, self.fast):
                self.position.close()

    bt = Backtest(GOOG, SmaCross, cash=10_000_000, commission=0.0, trade_on_close=True, finalize_trades=True)
    stats = bt.run()
    trades = stats["_trades"].sort_values("EntryTime")
    out = {
        "dates": [d.strftime("%Y-%m-%d") for d in GOOG.index],
        "open": GOOG.Open.tolist(),
        "high": GOOG.High.tolist(),
        "low": GOOG.Low.tolist(),
        "close": GOOG.Close.tolist(),
        "volume": GOOG.Volume.astype(float).tolist(),
        "trades": [
            {
                "entry": t.EntryTime.strftime("%Y-%m-%d"),
                "exit": t.ExitTime.strftime("%Y-%m-%d"),
                "entry_price": float(t.EntryPrice),
                "exit_price": float(t.ExitPrice),
                "return_pct": float(t.ReturnPct) * 100.0,
            }
            for t in trades.itertuples()
        ],
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
