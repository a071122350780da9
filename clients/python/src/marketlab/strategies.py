"""A strategy's parts as typed dictionaries (what `backtest`, `validate`
and `batch` take, checked by a type checker as you write them), and
builders for the common shapes. The server's OpenAPI document is the
reference; these follow it (docs/backtest.md)."""

from __future__ import annotations

import sys
from typing import Literal, Union

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict
else:
    from typing_extensions import NotRequired, Required, TypedDict

Number = Union[int, float]
#: How a value is compared (2.6): against a value (`SV`), the signal's own
#: simple or exponential average (`SVMA`, `SVEMA`), or the close against a
#: moving average (`MA`).
ComparisonType = Literal["SV", "SVMA", "SVEMA", "MA"]


class SignalParams(TypedDict, total=False):
    period: Number | str
    extreme_optimism: Number | str
    extreme_pessimism: Number | str


class Signal(TypedDict, total=False):
    """A signal by its `name` (`Simple Moving Average`, `RSI`, an indicator
    such as `S&P 500 Index Optix`, `Symbol Close`) and category `type`
    (`Technical`, `Sentiment`, `Symbol`; inferred when left out)."""

    name: Required[str]
    type: str
    params: SignalParams


class Qualifier(TypedDict, total=False):
    """Transforms the signal before the rule compares it (2.7)."""

    comparison_operator: Required[str]
    calculation_period: Required[Number | str]
    ma_type: str


class Rule(TypedDict, total=False):
    """`type_name` is the operator (`>`, `<`, `CrossAbove`, `CrossBelow`,
    `Consecutive Days Above`, `All-time High`, ...)."""

    type_name: Required[str]
    comparison_type: ComparisonType
    comparison_value: Number | str
    period: int


class Condition(TypedDict):
    signal: Signal
    rule: Rule
    qualifier: NotRequired[Qualifier]


class SingleCondition(TypedDict):
    """Fires when its one condition holds."""

    rule_type: Literal["SingleCondition"]
    condition: Condition
    delay_bars: NotRequired[int]


class Scoring(TypedDict):
    """Fires when at least `score_threshold` of the conditions hold."""

    rule_type: Literal["Scoring"]
    condition: list[Condition]
    score_threshold: NotRequired[int]
    delay_bars: NotRequired[int]


class TimeOrder(TypedDict):
    """Fires when the steps hold in order within `signals_in_market` bars."""

    rule_type: Literal["TimeOrder"]
    steps: list[Condition]
    signals_in_market: NotRequired[int]
    delay_bars: NotRequired[int]


class RiskControlOnly(TypedDict):
    """An exit left to `risk_control` alone."""

    rule_type: Literal["RiskControlOnly"]


EntryBlock = Union[SingleCondition, Scoring, TimeOrder]
ExitBlock = Union[SingleCondition, Scoring, TimeOrder, RiskControlOnly]


class Strategy(TypedDict, total=False):
    """A strategy: only `symbol`, `entry` and `exit` are required; the rest
    have the defaults docs/backtest.md gives (capital 100000, the whole
    history, fills at the current close, `risk_control` `//21`, bars
    split-adjusted: `adjusted` False trades them as traded)."""

    symbol: Required[str]
    entry: Required[EntryBlock]
    exit: Required[ExitBlock]
    name: str
    description: dict[str, str]
    benchmark: str
    direction: Literal["Long", "Short"]
    frequency: Literal["Daily", "Weekly", "Monthly", "Hourly", "30min"]
    capital: Number
    capital_alloc: Number | str
    commission: Number | str
    slippage: Number | str
    start_date: str
    end_date: str
    trade_price: Literal[0, 1, 2] | str
    risk_control: str
    adjusted: bool
    csv_mode: bool


def signal(name: str, kind: str | None = None, **params: Number) -> Signal:
    """A signal; `kind` is its `type` (`Technical`, `Sentiment`, `Symbol`)."""
    s: Signal = {"name": name}
    if kind is not None:
        s["type"] = kind
    if params:
        s["params"] = SignalParams(**params)  # type: ignore[typeddict-item]
    return s


def sma(period: int) -> Signal:
    """The simple moving average of the close over `period` bars."""
    return signal("Simple Moving Average", "Technical", period=period)


def when(sig: Signal, operator: str, value: Number | None = None, *, period: int | None = None,
         comparison_type: ComparisonType | None = None) -> SingleCondition:
    """A block firing when `sig` meets `operator` against `value` (or, with
    `comparison_type="MA"`, the close against its average; `period` the
    rule's own)."""
    rule: Rule = {"type_name": operator}
    if value is not None:
        rule["comparison_value"] = value
    if period is not None:
        rule["period"] = period
    if comparison_type is not None:
        rule["comparison_type"] = comparison_type
    return {"rule_type": "SingleCondition", "condition": {"signal": sig, "rule": rule}}


def sma_cross(symbol: str, fast: int, slow: int, *, start_date: str | None = None,
              risk_control: str = "//") -> Strategy:
    """Long while the `fast`-bar average is above the `slow`-bar one: in on
    the cross above, out on the cross below (no stop, take-profit or time
    limit unless `risk_control` sets them)."""
    entry = when(sma(fast), "CrossAbove", period=slow, comparison_type="MA")
    exit_ = when(sma(fast), "CrossBelow", period=slow, comparison_type="MA")
    s: Strategy = {"symbol": symbol, "entry": entry, "exit": exit_, "risk_control": risk_control}
    if start_date is not None:
        s["start_date"] = start_date
    return s
