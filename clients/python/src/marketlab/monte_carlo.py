"""A Monte Carlo answer (`BacktestTask.monte_carlo`, `BatchTask.monte_carlo`)
as DataFrames: the percentile bands of both methods, the share of losing
paths and each method's fan of equity paths."""

from __future__ import annotations

from typing import Any

import pandas as pd

METHODS = ("trades", "returns")
FIGURES = ("cagr", "max_drawdown", "final_equity")


class MonteCarlo:
    """`trades`: the run's trades drawn again with replacement; `returns`:
    its bar returns drawn in circular blocks of `block` bars. Percentile
    columns are named `p5`, `p25`, ... (CAGR and drawdown as fractions,
    0.05 = 5 %, as the glossary's `cagr` and `max_drawdown`; equity in
    capital)."""

    def __init__(self, raw: dict[str, Any]):
        #: The answer as the server gave it.
        self.raw = raw
        self.draws: int = raw["draws"]
        self.seed: int = raw["seed"]
        self.block: int = raw["block"]
        self.notes: list[str] = raw.get("notes", [])

    def __repr__(self) -> str:
        return f"<MonteCarlo {self.draws} draws, seed {self.seed}, block {self.block}>"

    @property
    def _columns(self) -> list[str]:
        return [f"p{p:g}" for p in self.raw["percentiles"]]

    @property
    def bands(self) -> pd.DataFrame:
        """One row per (method, figure): the percentiles, then `actual` (the
        run's own figure). A method the run could not support is absent
        (see `notes`)."""
        rows, index = [], []
        for method in METHODS:
            resampled = self.raw.get(method)
            if not resampled:
                continue
            for figure in FIGURES:
                rows.append([*resampled[figure], self.raw["actual"][figure]])
                index.append((method, figure))
        columns = [*self._columns, "actual"]
        return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["method", "figure"]), columns=columns)

    @property
    def probability_of_loss(self) -> pd.Series:
        """Per method, the share of paths ending below the initial capital."""
        return pd.Series({m: self.raw[m]["probability_of_loss"] for m in METHODS if self.raw.get(m)}, name="probability_of_loss", dtype=float)

    def fan(self, method: str = "returns") -> pd.DataFrame:
        """The equity paths' percentiles (columns `p5`, ...) along the run:
        indexed by bar time for `returns`, by trades taken for `trades`."""
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        resampled = self.raw.get(method)
        if not resampled:
            return pd.DataFrame(columns=self._columns)
        fan = resampled["fan"]
        frame = pd.DataFrame(dict(zip(self._columns, fan["equity"])))
        if fan["time"]:
            frame.index = pd.DatetimeIndex(pd.to_datetime(fan["time"]), name="Date").as_unit("ns")
        else:
            frame.index = pd.Index(fan["step"], name="trades")
        return frame
