"""A portfolio in signal mode, executed by vectorbt from one pool of cash.

The slot rule is decided here, independently of the engine: on each fill
bar the exits fill first, then the entries of the signal bar that fired
while flat (not on their own exit's signal bar), best 20-bar momentum first,
take the free slots. vectorbt then executes those orders with
`cash_sharing=True, group_by=True` and an explicit call sequence (sells,
then buys in rank order): a fixed fraction of the cash through
`from_signals` with `size_type="percent"`, equal weight (a slot of the
group's value) through `from_orders` with `size_type="targetpercent"`,
which `from_signals` does not take.

Input: {"open": [[...]], "close": [[...]] per symbol, "entries", "exits"
(booleans per symbol), "start", "lag" (0: fill at the signal's close, 1:
at the next bar's "price"), "price": "open" | "close", "max_positions",
"sizing": {"kind": "equal"} | {"kind": "fraction", "fraction": f},
"rank_bars" (or null: universe order), "capital", "fees", "slippage",
"whole"}. Output: {"value": [...] per bar, "orders": [[bar, symbol, signed
units, price, fees], ...] in execution order, "crowded_out"}.
"""
import json
import sys

import numpy as np
import pandas as pd
import vectorbt as vbt

req = json.load(sys.stdin)
close = np.array(req["close"], dtype=float).T
opens = np.array(req["open"], dtype=float).T
entries = np.array(req["entries"], dtype=bool).T
exits = np.array(req["exits"], dtype=bool).T
n, k = close.shape
start, lag, slots = req["start"], req["lag"], req["max_positions"]
rank_bars = req["rank_bars"]
mom = np.full_like(close, np.nan)
if rank_bars:
    mom[rank_bars:] = close[rank_bars:] / close[:-rank_bars] - 1

held = [False] * k
entered_on = [-1] * k
exited_on = [-1] * k
buy = np.zeros((n, k), dtype=bool)
sell = np.zeros((n, k), dtype=bool)
call_seq = np.tile(np.arange(k), (n, 1))
crowded = 0
for f in range(start + lag, n):
    s = f - lag
    sells = [j for j in range(k) if held[j] and entered_on[j] < s and exits[s, j]]
    for j in sells:
        held[j] = False
        exited_on[j] = s
        sell[f, j] = True
    cands = [
        j for j in range(k)
        if entries[s, j] and not held[j] and exited_on[j] != s
        and (not rank_bars or np.isfinite(mom[s, j]))
    ]
    if rank_bars:
        cands.sort(key=lambda j: -mom[s, j])
    free = slots - sum(held)
    crowded += max(0, len(cands) - free)
    taken = cands[:max(free, 0)]
    for j in taken:
        held[j] = True
        entered_on[j] = s
        buy[f, j] = True
    first = sells + taken
    call_seq[f] = first + [j for j in range(k) if j not in first]

columns = [f"s{j}" for j in range(k)]
frame = lambda a: pd.DataFrame(a, columns=columns)
price = frame(opens if req["price"] == "open" else close)
common = dict(
    close=frame(close), price=price, fees=req["fees"], slippage=req["slippage"],
    init_cash=req["capital"], cash_sharing=True, group_by=True,
    call_seq=call_seq, size_granularity=1.0 if req["whole"] else None,
    freq="1D",
)
sizing = req["sizing"]
if sizing["kind"] == "fraction":
    pf = vbt.Portfolio.from_signals(
        entries=frame(buy), exits=frame(sell), size=sizing["fraction"],
        size_type="percent", direction="longonly", **common,
    )
else:
    size = np.full((n, k), np.nan)
    size[buy] = 1.0 / slots
    size[sell] = 0.0
    pf = vbt.Portfolio.from_orders(size=frame(size), size_type="targetpercent", **common)

rec = pf.orders.values
orders = [
    [int(r["idx"]), int(r["col"]), float(r["size"]) * (1 if r["side"] == 0 else -1),
     float(r["price"]), float(r["fees"])]
    for r in rec
]
# Records come column by column; the engine lists them bar by bar in the
# call sequence.
position = {(int(f), int(c)): i for f in range(n) for i, c in enumerate(call_seq[f])}
orders.sort(key=lambda o: (o[0], position[(o[0], o[1])]))
json.dump({"value": pf.value().tolist(), "orders": orders, "crowded_out": crowded}, sys.stdout)
