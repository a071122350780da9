"""API keys through the package: a key signs in (given, or from
MARKETLAB_API_KEY), manages keys, reads the rate-limit state of each
answer, is refused once revoked; a read key cannot submit; a test key
works in its own books."""

import time

import pytest

from conftest import DEMO
from marketlab import Client, MarketlabError, RateLimit

STRATEGY = {
    "symbol": "SPX", "start_date": "2015-01-01", "risk_control": "-8//63",
    "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
    "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossAbove", "comparison_value": "70"}}},
}


def test_a_key_signs_in_manages_keys_and_is_refused_once_revoked(server, connect):
    with connect(server, *DEMO) as c:
        made = c.create_key("notebook", ["read", "submit", "manage"])
    key = made["key"]
    assert key.startswith(made["prefix"] + "_") and made["mode"] == "live"
    with connect(server, api_key=key) as k:
        first = k.prices("SPX", start="2024-01-02", end="2024-03-28")
        assert len(first) > 50
        assert k.mode == "live"
        limit = k.rate_limit
        assert isinstance(limit, RateLimit) and limit.policy == "data" and limit.window == 60
        assert 0 <= limit.remaining < limit.limit and 0 < limit.reset <= 60
        k.prices("SPX", start="2024-01-02", end="2024-03-28")
        assert k.rate_limit.remaining == limit.remaining - 1, "one less per request"
        listed = k.keys()
        row = listed[listed["id"] == made["id"]].iloc[0]
        assert row["prefix"] == made["prefix"] and row["status"] == "active"
        assert list(row["scopes"]) == ["read", "submit", "manage"]
        assert not listed.astype(str).apply(lambda col: col.str.contains(key[-20:])).any().any()
        assert k.revoke_key(made["id"])["status"] == "revoked"
        with pytest.raises(MarketlabError) as refused:
            k.prices("SPX")
        assert refused.value.status == 401 and "revoked" in refused.value.message


def test_marketlab_api_key_is_used_when_no_credentials_are_given(server, connect, monkeypatch):
    with connect(server, *DEMO) as c:
        made = c.create_key("from the environment", ["read"])
    monkeypatch.setenv("MARKETLAB_API_KEY", made["key"])
    monkeypatch.setenv("MARKETLAB_URL", server)
    with connect(server) as k:
        assert k.usage()["account"] == DEMO[0]
    with Client.from_env() as k:
        assert k.usage()["mode"] == "live"
    with pytest.raises(ValueError):
        Client(server, *DEMO, api_key=made["key"])
    monkeypatch.delenv("MARKETLAB_API_KEY")
    with pytest.raises(ValueError):
        Client(server)


def test_a_read_key_cannot_submit_and_the_error_names_the_scope(server, connect):
    with connect(server, *DEMO) as c:
        made = c.create_key("reader", ["read"])
    with connect(server, api_key=made["key"]) as k:
        with pytest.raises(MarketlabError) as refused:
            k.backtest(STRATEGY)
        assert refused.value.status == 403 and "'submit'" in refused.value.message


def test_a_test_key_runs_in_its_own_books(server, connect):
    with connect(server, *DEMO) as c:
        made = c.create_key("sandbox", ["read", "submit"], mode="test")
    with connect(server, api_key=made["key"]) as k:
        before = set(k.tasks().get("task_id", []))
        task = k.backtest(STRATEGY).wait(timeout=120)
        assert k.mode == "test"
        assert len(task.trades) > 0
        assert set(k.tasks()["task_id"]) == before | {task.id}, "test tasks only"
        # Counts reach the usage store within `delay_seconds`: wait for the
        # flush that carries this key's task (live counts flush with it).
        deadline = time.monotonic() + 15
        mine: list = []
        while not mine:
            usage = k.usage(by_key=True)
            mine = [u for u in usage["keys"] if u["id"] == made["id"]]
            assert time.monotonic() < deadline, usage
            time.sleep(0 if mine else 0.25)
        assert usage["mode"] == "test" and mine[0]["name"] == "sandbox"
        assert mine[0]["tasks"] == {"strategy_backtest": 1}
    with connect(server, *DEMO) as c:
        assert task.id not in list(c.tasks().get("task_id", []))
        live = c.usage(by_key=True)
        assert live["mode"] == "live" and made["id"] not in [u["id"] for u in live["keys"]]
