"""docs/python.md and docs/portfolios.md run: each page's Python blocks,
in order, in one namespace, against the embedded server (MARKETLAB_* set
as the page says)."""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parents[3] / "docs"
PAGE = DOCS / "python.md"


def blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_python_page_runs(env):
    code = blocks(PAGE.read_text())
    assert len(code) >= 8
    namespace: dict = {}
    for i, block in enumerate(code):
        exec(compile(block, f"{PAGE.name} block {i + 1}", "exec"), namespace)
    # What the page shows holds.
    assert namespace["keyed"].rate_limit.policy == "data" and namespace["keyed"].mode == "live"
    assert len(namespace["results"]) == 20
    assert namespace["heat"].shape == (4, 5)
    assert namespace["best_strategy"]["entry"]["condition"]["signal"]["params"]["period"] == namespace["best"]["fast"]
    assert namespace["best"]["sharpe"] == namespace["results"]["sharpe"].max()
    assert namespace["ax"].get_title() == "SMA 10/20 on SPX"
    assert namespace["mc"].bands.shape == (6, 6)
    assert list(namespace["fan_ax"].get_legend_handles_labels()[1]) == ["p5", "p25", "p50", "p75", "p95"]
    assert namespace["event"]["type"] == "task.finished" and namespace["event"]["data"]["status"] == "SUCCESS"
    assert namespace["deliveries"].iloc[0]["id"] == namespace["headers"]["webhook-id"]
    assert len(namespace["returns_by_fast"]) == 3
    assert namespace["best_month"] == namespace["months"]["mean_return"].idxmax()


def test_the_portfolio_page_runs(env):
    page = DOCS / "portfolios.md"
    namespace: dict = {}
    for i, block in enumerate(blocks(page.read_text())):
        exec(compile(block, f"{page.name} block {i + 1}", "exec"), namespace)
    rotation, weights, equity = namespace["rotation"], namespace["weights"], namespace["equity"]
    assert namespace["summary"]["sharpe"] == rotation.raw["sharpe"]
    # At most the two picked are held at a month's end, fully invested.
    assert (weights.gt(0).sum(axis=1) <= 2).all()
    assert abs(weights.sum(axis=1).iloc[-1] - 1) < 0.01
    assert len(namespace["area_ax"].get_legend_handles_labels()[1]) == weights.shape[1]
    assert abs(namespace["contributions"]["profit"].sum() - (equity["equity"].iloc[-1] - 100_000)) < 1e-6
    assert namespace["held_at_once"] <= 4 and namespace["crowded"] > 0
    assert len(namespace["trades"]) > 20
