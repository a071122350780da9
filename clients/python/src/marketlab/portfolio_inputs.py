"""A portfolio's modes as typed dictionaries: what `portfolio()` takes as
`signals` and `weights`, key for key and value for value as the server
reads `POST /backtest/portfolio` (docs/portfolios.md). A type checker
reports a misspelt key (`{"metod": "top"}`), a missing required one and a
value outside an enumeration as you write them.

    weights: WeightMode = {
        "schedule": {"every": "month", "on": "first"},
        "select": {"method": "top", "k": 2, "by": {"momentum": 63}},
    }

Counts (`k`, `bars`, `max_positions`, lookbacks) are whole numbers; the
ranges the server checks beyond the types (`k` at most the universe's
size, weights summing to 1, ...) answer a 400 naming the field. A key left
out takes the server's default (reported in the result's
`defaults_applied`).

(No `from __future__ import annotations` here: the annotations stay
objects, so `__required_keys__` says at run time what the checker reads.)"""

import sys
from typing import Literal, Mapping, Union

from .inputs import DateLike
from .strategies import EntryBlock, ExitBlock

if sys.version_info >= (3, 11):
    from typing import Required, TypedDict
else:
    from typing_extensions import Required, TypedDict

# -- scores ----------------------------------------------------------------


class MomentumScore(TypedDict):
    """The close over the close `momentum` bars before, less 1 (1-5000 bars)."""

    momentum: int


class VolatilityScore(TypedDict):
    """The sample deviation of the last `volatility` returns (2-5000 bars)."""

    volatility: int


class Technical(TypedDict, total=False):
    """A technical signal of the backtest language by its name or short
    name (`Relative Strength Index`, `RSI`), with its `period` where it
    takes one (default its usual one)."""

    name: Required[str]
    period: int


class TechnicalScore(TypedDict):
    """A technical signal's value on each bar (ranks entries in signal mode
    only)."""

    technical: Technical


#: A figure per symbol and bar that ranks them.
Score = Union[MomentumScore, VolatilityScore, TechnicalScore]
#: What `select` ranks by: momentum or volatility (a technical signal ranks
#: entries in signal mode only).
SelectScore = Union[MomentumScore, VolatilityScore]

# -- signal mode -------------------------------------------------------------


class RankBy(TypedDict, total=False):
    """Which entries of one bar go first when they outnumber the free
    slots: `by` a score, highest first (`descending`, the default) or
    lowest first."""

    by: Required[Score]
    order: Literal["descending", "ascending"]


class EqualSizing(TypedDict):
    """One slot: the account's value over `max_positions` (the default)."""

    method: Literal["equal"]


class FixedFractionSizing(TypedDict):
    """This fraction of the cash free at the entry, (0, 1]."""

    method: Literal["fixed_fraction"]
    fraction: float


class InverseVolatilitySizing(TypedDict):
    """A slot scaled by the universe's median volatility over the symbol's,
    both over `bars` returns (2-5000)."""

    method: Literal["inverse_volatility"]
    bars: int


class VolatilityTargetSizing(TypedDict):
    """A slot's share of an annual volatility target: (`annual_volatility`
    / max_positions) over the symbol's annualised volatility over `bars`
    returns (2-5000); `annual_volatility` a fraction in (0, 5]."""

    method: Literal["volatility_target"]
    bars: int
    annual_volatility: float


class KellySizing(TypedDict, total=False):
    """The Kelly fraction of the symbol's closed trades in this run, at most
    `cap` (default 0.25); a slot until it has `min_trades` (default 10, at
    most 1000)."""

    method: Required[Literal["kelly"]]
    cap: float
    min_trades: int


#: How a new position is sized in signal mode.
Sizing = Union[EqualSizing, FixedFractionSizing, InverseVolatilitySizing, VolatilityTargetSizing, KellySizing]


class SignalMode(TypedDict, total=False):
    """Each symbol's entry and exit rules (a strategy's `entry` and `exit`),
    in at most `max_positions` slots (1-500); `risk_control` as a
    strategy's (stop-loss %/take-profit %/max holding bars, default `//`:
    none), `rank_by` (default the universe's order) and `sizing` (default
    `{"method": "equal"}`)."""

    entry: Required[EntryBlock]
    exit: Required[ExitBlock]
    max_positions: Required[int]
    risk_control: str
    rank_by: RankBy
    sizing: Sizing


# -- weight mode -------------------------------------------------------------


class Schedule(TypedDict, total=False):
    """When the portfolio rebalances: `every` day, week, month or quarter,
    on the period's `first` session (the default) or its `last`."""

    every: Required[Literal["day", "week", "month", "quarter"]]
    on: Literal["first", "last"]


class AllSelect(TypedDict):
    """Every symbol of the universe (the default)."""

    method: Literal["all"]


class TopSelect(TypedDict):
    """The `k` highest scores (k at most the universe's size)."""

    method: Literal["top"]
    k: int
    by: SelectScore


class BottomSelect(TypedDict):
    """The `k` lowest scores."""

    method: Literal["bottom"]
    k: int
    by: SelectScore


#: Which symbols a rebalance holds.
Select = Union[AllSelect, TopSelect, BottomSelect]


class EqualWeighting(TypedDict):
    """The same weight for each selected symbol (the default)."""

    method: Literal["equal"]


class InverseVolatilityWeighting(TypedDict):
    """In proportion to 1 / volatility over `bars` returns (2-5000)."""

    method: Literal["inverse_volatility"]
    bars: int


class FixedWeighting(TypedDict):
    """A weight per universe symbol, each 0-1, summing to 1 (with `select`
    all)."""

    method: Literal["fixed"]
    weights: Mapping[str, float]


#: How the selected symbols' target weights are set.
Weighting = Union[EqualWeighting, InverseVolatilityWeighting, FixedWeighting]


class WeightMode(TypedDict, total=False):
    """Rebalancing to target weights on a `schedule`: a `select`ion of the
    universe (default all), a `weighting` (default equal), and a
    `drift_tolerance` (0-1, default 0): a held symbol trades at a rebalance
    only when its weight is off its target by more than this."""

    schedule: Required[Schedule]
    select: Select
    weighting: Weighting
    drift_tolerance: float


# -- the whole request ----------------------------------------------------


class Portfolio(TypedDict, total=False):
    """`POST /backtest/portfolio`'s body, as `portfolio()` sends it and a
    batch's `portfolio` takes it: a `universe` (1-500 symbols) and exactly
    one of `signals` and `weights`; the rest as `portfolio()`'s keyword
    arguments say (dates as `YYYY-MM-DD`, or a date)."""

    universe: Required[list[str]]
    signals: SignalMode
    weights: WeightMode
    name: str
    benchmark: str
    start_date: DateLike
    end_date: DateLike
    capital: float
    commission: float
    slippage: float
    trade_price: Literal["current_close", "next_open", "next_close"]
    fractional: bool
    max_leverage: float
    adjusted: bool


__all__ = [
    "AllSelect",
    "BottomSelect",
    "EqualSizing",
    "EqualWeighting",
    "FixedFractionSizing",
    "FixedWeighting",
    "InverseVolatilitySizing",
    "InverseVolatilityWeighting",
    "KellySizing",
    "MomentumScore",
    "Portfolio",
    "RankBy",
    "Schedule",
    "Score",
    "Select",
    "SelectScore",
    "SignalMode",
    "Sizing",
    "Technical",
    "TechnicalScore",
    "TopSelect",
    "VolatilityScore",
    "VolatilityTargetSizing",
    "WeightMode",
    "Weighting",
]
