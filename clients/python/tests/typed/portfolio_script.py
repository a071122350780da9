"""A user's script, typed as users type theirs: every portfolio input
written as the package's TypedDicts (`mypy --strict` passes on it,
tests/test_typed_scripts.py), and run against a server
(`MARKETLAB_URL`, `MARKETLAB_USER`, `MARKETLAB_PASSWORD`) so the server
accepts each of their forms."""

from __future__ import annotations

import math

from marketlab import (
    Client,
    Portfolio,
    RankBy,
    Schedule,
    Select,
    SignalMode,
    Sizing,
    WeightMode,
    Weighting,
    sma_cross,
)

TECH = ["AAPL", "MSFT", "NVDA", "AMZN"]
START, END = "2019-01-02", "2020-12-31"


def weight_modes() -> list[WeightMode]:
    """Each schedule, selection and weighting the server takes."""
    monthly: Schedule = {"every": "month", "on": "first"}
    top: Select = {"method": "top", "k": 2, "by": {"momentum": 63}}
    bottom: Select = {"method": "bottom", "k": 2, "by": {"volatility": 20}}
    fixed: Weighting = {"method": "fixed", "weights": {"AAPL": 0.4, "MSFT": 0.3, "NVDA": 0.2, "AMZN": 0.1}}
    return [
        {"schedule": monthly, "select": top},
        {"schedule": {"every": "quarter", "on": "last"}, "select": bottom,
         "weighting": {"method": "inverse_volatility", "bars": 60}, "drift_tolerance": 0.02},
        {"schedule": {"every": "week"}, "select": {"method": "all"}, "weighting": fixed},
        {"schedule": {"every": "day"}, "weighting": {"method": "equal"}},
    ]


def signal_modes() -> list[SignalMode]:
    """Each sizing rule, and a ranking by a technical signal."""
    rules = sma_cross("SPX", 20, 50)
    by_rsi: RankBy = {"by": {"technical": {"name": "RSI", "period": 14}}, "order": "ascending"}
    sizings: list[Sizing] = [
        {"method": "equal"},
        {"method": "fixed_fraction", "fraction": 0.25},
        {"method": "inverse_volatility", "bars": 60},
        {"method": "volatility_target", "bars": 60, "annual_volatility": 0.15},
        {"method": "kelly", "cap": 0.2, "min_trades": 5},
    ]
    modes: list[SignalMode] = []
    for sizing in sizings:
        mode: SignalMode = {"entry": rules["entry"], "exit": rules["exit"], "max_positions": 2,
                            "rank_by": {"by": {"momentum": 20}}, "sizing": sizing}
        modes.append(mode)
    modes.append({"entry": rules["entry"], "exit": rules["exit"], "max_positions": 3, "rank_by": by_rsi,
                  "risk_control": "5/10/30"})
    return modes


def main(client: Client) -> list[float]:
    """The total return of each portfolio; a grid of one; a list's closes."""
    returns: list[float] = []
    for weights in weight_modes():
        task = client.portfolio(TECH, weights=weights, start_date=START, end_date=END).wait()
        returns.append(float(task.result["total_return"]))
    for signals in signal_modes():
        task = client.portfolio(TECH + ["JPM"], signals=signals, trade_price="next_open", commission=0.001,
                                start_date=START, end_date=END).wait()
        returns.append(float(task.result["total_return"]))
    body: Portfolio = {"universe": TECH, "weights": weight_modes()[0], "commission": 0.0005,
                       "start_date": START, "end_date": END}
    grid = client.batch(portfolio=body, grid={"weights.select.k": [1, 2]}, statistics=False).wait()
    assert len(grid.results) == 2
    prices = client.prices(TECH, start="2020-01-02", end="2020-12-31")
    closes = prices["Close"]  # a column per symbol
    assert closes.shape == (len(prices), len(TECH)) and prices.columns.names == ["field", "symbol"]
    assert all(math.isfinite(r) for r in returns)
    return returns


if __name__ == "__main__":
    print(main(Client.from_env()))
