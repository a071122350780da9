"""The one vocabulary of results (docs/results.md): every result kind's
figures under the same names, in the same units, with the same dtypes.

Fractions throughout (0.05 is 5 %); the spec's legacy JSON answers some
figures in percent under its own names, and the maps below read them into
the glossary's."""

from __future__ import annotations

from typing import Any, Final, Mapping

import numpy as np
import pandas as pd

#: Every datetime the package answers, index or column.
DATETIME: Final = "datetime64[ns]"

#: The metrics a `.result` Series may hold, in the order it holds them.
METRICS: Final = (
    "total_return", "cagr", "annual_volatility", "sharpe", "sortino", "calmar",
    "max_drawdown", "drawdown_period", "time_in_market",
    "total_trades", "winning_trades", "losing_trades", "win_rate", "average_win", "average_loss",
    "average_trade_return", "median_trade_return", "trade_return_std", "z_score",
    "initial_capital", "final_capital", "buy_hold_return", "benchmark_return",
    "average_exposure", "average_position", "annual_turnover",
    "alpha", "beta", "tracking_error", "information_ratio", "up_capture", "down_capture",
    "crowded_out", "skipped_trades",
)

#: A trades frame's columns (its index is `entry_time`) and their dtypes.
TRADES: Final[Mapping[str, str]] = {
    "exit_time": DATETIME, "symbol": "object", "side": "object", "size": "float64",
    "entry_price": "float64", "exit_price": "float64", "fees": "float64", "profit": "float64",
    "return": "float64", "bars_held": "int64", "exit_reason": "object", "mae": "float64", "mfe": "float64",
}

#: An orders frame's columns (its index is `time`).
ORDERS: Final[Mapping[str, str]] = {
    "symbol": "object", "side": "object", "size": "float64", "price": "float64", "fees": "float64",
}

#: The columns every equity frame has (its index is `Date`); a kind adds its own.
EQUITY: Final = ("equity", "cash", "drawdown", "daily_return")

#: The spec's result object (2.11) and a batch's rows: name -> (glossary name, scale).
BACKTEST: Final[Mapping[str, tuple[str, float]]] = {
    "Total Return (%)": ("total_return", 0.01),
    "CAGR": ("cagr", 0.01),
    "Annual Volatility": ("annual_volatility", 0.01),
    "Sharpe Ratio": ("sharpe", 1.0),
    "Sortino Ratio": ("sortino", 1.0),
    "Calmar Ratio": ("calmar", 1.0),
    "Max Drawdown": ("max_drawdown", 0.01),
    "DrawDown Period": ("drawdown_period", 1.0),
    "Time in Market": ("time_in_market", 0.01),
    "Total Trades": ("total_trades", 1.0),
    "Total Positive": ("winning_trades", 1.0),
    "Total Negative": ("losing_trades", 1.0),
    "Win Rate": ("win_rate", 0.01),
    "Average Win %": ("average_win", 0.01),
    "Average Loss %": ("average_loss", 0.01),
    "Initial Capital": ("initial_capital", 1.0),
    "Final Capital": ("final_capital", 1.0),
    "BuyHoldGain": ("buy_hold_return", 0.01),
    "Benchmark Return (%)": ("benchmark_return", 0.01),
}

#: The scanner backtest's `data` (analytics 2.6).
SCANNER_BACKTEST: Final[Mapping[str, tuple[str, float]]] = {
    "TOTAL RETURN": ("total_return", 0.01),
    "MAX RISK": ("max_drawdown", -0.01),
    "TIME IN MARKET": ("time_in_market", 0.01),
    "TOTAL TRADES": ("total_trades", 1.0),
    "TOTAL POSITIVE": ("winning_trades", 1.0),
    "TOTAL NEGATIVE": ("losing_trades", 1.0),
    "WIN RATE": ("win_rate", 0.01),
    "AVERAGE WIN": ("average_win", 0.01),
    "AVERAGE LOSS": ("average_loss", 0.01),
    "AVERAGE RETURN": ("average_trade_return", 0.01),
    "MEDIAN RETURN": ("median_trade_return", 0.01),
    "STD.DEV": ("trade_return_std", 0.01),
    "Z-SCORE": ("z_score", 1.0),
    "BUY and HOLD": ("benchmark_return", 0.01),
    "AVERAGE POSITION": ("average_position", 1.0),
    "skipped_trades": ("skipped_trades", 1.0),
}

#: The scanner backtest's `OrderStatus` as the glossary's `exit_reason`.
SCANNER_EXIT_REASONS: Final[Mapping[str, str]] = {
    "Profit Target": "Take Profit", "Stop Loss": "Stop Loss", "Time Is Up": "Max Holding", "Open": "Open",
}


def metrics(values: Mapping[str, Any], names: Mapping[str, tuple[str, float]], name: str | None) -> pd.Series:
    """The figures of `values` that `names` maps, as a float64 Series under
    the glossary's names in its units (in `METRICS` order)."""
    found = {names[k][0]: float(v) * names[k][1] for k, v in values.items() if k in names and v is not None}
    return ordered(found, name)


def ordered(found: Mapping[str, float], name: str | None) -> pd.Series:
    """Glossary figures as a float64 Series in `METRICS` order; a name the
    glossary lacks is a bug here, not something to pass on."""
    unknown = set(found) - set(METRICS)
    if unknown:
        raise KeyError(f"not in the glossary: {sorted(unknown)}")
    return pd.Series({k: float(found[k]) for k in METRICS if k in found}, name=name, dtype="float64")


def as_index(values: Any, name: str) -> pd.DatetimeIndex:
    """Dates or times (text or timestamps) as the package's one index type."""
    return pd.DatetimeIndex(pd.to_datetime(pd.Series(values, dtype=object)), name=name).as_unit("ns")


def as_times(values: Any) -> pd.Series:
    """A datetime column (NaT where missing) in the package's unit."""
    return pd.Series(pd.to_datetime(pd.Series(values, dtype=object)), dtype=DATETIME)


def trades_frame(columns: Mapping[str, Any], entry_time: Any) -> pd.DataFrame:
    """A trades frame in the glossary's columns and dtypes from `columns`
    (each a sequence; a missing one is NaN: MAE and MFE where a kind has
    no bars to read them from)."""
    n = len(entry_time)
    data: dict[str, Any] = {}
    for column, dtype in TRADES.items():
        value = columns.get(column)
        if dtype == DATETIME:
            data[column] = as_times(value if value is not None else [None] * n).to_numpy()
        elif value is None:
            data[column] = np.full(n, np.nan)
        else:
            data[column] = pd.Series(list(value), dtype=dtype).to_numpy() if n else np.array([], dtype=dtype)
    frame = pd.DataFrame(data, index=as_index(list(entry_time), "entry_time"))
    return frame.astype(dict(TRADES))


def orders_frame(columns: Mapping[str, Any], time: Any) -> pd.DataFrame:
    """An orders frame in the glossary's columns and dtypes."""
    data = {c: pd.Series(list(columns[c]), dtype=t).to_numpy() for c, t in ORDERS.items()}
    return pd.DataFrame(data, index=as_index(list(time), "time")).astype(dict(ORDERS))


def with_drawdown_and_returns(frame: pd.DataFrame, capital: float) -> pd.DataFrame:
    """`drawdown` (from the running peak, the initial capital counting, a
    fraction <= 0) and `daily_return` (NaN on the first session) from
    `equity`, where the answer does not carry them."""
    equity = frame["equity"]
    if "drawdown" not in frame:
        frame["drawdown"] = equity / equity.cummax().clip(lower=capital) - 1.0
    if "daily_return" not in frame:
        frame["daily_return"] = equity.pct_change()
    return frame


def returns_of(equity: pd.DataFrame) -> pd.Series:
    """The daily returns from the second session on, as quantstats takes them."""
    r = equity["daily_return"].iloc[1:].astype("float64")
    r.name = "returns"
    return r
