"""Times the client's own path against backtesting.py in one process:
`Client.backtest(strategy, bars=GOOG).wait()` (the working tree's package,
over HTTP to the server under test, with the long-poll `wait()` uses)
against `Backtest.run` of the same SMA 10/20 crossover on the same bars.
Input: {"url", "user", "password", "src", "runs", "peer_runs"}. Prints
JSON: medians and p90s of both, the client's own CPU time per call (the
process's CPU time across the call: what the package itself spends, the
server being another process) and both runs' trade counts."""
import json
import statistics
import sys
import time
import warnings

warnings.filterwarnings("ignore")


def main():
    given = json.load(sys.stdin)
    sys.path.insert(0, given["src"])
    import pandas as pd
    from backtesting import Backtest, Strategy
    from backtesting.lib import crossover
    from backtesting.test import GOOG

    from marketlab import Client, sma_cross

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

    strategy = sma_cross("GOOG", 10, 20, start_date="2004-01-01")
    with Client(given["url"], given["user"], given["password"]) as client:
        task = client.backtest(strategy, bars=GOOG).wait()  # warm: the connection and the OpenAPI read
        ours, cpu = [], []
        peer = []
        runs, peer_runs = int(given["runs"]), int(given["peer_runs"])
        # Interleaved, so that both see the same machine.
        for i in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            task = client.backtest(strategy, bars=GOOG).wait()
            ours.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            if i % (runs // peer_runs) == 0 and len(peer) < peer_runs:
                bt = Backtest(GOOG, SmaCross, cash=10_000_000, commission=0.0, trade_on_close=True, finalize_trades=True)
                t0 = time.perf_counter()
                stats = bt.run()
                peer.append(time.perf_counter() - t0)
        trades = int(task.result["total_trades"])

    def q(values, p):
        values = sorted(values)
        return values[round((len(values) - 1) * p)]

    json.dump({
        "bars": len(GOOG),
        "client_p50": q(ours, 0.5), "client_p90": q(ours, 0.9),
        "client_cpu_p50": q(cpu, 0.5),
        "peer_p50": q(peer, 0.5), "peer_p90": q(peer, 0.9),
        "runs": len(ours), "peer_runs": len(peer),
        "trades": trades, "peer_trades": int(stats["# Trades"]),
    }, sys.stdout)


if __name__ == "__main__":
    main()
