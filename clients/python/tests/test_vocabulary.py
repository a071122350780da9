"""One vocabulary: every result kind answers the glossary's names, units
and dtypes (docs/results.md) in the package's frames, and the JSON it
read them from holds the same figures (under the spec's legacy names and
percentages where the spec defines them, under the glossary's otherwise).
The units are checked by what they mean: a total return is the equity's
change as a fraction, a win rate the share of winning trades."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from marketlab import glossary, sma_cross

UNIVERSE = ["AAPL", "MSFT", "NVDA", "AMZN", "GOOGL", "META"]
DOCS = Path(__file__).resolve().parents[3] / "docs" / "results.md"


def _strategy() -> dict[str, Any]:
    s = dict(sma_cross("AAPL", 10, 30, start_date="2015-01-02"))
    s.update(end_date="2020-12-31", commission=0.001, slippage=0.0005)
    return s


def _portfolio() -> dict[str, Any]:
    s = sma_cross("SPX", 10, 40)
    return {"universe": UNIVERSE, "start_date": "2016-01-04", "end_date": "2020-12-31", "commission": 0.001,
            "signals": {"entry": s["entry"], "exit": s["exit"], "max_positions": 3,
                        "sizing": {"method": "equal"}}}


class Kind:
    """One result kind: its figures, frames and the JSON they came from."""

    def __init__(self, result: pd.Series, json: dict[str, Any], legacy: dict[str, tuple[str, float]] | None,
                 equity: pd.DataFrame | None = None, returns: pd.Series | None = None,
                 trades: pd.DataFrame | None = None, orders: pd.DataFrame | None = None):
        self.result, self.json, self.legacy = result, json, legacy
        self.equity, self.returns, self.trades, self.orders = equity, returns, trades, orders


def _backtest(client: Any) -> Kind:
    task = client.backtest(_strategy()).wait()
    return Kind(task.result, task.raw, dict(glossary.BACKTEST), task.equity, task.returns, task.trades)


def _batch_row(client: Any) -> Kind:
    grid = client.batch(strategies=[_strategy()]).wait()
    row = grid.results.iloc[0]
    raw = client.request("GET", f"/backtest/batch/{grid.id}/rows").json()["rows"][0]
    metrics = row[[c for c in row.index if c in glossary.METRICS]].astype("float64")
    return Kind(metrics, raw, dict(glossary.BACKTEST))


def _portfolio_kind(client: Any) -> Kind:
    task = client.portfolio(**_portfolio()).wait()
    raw = dict(task.raw)
    flat = {**{k: v for k, v in raw.items() if not isinstance(v, (list, dict))}, **raw["relative"]}
    return Kind(task.result, flat, None, task.equity, task.returns, task.trades, task.orders)


def _portfolio_grid_row(client: Any) -> Kind:
    grid = client.batch(portfolio=_portfolio(), grid={"signals.max_positions": [2, 3]}).wait()
    row = grid.results.iloc[1]
    raw = client.request("GET", f"/backtest/batch/{grid.id}/rows").json()["rows"][1]
    metrics = row[[c for c in row.index if c in glossary.METRICS]].astype("float64")
    alone = client.portfolio(**_portfolio()).wait().result
    # The row is the same portfolio run alone, in the same units and names.
    for name in ("total_return", "cagr", "sharpe", "max_drawdown", "time_in_market", "win_rate", "benchmark_return"):
        assert metrics[name] == pytest.approx(alone[name], rel=1e-9, abs=1e-12), name
    assert "buy_hold_return" not in metrics
    legacy = {k: v for k, v in glossary.BACKTEST.items() if v[0] != "benchmark_return"}
    legacy["BuyHoldGain"] = ("benchmark_return", 0.01)
    return Kind(metrics, raw, legacy)


def _scanner_backtest(client: Any) -> Kind:
    task = client.scanner_backtest(start_date="2026-08-03", end_date="2026-11-20", find_type="stock/etf",
                                   signals=["All"], total_capital=100000, long_short_ratio="0.7/0.3",
                                   daily_limit=3, commission=0.1).wait(timeout=300)
    return Kind(task.result, task.raw, dict(glossary.SCANNER_BACKTEST), task.equity, task.returns, task.trades)


KINDS = {"backtest": _backtest, "batch_row": _batch_row, "portfolio": _portfolio_kind,
         "portfolio_grid_row": _portfolio_grid_row, "scanner_backtest": _scanner_backtest}


@pytest.fixture(scope="module", params=list(KINDS))
def kind_of(request, env) -> Kind:
    import marketlab

    return KINDS[request.param](marketlab.Client.from_env())


def test_figures_have_the_glossary_s_names_dtypes_and_the_json_s_values(kind_of: Kind) -> None:
    result, raw = kind_of.result, kind_of.json
    assert result.dtype == np.float64
    assert set(result.index) <= set(glossary.METRICS), set(result.index) - set(glossary.METRICS)
    assert {"total_return", "max_drawdown", "total_trades"} <= set(result.index)
    if kind_of.legacy is None:  # own JSON: the glossary's names and units as they are
        for name, value in result.items():
            assert raw[name] == pytest.approx(value, rel=1e-15, abs=1e-15), name
    else:  # the spec's names and units, each read into the glossary's
        read = {g: (k, scale) for k, (g, scale) in kind_of.legacy.items()}
        for name, value in result.items():
            legacy, scale = read[name]
            assert raw[legacy] * scale == pytest.approx(value, rel=1e-15, abs=1e-15), name
    # Units by meaning.
    assert -1.0 <= result["max_drawdown"] <= 0.0
    if "time_in_market" in result:
        assert 0.0 <= result["time_in_market"] <= 1.0
    if "final_capital" in result and "initial_capital" in result:
        assert result["total_return"] == pytest.approx(result["final_capital"] / result["initial_capital"] - 1, rel=1e-9)


def test_frames_have_the_glossary_s_columns_index_and_units(kind_of: Kind) -> None:
    if kind_of.equity is None:
        pytest.skip("a row has figures, not frames")
    equity, returns, trades, result = kind_of.equity, kind_of.returns, kind_of.trades, kind_of.result
    assert equity.index.name == "Date" and str(equity.index.dtype) == glossary.DATETIME
    assert list(equity.columns[: len(glossary.EQUITY)]) == list(glossary.EQUITY)
    assert (equity.dtypes == np.float64).all()
    assert equity["drawdown"].min() == pytest.approx(result["max_drawdown"], abs=1e-9)
    assert equity["equity"].iloc[-1] / equity["equity"].iloc[0] - 1 == pytest.approx(result["total_return"], rel=1e-6, abs=1e-9) \
        or "initial_capital" in result
    assert returns is not None and returns.name == "returns" and str(returns.index.dtype) == glossary.DATETIME
    assert (returns.index == equity.index[1:]).all() and returns.dtype == np.float64
    assert trades is not None and trades.index.name == "entry_time" and str(trades.index.dtype) == glossary.DATETIME
    assert dict(trades.dtypes.astype(str)) == dict(glossary.TRADES)
    assert len(trades) == result["total_trades"]
    if len(trades):
        assert set(trades["side"]) <= {"long", "short"}
        assert set(trades["exit_reason"]) <= {"Signal", "Stop Loss", "Take Profit", "Max Holding", "Rebalance", "Open"}
        assert result["win_rate"] == pytest.approx((trades["return"] > 0).mean(), abs=1e-12)
        # `return` is the profit over the entry's value, net of fees.
        sign = np.where(trades["side"] == "long", 1.0, -1.0)
        gross = sign * trades["size"] * (trades["exit_price"] - trades["entry_price"])
        np.testing.assert_allclose(trades["profit"], gross - trades["fees"], rtol=1e-9, atol=1e-6)
        np.testing.assert_allclose(trades["return"], trades["profit"] / (trades["size"] * trades["entry_price"]),
                                   rtol=1e-9, atol=1e-12)
        assert (trades["fees"] > 0).all()
    if kind_of.orders is not None:
        orders = kind_of.orders
        assert orders.index.name == "time" and str(orders.index.dtype) == glossary.DATETIME
        assert dict(orders.dtypes.astype(str)) == dict(glossary.ORDERS)
        assert set(orders["side"]) <= {"buy", "sell"} and (orders["size"] > 0).all()


def _docs_names(heading: str) -> list[str]:
    """The first column of the table under `heading` in docs/results.md."""
    text = DOCS.read_text()
    section = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for m in re.finditer(r"^\| `([a-z_]+)` \|", section, re.M)]


def test_the_package_s_glossary_is_the_page_s() -> None:
    assert set(_docs_names("Metrics")) == set(glossary.METRICS)
    assert set(_docs_names("Trades")) == {"entry_time", *glossary.TRADES}
    assert set(_docs_names("Orders")) == {"time", *glossary.ORDERS}
    assert set(glossary.EQUITY) <= set(_docs_names("Equity"))


def _docs_fields(kind: str) -> dict[str, tuple[str, float]]:
    """Per metric, the JSON field `kind` answers it in and the factor that
    reads it into the glossary's unit, from the page's table."""
    section = DOCS.read_text().split("## Metrics", 1)[1].split("\n## ", 1)[0]
    tables = [t for t in section.split("\n\n") if t.startswith("| name |")]
    header, _, *rows = tables[-1].splitlines()
    at = [c.strip() for c in header.strip("|").split("|")].index(kind)
    found = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        m = re.match(r"`([^`]+)`(?: ×(-?\d+))?", cells[at])
        if m:
            found[m.group(1)] = (cells[0].strip("`"), 1.0 / float(m.group(2) or 1))
    return found


@pytest.mark.parametrize("kind, names", [("backtest", glossary.BACKTEST), ("scanner backtest", glossary.SCANNER_BACKTEST)])
def test_the_package_reads_each_legacy_field_as_the_page_says(kind: str, names: Any) -> None:
    assert _docs_fields(kind) == dict(names)
