"""Portfolio backtests through the package: the frames hold the server's
numbers in the documented shapes, and a refused request names its field."""

import numpy as np
import pandas as pd
import pytest

import marketlab
from marketlab import sma_cross

UNIVERSE = ["AAPL", "MSFT", "NVDA", "AMZN", "GOOGL", "META"]


def test_a_momentum_rotation_s_frames_agree_with_each_other_and_the_answer(client):
    task = client.portfolio(
        UNIVERSE,
        weights={"schedule": {"every": "month"}, "select": {"method": "top", "k": 2, "by": {"momentum": 63}}},
        start_date="2015-01-02", end_date="2020-12-31", capital=50_000, commission=0.0005,
    ).wait()
    # The wait read the figures alone; the tables come on first use.
    assert "series" not in task.record["result"] and "orders" not in task.record["result"]
    raw = task.raw
    equity = task.equity
    assert isinstance(equity.index, pd.DatetimeIndex) and equity.index.name == "Date"
    assert list(equity.columns) == ["equity", "cash", "drawdown", "daily_return", "benchmark", "exposure", "traded"]
    assert np.allclose(equity["equity"].to_numpy(), raw["series"]["equity"], rtol=0, atol=0)
    assert np.allclose(equity["equity"], equity["cash"] + equity["exposure"], rtol=1e-12)
    # Month-end weights: the held value over the account's, as the equity frame has it.
    weights = task.weights
    assert set(weights.columns) <= set(UNIVERSE) and isinstance(weights.index, pd.DatetimeIndex)
    at = equity.loc[weights.index]
    assert np.allclose(weights.sum(axis=1), at["exposure"] / at["equity"], rtol=1e-9)
    assert (weights.gt(0).sum(axis=1) <= 2).all()
    trades = task.trades
    assert trades.index.name == "entry_time" and set(trades["symbol"]) <= set(UNIVERSE)
    orders = task.orders
    assert orders.index.name == "time" and len(orders) == len(raw["orders"])
    assert orders["size"].tolist() == [o["size"] for o in raw["orders"]]
    assert orders["side"].tolist() == [o["side"] for o in raw["orders"]]
    assert list(orders["symbol"]) == [o["symbol"] for o in raw["orders"]]
    # Cash is what the orders left of the capital.
    signed = orders["size"].where(orders["side"] == "buy", -orders["size"])
    spent = (signed * orders["price"]).sum() + orders["fees"].sum()
    assert abs(50_000 - spent - equity["cash"].iloc[-1]) < 1e-6
    contributions = task.contributions
    assert contributions.index.name == "symbol"
    np.testing.assert_allclose(contributions["contribution"], contributions["profit"] / 50_000, rtol=1e-12)
    assert abs(contributions["profit"].sum() - (equity["equity"].iloc[-1] - 50_000)) < 1e-6
    result = task.result
    assert result.attrs["mode"] == "weights" and np.isfinite(result["beta"]) and result.dtype == "float64"
    assert result["final_capital"] == equity["equity"].iloc[-1]


def test_signal_mode_takes_a_strategy_s_rules(client):
    s = sma_cross("SPX", 10, 40)
    task = client.portfolio(
        UNIVERSE, signals={"entry": s["entry"], "exit": s["exit"], "max_positions": 3,
                           "sizing": {"method": "fixed_fraction", "fraction": 0.3}},
        start_date="2018-01-02", end_date="2022-12-30", trade_price="next_open",
    ).wait()
    trades = task.trades
    assert len(trades) > 10 and trades["exit_reason"].isin(["Signal", "Open"]).all()
    held = task.weights.gt(0).sum(axis=1)
    assert held.max() <= 3
    assert task.result.attrs["mode"] == "signals"


def test_own_bars_by_symbol_run_as_the_stored_ones_do(client):
    """The stored bars sent back as frames under other names: the same
    portfolio, figure for figure and order for order."""
    stored = ["AAPL", "MSFT", "NVDA"]
    rotation = {"schedule": {"every": "month"}, "select": {"method": "top", "k": 1, "by": {"momentum": 21}}}
    window = {"start_date": "2019-01-02", "end_date": "2021-12-31"}
    at_store = client.portfolio(stored, weights=rotation, **window).wait()
    frames = {f"MY_{s}": client.prices(s) for s in stored}
    own = client.portfolio(list(frames), weights=rotation, bars=frames, **window).wait()
    assert sorted(own.record["params"]["own_bars"]) == sorted(frames)
    assert own.result["final_capital"] == at_store.result["final_capital"]
    assert own.result["sharpe"] == at_store.result["sharpe"]
    orders = own.orders
    assert len(orders) > 10
    assert list(orders["symbol"].str.replace("MY_", "")) == list(at_store.orders["symbol"])
    assert orders["size"].tolist() == at_store.orders["size"].tolist()
    with pytest.raises(marketlab.MarketlabError) as e:
        client.portfolio(stored, weights=rotation, bars={"AAPL": frames["MY_AAPL"], "TSLA": frames["MY_MSFT"]})
    assert e.value.status == 400 and "bars.TSLA" in str(e.value)


def test_a_refused_portfolio_names_the_field(client):
    with pytest.raises(marketlab.MarketlabError) as e:
        client.portfolio(["AAPL", "NOPE"], weights={"schedule": {"every": "month"}})
    assert e.value.status == 400 and "universe[1]" in str(e.value)


def test_a_grid_of_portfolios_is_a_batch_whose_best_row_runs_again_alone(client):
    s = sma_cross("SPX", 10, 40)
    portfolio = {
        "universe": UNIVERSE, "start_date": "2016-01-04", "end_date": "2022-12-30", "trade_price": "next_open",
        "signals": {"entry": s["entry"], "exit": s["exit"], "max_positions": 3,
                    "rank_by": {"by": {"momentum": 20}}, "sizing": {"method": "equal"}},
    }
    grid = client.batch(
        portfolio=portfolio, grid={"signals.max_positions": [1, 2, 3], "signals.rank_by.by.momentum": [10, 60]},
        statistics={"blocks": 4},
    ).wait()
    results = grid.results
    assert len(results) == 6 and results["error"].isna().all()
    assert list(results.columns[:2]) == ["max_positions", "momentum"]
    assert results["max_positions"].dtype.kind == "i"
    table = grid.heatmap("max_positions", "momentum", "sharpe")
    assert table.shape == (2, 3)
    stats = grid.statistics
    assert 0 <= stats["pbo"] <= 1 and stats["strategies"] == 6
    best_row = results["sharpe"].idxmax()
    best = grid.strategy(best_row)
    assert best["signals"]["max_positions"] == results.loc[best_row, "max_positions"]
    again = client.portfolio(**best).wait()
    assert again.result["sharpe"] == pytest.approx(results.loc[best_row, "sharpe"], rel=1e-12)
    assert again.result["total_trades"] == results.loc[best_row, "total_trades"]
