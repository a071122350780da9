"""Times backtesting.py's SMA crossover on its bundled GOOG bars (the peer of
the engine benchmark). Prints JSON: the bars and the median seconds per run."""
import json
import statistics
import sys
import time
import warnings

import pandas as pd
from backtesting import Backtest, Strategy
from backtesting.lib import crossover
from backtesting.test import GOOG

warnings.filterwarnings("ignore")


def sma(values, n):
    return pd.Series(values).rolling(n).mean()


class SmaCross(Strategy):
    def init(self):
        self.fast = self.I(sma, self.data.Close, 10)
        self.slow = self.I(sma, self.data.Close, 20)

    def next(self):
        if not self.position and crossover(self.fast, self.slow):
            self.buy()
        elif self.position and crossover(self.slow, self.fast):
            self.position.close()


def main():
    runs = int(json.load(sys.stdin).get("runs", 20))
    times = []
    for _ in range(runs):
        bt = Backtest(GOOG, SmaCross, cash=10_000_000, commission=0.0, trade_on_close=True, finalize_trades=True)
        t0 = time.perf_counter()
        bt.run()
        times.append(time.perf_counter() - t0)
    json.dump({"close": GOOG.Close.tolist(), "open": GOOG.Open.tolist(), "high": GOOG.High.tolist(), "low": GOOG.Low.tolist(),
               "dates": [d.strftime("%Y-%m-%d") for d in GOOG.index], "median_seconds": statistics.median(times)}, sys.stdout)


if __name__ == "__main__":
    main()
