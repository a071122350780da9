"""Times a 500-symbol, 20-year portfolio in signal mode both ways in one
process: `Client.portfolio(...).wait()` (the working tree's package, over
HTTP to the server under test, with the long-poll `wait()` uses: submit,
the server's reads, signals, simulation and the whole answer parsed)
against vectorbt computing the same signals (`MA.run`, `crossed_above`,
`crossed_below`) and simulating the same orders with
`Portfolio.from_signals(cash_sharing=True, group_by=True)`, numba warmed.
vectorbt has no slots: the orders the 20 slots leave are chosen here, in
Python, outside its timing (in its favour).

`wait()` reads the result's figures (the package asks for the summary);
the equity, orders and trades tables are then timed apart, as Arrow.

Input: {"url", "user", "password", "src", "data", "universe", "start",
"end", "runs", "peer_runs"}. Prints JSON: medians of both, the answer's
size, both final values, the tables' time."""
import json
import statistics
import sys
import time
import warnings

warnings.filterwarnings("ignore")


def main():
    given = json.load(sys.stdin)
    sys.path.insert(0, given["src"])
    import numpy as np
    import pandas as pd
    import pyarrow.parquet as pq
    import vectorbt as vbt

    from marketlab import Client

    universe, start, end = given["universe"], pd.Timestamp(given["start"]), pd.Timestamp(given["end"])
    slots, n_mom, n_ma, fraction, fees = 20, 20, 50, 0.05, 0.001
    entry = {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": n_ma}}}
    exit_ = {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": n_ma}}}
    signals = {"entry": entry, "exit": exit_, "max_positions": slots,
               "rank_by": {"by": {"momentum": n_mom}}, "sizing": {"method": "fixed_fraction", "fraction": fraction}}

    # The same bars for vectorbt: every symbol's whole history, on one calendar.
    frames = {}
    for s in universe:
        t = pq.read_table(f"{given['data']}/prices/daily/{s}.parquet").to_pandas()
        frames[s] = t.set_index(pd.to_datetime(t["date"]))
    close_all = pd.DataFrame({s: f["close"] for s, f in frames.items()}).loc[:end]
    open_all = pd.DataFrame({s: f["open"] for s, f in frames.items()}).loc[:end]

    def vbt_signals(close):
        ma = vbt.MA.run(close, n_ma, short_name="ma").ma
        ma.columns = close.columns
        return close.vbt.crossed_above(ma), close.vbt.crossed_below(ma)

    # The slots, decided once (outside the timing), as the server decides them.
    raw_entries, raw_exits = vbt_signals(close_all)
    first = close_all.index.searchsorted(start)
    cut = first - (n_mom + 1)
    close, opens = close_all.iloc[cut:], open_all.iloc[cut:]
    ent, ext = raw_entries.iloc[cut:].to_numpy(), raw_exits.iloc[cut:].to_numpy()
    c = close.to_numpy()
    mom = np.full_like(c, np.nan)
    mom[n_mom:] = c[n_mom:] / c[:-n_mom] - 1
    n, k = c.shape
    start_i = n_mom + 1
    held, entered, exited = np.zeros(k, bool), np.full(k, -1), np.full(k, -1)
    buy, sell = np.zeros((n, k), bool), np.zeros((n, k), bool)
    call_seq = np.tile(np.arange(k), (n, 1))
    for f in range(start_i + 1, n):
        s = f - 1
        sells = [j for j in np.flatnonzero(held) if entered[j] < s and ext[s, j]]
        for j in sells:
            held[j] = False
            exited[j] = s
            sell[f, j] = True
        cands = [j for j in np.flatnonzero(ent[s]) if not held[j] and exited[j] != s and np.isfinite(mom[s, j])]
        cands.sort(key=lambda j: -mom[s, j])
        taken = cands[:max(slots - int(held.sum()), 0)]
        for j in taken:
            held[j] = True
            entered[j] = s
            buy[f, j] = True
        order = sells + taken
        if order:
            rest = np.setdiff1d(np.arange(k), order, assume_unique=False)
            call_seq[f] = np.concatenate([np.array(order, dtype=int), rest])

    def peer():
        e, x = vbt_signals(close_all)  # vectorbt's share of the signals' work
        pf = vbt.Portfolio.from_signals(
            close=close, entries=pd.DataFrame(buy, index=close.index, columns=close.columns),
            exits=pd.DataFrame(sell, index=close.index, columns=close.columns),
            price=opens, size=fraction, size_type="percent", fees=fees, init_cash=100_000.0,
            cash_sharing=True, group_by=True, call_seq=call_seq, direction="longonly", freq="1D",
        )
        return float(pf.value().iloc[-1]), int(len(pf.orders.values)), e, x

    peer()  # numba compiled and warm
    with Client(given["url"], given["user"], given["password"], timeout=600) as client:
        def ours():
            task = client.portfolio(universe, signals=signals, start_date=given["start"], end_date=given["end"],
                                    trade_price="next_open", commission=fees).wait()
            return task
        task = ours()  # warm: the server's reads, the connection, the OpenAPI read
        times, peer_times = [], []
        runs, peer_runs = int(given["runs"]), int(given["peer_runs"])
        for i in range(runs):
            t0 = time.perf_counter()
            task = ours()
            times.append(time.perf_counter() - t0)
            if len(peer_times) < peer_runs:
                t0 = time.perf_counter()
                value, orders, _, _ = peer()
                peer_times.append(time.perf_counter() - t0)
        # The tables `wait()` leaves unread, each as Arrow on first use.
        t0 = time.perf_counter()
        frames = (task.equity, task.orders, task.trades)
        tables = time.perf_counter() - t0
        raw = task.raw
        assert len(frames[1]) == len(raw["orders"])
        # Where the client's time goes: the submit, the long-polled read
        # (the run, the stored answer read back), the answer's bytes and
        # their parsing, with and without compression, whole or summary.
        phases = []
        for encoding, view in (("gzip", "full"), ("identity", "full"), ("identity", "summary")):
            body = {"universe": universe, "signals": signals, "start_date": given["start"], "end_date": given["end"],
                    "trade_price": "next_open", "commission": fees}
            t0 = time.perf_counter()
            sent = client.http.post("/backtest/portfolio", json=body)
            t1 = time.perf_counter()
            task_id = sent.json()["task_id"]
            while True:
                got = client.http.get(f"/backtest/portfolio/{task_id}", params={"wait": "20", "view": view},
                                      headers={"Accept-Encoding": encoding})
                if got.json()["status"] in ("SUCCESS", "FAILED"):
                    break
            t2 = time.perf_counter()
            content = got.content
            t3 = time.perf_counter()
            json.loads(content)
            t4 = time.perf_counter()
            phases.append({"encoding": encoding, "view": view, "submit": t1 - t0, "read": t2 - t1, "bytes": len(content),
                           "wire_bytes": int(got.headers.get("content-length", 0) or 0), "parse": t4 - t3})
    json.dump({
        "p50": statistics.median(times), "p90": sorted(times)[int(0.9 * (len(times) - 1))],
        "peer_p50": statistics.median(peer_times), "runs": runs, "peer_runs": len(peer_times),
        "final": raw["final_capital"], "peer_final": value, "orders": len(raw["orders"]), "peer_orders": orders,
        "sessions": len(raw["series"]["date"]), "symbols": k, "phases": phases, "tables": tables,
    }, sys.stdout)


main()
