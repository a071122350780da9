"""Times a 1,000-point grid of the 500-symbol, 20-year portfolio of
time_portfolio.py (25 slot counts x 40 momentum lookbacks) through the
working tree's package: `Client.batch(portfolio=..., grid=...)`, `wait()`
(the long-poll), then its `results` (Arrow) and `statistics`. Every row
must have run and the statistics must be there.

Input: {"url", "user", "password", "src", "universe", "start", "end"}.
Prints JSON: the seconds taken, the rows, the statistics' DSR and PBO."""
import json
import sys
import time


def main():
    given = json.load(sys.stdin)
    sys.path.insert(0, given["src"])
    from marketlab import Client

    entry = {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": 50}}}
    exit_ = {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": 50}}}
    portfolio = {
        "universe": given["universe"], "start_date": given["start"], "end_date": given["end"],
        "trade_price": "next_open", "commission": 0.001,
        "signals": {"entry": entry, "exit": exit_, "max_positions": 20,
                    "rank_by": {"by": {"momentum": 20}}, "sizing": {"method": "fixed_fraction", "fraction": 0.05}},
    }
    grid = {"signals.max_positions": list(range(5, 30)), "signals.rank_by.by.momentum": list(range(5, 205, 5))}
    client = Client(given["url"], given["user"], given["password"])
    t0 = time.perf_counter()
    batch = client.batch(portfolio=portfolio, grid=grid, statistics=True).wait(timeout=600)
    rows = batch.results
    stats = batch.statistics
    took = time.perf_counter() - t0
    assert len(rows) == 1000, len(rows)
    assert rows["error"].isna().all(), rows["error"].dropna().head()
    print(json.dumps({
        "seconds": took, "rows": len(rows), "points": 1000,
        "dsr": float(stats["deflated_sharpe_ratio"]), "pbo": float(stats["pbo"]),
        "best_sharpe": float(rows["sharpe"].max()),
    }))


main()
