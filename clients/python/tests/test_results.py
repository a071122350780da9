"""Full trades and equity, checked against the bars they came from and
against quantstats on `task.returns` taken as it is."""

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import quantstats as qs

from marketlab import sma_cross

COMMISSION, SLIPPAGE, ALLOC = 0.001, 0.0005, 0.6


def costly(trade_price: int) -> dict:
    s = dict(sma_cross("AAPL", 10, 30, start_date="2012-01-01", risk_control="-6/12/40"))
    s.update(commission=COMMISSION, slippage=SLIPPAGE, capital_alloc=ALLOC, trade_price=trade_price, capital=250000)
    return s


@pytest.fixture(scope="module", params=[2, 0], ids=["current-close", "next-open"])
def run(request, client):
    task = client.backtest(costly(request.param)).wait(timeout=120)
    return request.param, task, client.prices("AAPL")


def test_each_trade_s_size_profit_and_hold_from_the_fills_and_costs(run):
    _, task, _ = run
    trades, equity = task.trades, task.equity
    assert len(trades) > 20 and set(trades["exit_reason"]) >= {"Signal", "Stop Loss", "Take Profit"}
    # Fills after slippage; fees the commission on both sides' values.
    paid, got = trades["entry_price"], trades["exit_price"]
    np.testing.assert_allclose(trades["fees"], COMMISSION * trades["size"] * (paid + got), rtol=1e-9)
    np.testing.assert_allclose(trades["profit"], trades["size"] * (got - paid) - trades["fees"], rtol=1e-9)
    assert (trades["side"] == "long").all() and (trades["symbol"] == "AAPL").all()
    np.testing.assert_allclose(trades["profit"] / (trades["size"] * trades["entry_price"]), trades["return"], rtol=1e-9)
    # Each trade commits the allocation of the equity before it.
    before = 250000 + trades["profit"].cumsum().shift(fill_value=0.0)
    np.testing.assert_allclose(trades["size"] * paid, ALLOC * before, rtol=1e-9)
    assert equity["equity"].iloc[-1] == pytest.approx(250000 + trades["profit"].sum(), rel=1e-12)
    at = {d: i for i, d in enumerate(equity.index)}
    # An open trade (exit time NaT) is held to the last bar.
    exits = trades["exit_time"].fillna(equity.index[-1])
    assert trades["exit_time"].isna().sum() == (trades["exit_reason"] == "Open").sum()
    assert list(trades["bars_held"]) == [at[x] - at[e] for e, x in zip(trades.index, exits)]


def test_mae_and_mfe_from_the_bars_held(run):
    trade_price, task, bars = run
    at_close = trade_price != 0
    for entry, t in task.trades.iterrows():
        held = bars.loc[entry:t["exit_time"] if pd.notna(t["exit_time"]) else None]
        lows, highs = list(held["Low"]), list(held["High"])
        if at_close:  # filled at the entry bar's close: its range came before
            lows, highs = lows[1:], highs[1:]
        if not at_close and t["exit_reason"] != "Open":  # out at the exit bar's open
            lows, highs = lows[:-1], highs[:-1]
        low = min(lows + [t["entry_price"], t["exit_price"]])
        high = max(highs + [t["entry_price"], t["exit_price"]])
        assert t["mae"] == pytest.approx(min(low / t["entry_price"] - 1, 0), rel=1e-12, abs=1e-12)
        assert t["mfe"] == pytest.approx(max(high / t["entry_price"] - 1, 0), rel=1e-12, abs=1e-12)


def test_position_cash_and_benchmark_add_up(run, client):
    _, task, bars = run
    e = task.equity
    np.testing.assert_allclose(e["cash"] + e["position"] * e["close"], e["equity"], rtol=1e-12)
    held = e["position"] > 0
    assert held.mean() == pytest.approx(task.result["time_in_market"], abs=1e-9)
    np.testing.assert_allclose(e["daily_return"].iloc[1:], e["equity"].pct_change().iloc[1:], rtol=1e-12, atol=1e-15)
    spx = client.prices("SPX")["Close"].reindex(e.index, method="ffill")
    np.testing.assert_allclose(e["benchmark"], 250000 * spx / spx.iloc[0], rtol=1e-12)
    assert e["benchmark"].iloc[-1] / 250000 - 1 == pytest.approx(task.result["benchmark_return"], rel=1e-9)


def test_quantstats_on_task_returns_gives_our_metrics(run):
    _, task, _ = run
    r, result = task.returns, task.result
    assert isinstance(r.index, pd.DatetimeIndex) and r.dtype == "float64" and not r.isna().any()
    assert qs.stats.sharpe(r) == pytest.approx(result["sharpe"], rel=1e-9)
    assert qs.stats.max_drawdown(r) == pytest.approx(result["max_drawdown"], rel=1e-9)
    # Our CAGR counts calendar years (days / 365.25); quantstats counts
    # returns / periods: given the same years, the two agree.
    years = (r.index[-1] - task.equity.index[0]).days / 365.25
    assert qs.stats.cagr(r, periods=len(r) / years) == pytest.approx(result["cagr"], rel=1e-9)


def test_the_exports_hold_the_frames_values(run, client):
    _, task, _ = run
    trades = client.request("GET", f"/backtest/trades/{task.id}").json()
    parquet = pq.read_table(io.BytesIO(client.request("GET", f"/backtest/trades/{task.id}", params={"format": "parquet"}).content)).to_pandas()
    assert list(parquet.columns) == list(trades[0].keys())
    np.testing.assert_array_equal(parquet["profit"], [t["profit"] for t in trades])
    assert list(parquet["exit_reason"]) == [t["exit_reason"] for t in trades]
    arrow = pa.ipc.open_stream(client.request("GET", f"/backtest/equity/{task.id}", headers={"Accept": "application/vnd.apache.arrow.stream"}).content).read_all().to_pandas()
    e = task.equity
    np.testing.assert_array_equal(arrow["equity"], e["equity"])
    np.testing.assert_array_equal(arrow["cash"], e["cash"])
    csv = pd.read_csv(io.StringIO(client.request("GET", f"/backtest/equity/{task.id}", params={"format": "csv"}).text))
    np.testing.assert_array_equal(csv["position"], e["position"])
    assert csv["time"].iloc[0] == e.index[0].strftime("%Y-%m-%d")
