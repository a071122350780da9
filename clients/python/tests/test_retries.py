"""Which calls the client sends again, through a proxy that drops
connections and answers as a failing gateway would: a call that cannot
do anything twice (a read, a submission under its key) is repeated; a
call that could (registering a webhook) is not; nothing invents a status."""

import socket

import pytest

from conftest import DEMO
from faults import FaultProxy
from marketlab import ConnectionFailed, MarketlabError, TaskTimeout
from test_client import sma_cross


@pytest.fixture()
def proxy(server):
    p = FaultProxy(server)
    yield p
    p.close()


@pytest.fixture()
def via(proxy, connect):
    with connect(proxy.url, *DEMO, retry_base=0.01) as c:
        yield c


# Loopback is allowed for the suite's server; nothing is delivered to it
# (no scan completes during the test) and it is deleted after.
HOOK = "http://127.0.0.1:9/retry-test"


def is_(method, prefix):
    return lambda m, p: m == method and p.startswith(prefix)


def test_a_read_is_sent_again_after_a_dropped_connection_and_gateway_errors(proxy, via):
    plan = proxy.plan(is_("GET", "/backtest/tasks"), "drop-before", "status:502", "drop-after")
    via.tasks(limit=5)
    assert len(plan.seen) == 4 and plan.faults == []
    plan = proxy.plan(is_("GET", "/usage"), "status:504", "status:503")
    assert "requests" in str(via.usage())
    assert len(plan.seen) == 3


def test_a_submission_is_sent_again_under_its_key_and_runs_once(proxy, via, client):
    plan = proxy.plan(is_("POST", "/backtest/start_backtest"), "drop-after", "status:503")
    task = via.backtest(sma_cross(7, 21))
    # Three sends, one key: the server ran the first and answered the
    # others with the same task.
    keys = {s.idempotency_key for s in plan.seen}
    assert len(plan.seen) == 3 and len(keys) == 1 and None not in keys
    mine = client.tasks(limit=100)
    assert (mine["task_id"] == task.id).sum() == 1
    assert task.wait(timeout=120).status == "SUCCESS"


def test_a_call_that_could_run_twice_is_not_sent_again(proxy, via, client):
    before = len(client.webhooks())
    plan = proxy.plan(is_("POST", "/webhooks"), "drop-after")
    with pytest.raises(ConnectionFailed) as e:
        via.add_webhook(HOOK, events=["scan.completed"])
    assert e.value.status is None
    # The server registered it once; the client did not send it twice.
    assert len(plan.seen) == 1
    hooks = client.webhooks()
    assert len(hooks) == before + 1
    made = hooks[hooks["url"] == HOOK]
    assert len(made) == 1
    # A gateway's 503 on it is raised as it is, not retried.
    plan = proxy.plan(is_("DELETE", "/webhooks/"), "status:503")
    with pytest.raises(MarketlabError) as e:
        via.delete_webhook(made["id"].iloc[0])
    assert e.value.status == 503 and len(plan.seen) == 1
    client.delete_webhook(made["id"].iloc[0])


def test_a_read_that_times_out_is_sent_again(proxy, connect):
    plan = proxy.plan(is_("GET", "/backtest/tasks"), "late:1.5")
    with connect(proxy.url, *DEMO, timeout=0.5, retry_base=0.01) as c:
        c.tasks(limit=1)
    assert len(plan.seen) == 2


def test_no_server_is_a_connection_failure_without_a_status(connect):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Nothing listens there now: every send fails to connect, and each is
    # retried (nothing reached a server) before the client gives up.
    with connect(f"http://127.0.0.1:{port}", *DEMO, max_retries=2, retry_base=0.01) as c:
        with pytest.raises(ConnectionFailed) as e:
            c.add_webhook("https://hooks.example/never")
    assert e.value.status is None and "POST /webhooks" in str(e.value)


def test_a_wait_that_runs_out_has_no_status(client):
    # 2,000 backtests cannot end within the millisecond the wait allows.
    grid = {"entry.condition.signal.params.period": list(range(2, 42)), "entry.condition.rule.period": list(range(50, 100))}
    batch = client.batch(sma_cross(start_date="1800-10-01"), grid=grid, statistics=False)
    with pytest.raises(TaskTimeout) as e:
        batch.wait(timeout=0.001)
    assert e.value.status is None and "still" in e.value.message
    batch.wait(timeout=300)
