"""Every call of the client against the embedded server, with the numbers
checked against each other and against the server's own answers."""

import time
import uuid

import numpy as np
import pandas as pd
import pytest

from conftest import DEMO, LIMITED
from marketlab import MarketlabError, RateLimited, UnknownSymbol

SMA = {"name": "Simple Moving Average", "type": "Technical", "params": {"period": 10}}


def sma_cross(fast=10, slow=20, **extra):
    signal = {**SMA, "params": {"period": fast}}
    return {
        "symbol": "SPX", "start_date": "2010-01-01", "risk_control": "//",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": signal, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": slow}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": signal, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": slow}}},
        **extra,
    }


@pytest.fixture(scope="module")
def done(client):
    return client.backtest(sma_cross()).wait(timeout=120)


def test_a_backtest_gives_its_metrics_trades_and_equity_as_frames(client, done):
    assert done.status == "SUCCESS"
    result, trades, equity = done.result, done.trades, done.equity
    assert isinstance(trades.index, pd.DatetimeIndex) and isinstance(equity.index, pd.DatetimeIndex)
    assert result["total_trades"] == len(trades) > 10
    # The trades are the result's own: returns, dates and exit reasons.
    np.testing.assert_allclose(trades["return"] * 100, done.raw["Each Return"], rtol=1e-12)
    assert [d.strftime("%Y-%m-%d") for d in trades.index] == done.raw["EntryDate"]
    assert list(trades["exit_reason"]) == done.raw["Exit Reason"]
    # The equity curve ends at the final capital and compounds the trades.
    assert equity["equity"].iloc[-1] == pytest.approx(result["final_capital"], rel=1e-9)
    assert equity["equity"].iloc[-1] / result["initial_capital"] - 1 == pytest.approx(result["total_return"], rel=1e-9)
    assert np.prod(1 + trades["return"]) - 1 == pytest.approx(result["total_return"], rel=1e-9)
    assert equity["drawdown"].min() == pytest.approx(result["max_drawdown"], rel=1e-9)
    assert done.report_url.startswith(client.url + "/backtest/report/")
    assert client.tasks()["task_id"].str.contains(done.id).any()


def test_a_backtest_that_ends_within_the_submit_s_wait_comes_back_ended_in_one_round_trip(env, connect, kind, done):
    def hooked(**options):
        c = connect(env, *DEMO, **options)
        seen = []

        def record(r):
            seen.append((r.request.method, r.request.url.path, r.status_code))

        async def record_async(r):
            record(r)

        c.http.event_hooks["response"].append(record if kind == "sync" else record_async)
        return c, seen

    # Held for the task's end (up to 20 s): the submit's answer is the
    # ended task, and waiting on it sends nothing more.
    c, seen = hooked(submit_wait=20)
    with c:
        task = c.backtest(sma_cross()).wait(timeout=120)
        assert seen == [("POST", "/backtest/start_backtest", 200)]
        assert task.record["status"] == "SUCCESS" and task.result["total_trades"] == done.result["total_trades"]
    # Without the hold: queued (202), then read until it ends.
    c, seen = hooked(submit_wait=0)
    with c:
        task = c.backtest(sma_cross()).wait(timeout=120)
        assert seen[0] == ("POST", "/backtest/start_backtest", 202)
        assert ("GET", f"/backtest/status/{task.id}", 200) in seen[1:]
        assert task.result["total_return"] == done.result["total_return"]


def test_own_bars_sent_as_arrow_run_like_the_stored_symbol(client, done):
    # The stored closes as bars (the strategy reads closes only), from the
    # first bar so that the averages are warm at the window's start.
    close = client.backtest(sma_cross(start_date="1800-10-01")).wait(timeout=120).equity["close"]
    bars = pd.DataFrame({"Open": close, "High": close, "Low": close, "Close": close, "Volume": 0}, index=close.index)
    own = client.backtest(sma_cross(csv_mode=True), bars=bars).wait(timeout=120)
    for metric in ("total_trades", "total_return", "max_drawdown", "sharpe"):
        assert own.result[metric] == pytest.approx(done.result[metric], rel=1e-12), metric
    # Its series come from the stored upload: the same curve, bar for bar.
    pd.testing.assert_series_equal(own.equity["equity"], done.equity["equity"], rtol=1e-12)


def test_an_invalid_strategy_raises_with_its_field(client):
    bad = sma_cross()
    bad["entry"]["condition"]["rule"]["type_name"] = ">>"
    with pytest.raises(MarketlabError) as e:
        client.backtest(bad)
    assert e.value.status == 400
    assert e.value.field == "entry.condition.rule.type_name"
    with pytest.raises(MarketlabError) as e:
        client.validate({**sma_cross(), "capital_alloc": "2"})
    assert e.value.field == "capital_alloc"


def test_a_misspelt_field_or_parameter_raises_naming_it_and_the_one_meant(client):
    with pytest.raises(MarketlabError) as e:
        client.validate({**sma_cross(), "comission": 0.001})
    assert e.value.status == 400 and e.value.field == "comission"
    assert "did you mean 'commission'" in e.value.message
    # A misspelt keyword is refused by Python before anything is sent
    # (and by a type checker as it is written) ...
    with pytest.raises(TypeError, match="start_yr"):
        client.seasonality("SPX", "month", start_yr=2010)
    # ... and by the server when it reaches it all the same.
    with pytest.raises(MarketlabError) as e:
        client.request("GET", "/seasonality/performance-by-month", params={"ticker": "SPX", "start_yr": 2010})
    assert e.value.status == 400 and e.value.field == "start_yr"
    assert "did you mean 'start_year'" in e.value.message


def test_an_error_is_read_from_each_service_s_envelope(client):
    """The spec gives each service its error body (`detail`; `code`, `msg`;
    `error`, `status`) and the deployment's own routes answer `detail`
    (docs/deploy.md, "Errors a client sees"): the exception carries the
    status, the server's message and the field from each."""
    for path, shape in [
        ("/backtest/tasks", {"detail"}),
        ("/cpm/tasks", {"code", "msg", "data"}),
        ("/ws/getAllSymbols", {"error", "status"}),
        ("/usage", {"detail"}),
        ("/health", {"detail"}),
    ]:
        with pytest.raises(MarketlabError) as e:
            client.request("GET", path, params={"zz_unknown": 1})
        assert e.value.status == 400, path
        assert set(e.value.body) - {"field"} == shape, (path, e.value.body)
        assert e.value.message == "parameter 'zz_unknown': unknown query parameter", path
        assert e.value.field == "zz_unknown", path


def test_an_unknown_symbol_is_one_exception_on_every_service(client):
    calls = {
        "symbol": lambda: client.validate({**sma_cross(), "symbol": "NOSUCH"}),
        "ticker": lambda: client.seasonality("NOSUCH", "month"),
        "stock_comparison": lambda: client.correlation("SPX", ["NOSUCH"], "2020-01-02", "2024-12-31"),
        "benchmark": lambda: client.correlation("NOSUCH", ["AAPL"], "2020-01-02", "2024-12-31"),
        "symbol ": lambda: client.history("NOSUCH_OPTIX"),
    }
    for field, call in calls.items():
        with pytest.raises(UnknownSymbol) as e:
            call()
        assert e.value.status == 404 and e.value.field == field.strip(), (field, e.value.message)
        assert isinstance(e.value, LookupError) and "NOSUCH" in e.value.message


def test_a_2000_strategy_grid_becomes_one_row_per_strategy(client):
    fast = [str(p) for p in range(2, 42)]
    slow = [str(p) for p in range(20, 120, 2)]
    batch = client.batch(sma_cross(), grid={"entry.condition.signal.params.period,exit.condition.signal.params.period": fast, "entry.condition.rule.period,exit.condition.rule.period": slow})
    results = batch.wait(timeout=300).results
    assert len(results) == len(fast) * len(slow) == 2000
    assert batch.progress == (2000, 2000)
    # The varied keys by the last segments that tell them apart, as integers.
    assert batch.names == {
        "entry.condition.signal.params.period,exit.condition.signal.params.period": "params.period",
        "entry.condition.rule.period,exit.condition.rule.period": "rule.period",
    }
    assert results["params.period"].dtype == "int64" and set(results["params.period"]) == {int(f) for f in fast}
    # The best row, run again on its own, gives the same numbers.
    best = results.loc[results["total_return"].idxmax()]
    f, s = int(best["params.period"]), int(best["rule.period"])
    alone = client.backtest(sma_cross(f, s)).wait(timeout=120).result
    assert alone["total_return"] == pytest.approx(best["total_return"], rel=1e-12)
    assert alone["total_trades"] == best["total_trades"]
    # Whether the best is luck, as a Series and a histogram frame.
    stats = batch.statistics
    record = batch.record["statistics"]
    assert stats["strategies"] == 2000 and stats["splits"] == 12870
    assert stats["pbo"] == record["overfitting"]["pbo"]
    assert stats["deflated_sharpe_ratio"] == record["deflated_sharpe"]["deflated_sharpe_ratio"]
    assert 0 <= stats["pbo"] <= 1 and 0 <= stats["deflated_sharpe_ratio"] <= 1
    assert results["sortino"].dtype == "float64"
    logits = batch.logits
    assert list(logits.columns) == ["from", "to", "count"] and logits["count"].sum() == 12870
    assert pd.isna(logits["from"].iloc[0]) and logits["to"].iloc[0] == -4.0


def test_a_list_batch(client):
    batch = client.batch([sma_cross(5, 20), sma_cross(10, 50)], name="two", statistics={"blocks": 4, "trials": 10}).wait(timeout=120)
    results = batch.results
    assert len(results) == 2 and results["total_trades"].gt(0).all()
    stats = batch.statistics
    assert (stats["blocks"], stats["splits"], stats["trials"]) == (4, 6, 10.0)
    assert stats["best_index"] in (0, 1)
    # Without statistics: the same rows, nothing else.
    plain = client.batch([sma_cross(5, 20), sma_cross(10, 50)], statistics=False).wait(timeout=120)
    pd.testing.assert_frame_equal(plain.results, results)
    assert plain.statistics.empty


def test_a_walk_forward_picks_each_window_s_best_and_chains_its_runs(client):
    fast, slow = ["5", "10", "20"], ["30", "50", "100"]
    keys = ("entry.condition.signal.params.period,exit.condition.signal.params.period", "entry.condition.rule.period,exit.condition.rule.period")
    settings = {"in_sample": 504, "out_of_sample": 252, "metric": "total_return"}
    batch = client.batch(sma_cross(), grid=dict(zip(keys, (fast, slow))), walk_forward=settings).wait(timeout=300)
    windows, equity, summary = batch.walk_forward, batch.walk_forward_equity, batch.walk_forward_summary
    assert len(windows) >= 10 and isinstance(windows.index, pd.DatetimeIndex)
    assert (summary["in_sample"], summary["out_of_sample"], summary["metric"]) == (504, 252, "total_return")
    # Each window's pick, run alone from its out-of-sample start (earlier
    # bars warm the averages), gives the window's out-of-sample return.
    for start, w in windows.iloc[[0, len(windows) // 2, -1]].iterrows():
        f, s = (int(w["params"][k]) for k in keys)
        alone = client.backtest(sma_cross(f, s, start_date=str(start.date()), end_date=str(w["out_of_sample_end"].date()))).wait(timeout=120)
        assert alone.result["total_return"] == pytest.approx(w["out_of_sample_return"], rel=1e-9, abs=1e-9)
    # The first window's pick is the grid's best in sample.
    first = windows.iloc[0]
    scores = {
        (f, s): client.backtest(sma_cross(int(f), int(s), start_date=str(first["in_sample_start"].date()), end_date=str(first["in_sample_end"].date()))).wait(timeout=120).result["total_return"]
        for f in fast for s in slow
    }
    assert first["score"] == pytest.approx(max(scores.values()), rel=1e-9)
    assert first["in_sample_return"] == pytest.approx(max(scores.values()), rel=1e-9)
    # The stitched equity compounds the windows' out-of-sample returns.
    assert equity.iloc[-1] == pytest.approx(np.prod(1 + windows["out_of_sample_return"]), rel=1e-9)
    assert summary["total_return"] == pytest.approx(equity.iloc[-1] - 1, rel=1e-9)
    assert equity.index[0] == windows.index[0] and equity.index.is_monotonic_increasing
    assert summary["profitable_windows"] == int((windows["out_of_sample_return"] > 0).sum())


def test_a_monte_carlo_gives_bands_and_fans_as_frames(client, done):
    mc = done.monte_carlo(draws=400, seed=5)
    bands = mc.bands
    assert list(bands.columns) == ["p5", "p25", "p50", "p75", "p95", "actual"]
    assert list(bands.index) == [(m, f) for m in ("trades", "returns") for f in ("cagr", "max_drawdown", "final_equity")]
    percentiles = bands.drop(columns="actual")
    assert (percentiles.diff(axis=1).iloc[:, 1:] >= 0).all().all()
    # The run's own figures, and the same seed giving the same answer.
    result = done.result
    assert bands.loc[("trades", "final_equity"), "actual"] == pytest.approx(result["final_capital"], rel=1e-12)
    assert bands.loc[("returns", "cagr"), "actual"] == pytest.approx(result["cagr"], rel=1e-12)
    pd.testing.assert_frame_equal(done.monte_carlo(draws=400, seed=5).bands, bands)
    assert not done.monte_carlo(draws=400, seed=6).bands.equals(bands)
    assert ((mc.probability_of_loss >= 0) & (mc.probability_of_loss <= 1)).all()
    # Fans: by bar time from the window's first bar, and by trades taken.
    fan, by_trade = mc.fan("returns"), mc.fan("trades")
    equity = done.equity["equity"]
    assert fan.index[0] == equity.index[0] and fan.index[-1] == equity.index[-1]
    assert (fan.iloc[0] == result["initial_capital"]).all()
    assert by_trade.index.name == "trades" and by_trade.index[-1] == result["total_trades"]
    assert fan["p50"].iloc[-1] == pytest.approx(bands.loc[("returns", "final_equity"), "p50"], rel=1e-12)
    # One block as long as the run only rotates its returns: every path
    # ends where the equity curve does (relative to its first bar).
    whole = done.monte_carlo(draws=50, seed=1, block=len(equity) - 1).bands.loc[("returns", "final_equity")]
    expected = result["initial_capital"] * equity.iloc[-1] / equity.iloc[0]
    np.testing.assert_allclose(whole.drop("actual"), expected, rtol=1e-9)
    with pytest.raises(MarketlabError) as e:
        done.monte_carlo(draws=0)
    assert e.value.status == 400 and e.value.field == "draws"


def test_a_batch_rows_monte_carlo_is_its_strategy_s(client, done):
    batch = client.batch(sma_cross(), grid={"entry.condition.rule.period,exit.condition.rule.period": ["20", "50"]}).wait(timeout=120)
    row = int(batch.results.index[batch.results["period"] == 20][0])
    pd.testing.assert_frame_equal(batch.monte_carlo(row, draws=300, seed=2).bands, done.monte_carlo(draws=300, seed=2).bands)


def test_the_same_key_gives_the_same_task(client):
    key = f"notebook-{uuid.uuid4()}"
    first = client.backtest(sma_cross(), idempotency_key=key)
    again = client.backtest(sma_cross(), idempotency_key=key)
    assert first.id == again.id
    with pytest.raises(MarketlabError) as e:
        client.backtest(sma_cross(5, 30), idempotency_key=key)
    assert e.value.status == 422


def test_a_429_is_retried_after_its_retry_after(server, connect, kind):
    # A plan of 4 requests a minute: start a burst early in a minute.
    if time.time() % 60 > 50:
        time.sleep(61 - time.time() % 60)
    seen = []
    with connect(server, *LIMITED, max_retry_wait=65) as c:
        def record(r):
            seen.append((r.status_code, r.headers.get("retry-after")))

        async def record_async(r):
            record(r)

        c.http.event_hooks["response"].append(record if kind == "sync" else record_async)
        t0 = time.monotonic()
        for _ in range(5):
            assert c.usage()["plan"]["code"] == "trial"
        waited = time.monotonic() - t0
    statuses = [s for s, _ in seen]
    assert 429 in statuses and statuses[-1] == 200, seen
    retry_after = int(next(r for s, r in seen if s == 429))
    assert waited >= retry_after - 0.5
    with connect(server, *LIMITED, max_retry_wait=0) as c:
        with pytest.raises(RateLimited) as e:
            for _ in range(6):
                c.usage()
        assert e.value.retry_after and "requests_per_minute" in e.value.message


def test_pattern_and_scanner_tasks(client):
    scan = client.cpm_scan(symbol="SPX", system_pattern="double_bottom", corr_per=85, time_in_market=21).wait(timeout=120)
    assert len(scan.patterns) > 0 and scan.patterns["Corr"].ge(85).all()
    backtest = client.cpm_backtest(symbol="SPX", system_pattern="double_bottom", corr_per=85, time_in_market=21).wait(timeout=120)
    assert backtest.result["TOTAL TRADES"] == len(backtest.trades)
    assert isinstance(backtest.trades.index, pd.DatetimeIndex)
    scanner = client.scanner_backtest(start_date="2026-08-03", end_date="2026-11-20", find_type="stock/etf", signals=["All"],
                                      total_capital=100000, long_short_ratio="0.7/0.3", daily_limit=3).wait(timeout=300)
    assert len(scanner.trades) > 0 and scanner.equity["equity"].iloc[0] == 100000


def test_analytics_and_data_reads_are_frames(client):
    months = client.seasonality("SPX", "month")
    assert len(months) == 12 and list(months.columns) == ["mean_return", "positive_pct"]
    symbols = ["AAPL", "MSFT", "TLT"]
    rolling = client.correlation("SPX", symbols, "2020-01-02", "2024-12-31")
    assert isinstance(rolling.index, pd.DatetimeIndex) and set(symbols) <= set(rolling.columns)
    matrix = client.correlation_matrix("SPX", symbols, "2020-01-02", "2024-12-31")
    np.testing.assert_allclose(matrix.values, matrix.values.T, atol=1e-15)
    np.testing.assert_allclose(np.diag(matrix.values), 1.0)
    beta = client.beta("SPX", symbols, "2020-01-02", "2024-12-31")
    assert set(symbols) <= set(beta.columns) and len(beta) == len(rolling)
    screens = client.screens()
    assert "sp1500-dividend" in set(screens["key"])
    assert len(client.screen("sp1500-dividend")) > 0
    day = client.scanner()
    assert len(day) == day.attrs["count"] > 0
    catalogue = client.symbols()
    assert "AAPL_OPTIX" in set(catalogue["url"])
    series = client.history("AAPL_OPTIX", days=3)
    assert len(series) == 3 and isinstance(series.index, pd.DatetimeIndex)
    assert client.history("AAPL_OPTIX").index[-1] == series.index[-1]
    usage = client.usage()
    assert usage["plan"]["code"] == "pro" and usage["total"]["requests"]["backtest"] > 0


def test_a_server_on_this_machine_is_read_uncompressed(client):
    """On loopback compressing costs time and saves nothing (docs/decisions.md,
    "Compression inside the budget"): the client asks for answers as they are."""
    from marketlab.api import is_loopback

    assert all(map(is_loopback, ["http://127.0.0.1:8080", "http://localhost:1/", "http://[::1]:8080", "http://127.3.4.5"]))
    assert not any(map(is_loopback, ["https://api.marketlab.example", "http://10.0.0.1:8080", "http://localhost.example"]))
    # A JSON answer the server would compress for a client that asked.
    r = client.request("GET", "/ws/getSymbolDataLimitDays/SPX_OPTIX", params={"days": 3000},
                       headers={"Accept": "application/json"})
    assert r.request.headers["accept-encoding"] == "identity"
    assert len(r.content) > 16 * 1024 and "content-encoding" not in r.headers
