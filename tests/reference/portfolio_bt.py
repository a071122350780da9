"""A target-weight portfolio in bt: monthly equal weight over the whole
universe, or a monthly rotation into the top k by n-bar momentum
(close / close n bars earlier - 1, given to bt as its `stat`), rebalanced
at the first session of each month's close with fractional units; with
"commission" (a fraction of the traded value, default 0) bt charges each
trade |quantity| x price x commission, its commission function of the
quantity and the price.

Input: {"dates": [...], "close": [[...]] per symbol, "capital",
"select": "all" | "top", "k", "lookback", "from" (optional: the first
traded date's index; earlier dates only feed the momentum), "commission"
(optional)}. Output: {"value": [...] and "cash": [...] per traded date,
"transactions": [[date index, symbol index, units, price, fee], ...]}
(indices into the traded dates; fee: the commission on that trade).
"""
import json
import sys

import bt
import numpy as np
import pandas as pd

req = json.load(sys.stdin)
dates = pd.to_datetime(req["dates"])
names = [f"s{j}" for j in range(len(req["close"]))]
history = pd.DataFrame(np.array(req["close"], dtype=float).T, index=dates, columns=names)
first = req.get("from", 0)
prices = history.iloc[first:]
dates = dates[first:]
algos = [bt.algos.RunMonthly(), bt.algos.SelectAll()]
if req["select"] == "top":
    n = req["lookback"]
    stat = (history / history.shift(n) - 1).iloc[first:]
    algos += [bt.algos.SetStat(stat), bt.algos.SelectN(req["k"])]
algos += [bt.algos.WeighEqually(), bt.algos.Rebalance()]
rate = float(req.get("commission", 0.0))
test = bt.Backtest(
    bt.Strategy("portfolio", algos), prices,
    initial_capital=req["capital"], integer_positions=False,
    commissions=lambda q, p: abs(q) * p * rate,
)
res = bt.run(test)
values = test.strategy.values.loc[dates]
cash = test.strategy.cash.loc[dates]
tx = res.get_transactions()
position = {d: i for i, d in enumerate(dates)}
out = [
    [
        position[d], names.index(sec), float(row["quantity"]), float(row["price"]),
        abs(float(row["quantity"])) * float(row["price"]) * rate,
    ]
    for (d, sec), row in tx.iterrows()
]
json.dump(
    {"value": values.tolist(), "cash": cash.tolist(), "transactions": out},
    sys.stdout,
)
