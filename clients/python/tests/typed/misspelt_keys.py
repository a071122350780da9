"""Mistakes in portfolio inputs that `mypy --strict` reports: each line
marked `# error: <text>` has an error whose message holds <text>, and no
other line has one (tests/test_typed_scripts.py)."""

from __future__ import annotations

from marketlab import Client, RankBy, Schedule, Select, SignalMode, Sizing, WeightMode, sma_cross

rules = sma_cross("KO", 20, 50)


def run(client: Client) -> None:
    client.portfolio(["KO", "PEP"], weights={"schedule": {"every": "month"}, "select": {"metod": "top", "k": 2, "by": {"momentum": 63}}})  # error: Argument "weights"
    client.portfolio(["KO", "PEP"], weights={"schedul": {"every": "month"}})  # error: Argument "weights"
    client.portfolio(["KO", "PEP"], weights={"schedule": {"every": "fortnight"}})  # error: Argument "weights"
    client.portfolio(["KO", "PEP"], signals={"entry": rules["entry"], "exit": rules["exit"], "max_position": 2})  # error: Argument "signals"
    client.portfolio(["KO", "PEP"], signals={"entry": rules["entry"], "exit": rules["exit"], "max_positions": 2, "sizing": {"method": "kelley"}})  # error: Argument "signals"
    client.portfolio(["KO", "PEP"], weights={"schedule": {"every": "month"}}, trade_price="next_opn")  # error: next_opn


select: Select = {"metod": "top", "k": 2, "by": {"momentum": 63}}  # error: Select
in_weights: WeightMode = {"schedule": {"every": "month"}, "select": {"metod": "top", "k": 2, "by": {"momentum": 63}}}  # error: TypedDict item "select"
schedul: WeightMode = {"schedul": {"every": "month"}}  # error: Extra key "schedul"
fortnight: Schedule = {"every": "fortnight"}  # error: 'fortnight'
start: Schedule = {"every": "month", "on": "start"}  # error: 'start'
momentm: Select = {"method": "top", "k": 2, "by": {"momentm": 63}}  # error: Select
technical: Select = {"method": "top", "k": 1, "by": {"technical": {"name": "RSI"}}}  # error: Select
kelley: Sizing = {"method": "kelley"}  # error: Sizing
ordr: RankBy = {"by": {"momentum": 20}, "ordr": "ascending"}  # error: Extra key "ordr"
max_position: SignalMode = {"entry": rules["entry"], "exit": rules["exit"], "max_position": 2}  # error: Extra key "max_position"
fraction: Sizing = {"method": "fixed_fraction"}  # error: Sizing
