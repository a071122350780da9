"""A batch's frames as a quant reads them: names for the varied keys, a row
back as its strategy, the heat map of a metric, and own bars for every
strategy of a batch."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from marketlab import sma_cross as build

FAST = "entry.condition.signal.params.period,exit.condition.signal.params.period"
SLOW = "entry.condition.rule.period,exit.condition.rule.period"


@pytest.fixture(scope="module")
def grid_batch(client):
    grid = {FAST: [5, 10, 15], SLOW: ["30", "50"]}
    strategy = build("SPX", 10, 20, start_date="2012-01-01")
    return client.batch(strategy, grid=grid, names={FAST: "fast"}, statistics=False).wait(timeout=300)


def test_names_given_and_found_and_numbers_as_numbers(grid_batch):
    results = grid_batch.results
    assert grid_batch.names == {FAST: "fast", SLOW: "period"}
    assert list(results.columns[:2]) == ["fast", "period"]
    assert results["fast"].dtype == "int64" and results["period"].dtype == "int64"
    assert sorted(set(results["period"])) == [30, 50]


def test_a_row_is_its_strategy_and_runs_alike_alone(client, grid_batch):
    results = grid_batch.results
    row = int(results["total_return"].idxmax())
    strategy = grid_batch.strategy(row)
    assert strategy["entry"]["condition"]["signal"]["params"]["period"] == results.loc[row, "fast"]
    # The value as sent in the grid, text stays text.
    assert strategy["exit"]["condition"]["rule"]["period"] == str(results.loc[row, "period"])
    alone = client.backtest(strategy).wait(timeout=120).result
    for metric in ("total_return", "sharpe", "total_trades"):
        assert alone[metric] == results.loc[row, metric], metric


def test_the_heat_map_s_cells_are_the_rows(grid_batch):
    results = grid_batch.results
    heat = grid_batch.heatmap("fast", "period", "sharpe", plot=True)
    assert heat.shape == (2, 3)
    assert list(heat.index) == [30, 50] and list(heat.columns) == [5, 10, 15]
    for _, row in results.iterrows():
        assert heat.loc[row["period"], row["fast"]] == row["sharpe"]
    assert heat.attrs["ax"].get_title() == "sharpe"


def test_own_bars_for_every_strategy_of_a_batch(client):
    bars = client.prices("SPX", start="2005-01-01")
    strategies = [build("SPX", f, 40, start_date="2010-01-01") for f in (5, 10)]
    batch = client.batch(strategies, bars=bars, statistics=False).wait(timeout=300)
    for i, s in enumerate(strategies):
        alone = client.backtest({**s, "csv_mode": True}, bars=bars).wait(timeout=120).result
        assert batch.results.loc[i, "total_return"] == alone["total_return"]
        assert batch.results.loc[i, "total_trades"] == alone["total_trades"]
    assert batch.strategy(1)["csv_mode"] is True
