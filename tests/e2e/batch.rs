//! Batch backtests over HTTP: lists and grids, progress, the results table
//! as JSON, CSV and Parquet, failing rows, refusals, caps and tenants.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::time::Duration;
use tests::server::{Options, TestServer, eventually, private_market};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// Close above its `period`-session average, held by `risk`.
fn sma_strategy(period: &str, risk: &str) -> Value {
    json!({"symbol": "SPX", "start_date": "2016-01-04", "risk_control": risk,
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
            "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": period}}},
        "exit": {"rule_type": "RiskControlOnly"}})
}

/// The finished batch's status, with its rows from the results table (the
/// status itself never carries them).
async fn finished(s: &TestServer, id: &str) -> Value {
    let path = format!("/backtest/batch/{id}");
    assert!(
        eventually(Duration::from_secs(120), || async {
            s.get(&path, DEMO).await.1["status"] == "SUCCESS"
        })
        .await,
        "{}",
        s.get(&path, DEMO).await.1
    );
    let mut done = s.get(&path, DEMO).await.1;
    assert!(done.get("rows").is_none(), "the status stays small: {done}");
    let (status, rows) = s.get(&format!("{path}/results"), DEMO).await;
    assert_eq!(status, 200, "{rows}");
    done["rows"] = rows;
    done
}

async fn raw(s: &TestServer, path: &str) -> (u16, String, bytes::Bytes) {
    let r = reqwest::Client::new()
        .get(s.url(path))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let kind = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, kind, r.bytes().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn grid_and_list_batches_with_their_tables() {
    let market = private_market();
    let mut opts = Options::new(market.path().join("db.sqlite"));
    opts.market_dir = market.path().to_path_buf();
    let s = TestServer::start(opts).await;

    // A grid: 3 periods x 2 risk controls, the first path slowest.
    let grid = json!({"name": "sma grid", "strategy": sma_strategy("50", "//21"),
        "grid": {"entry.condition.rule.period": ["20", "50", "200"], "risk_control": ["//21", "-5/10/21"]}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &grid).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap().to_string();
    let done = finished(&s, &id).await;
    assert_eq!(
        (done["done"].as_u64(), done["total"].as_u64()),
        (Some(6), Some(6))
    );
    assert_eq!(done["name"], "sma grid");
    assert_eq!(
        done["paths"],
        json!(["entry.condition.rule.period", "risk_control"])
    );
    let rows = done["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    assert_eq!(
        rows[3]["params"],
        json!({"entry.condition.rule.period": "50", "risk_control": "-5/10/21"})
    );
    assert!(
        rows.iter()
            .enumerate()
            .all(|(k, r)| r["index"] == k && r["error"].is_null())
    );
    // Each row equals the same strategy run alone.
    let (_, alone) = s
        .post(
            "/backtest/start_backtest",
            DEMO,
            &sma_strategy("50", "-5/10/21"),
        )
        .await;
    let alone_path = format!("/backtest/status/{}", alone["task_id"].as_str().unwrap());
    assert!(
        eventually(Duration::from_secs(60), || async {
            s.get(&alone_path, DEMO).await.1["status"] == "SUCCESS"
        })
        .await
    );
    let one = s.get(&alone_path, DEMO).await.1["result"].clone();
    for key in [
        "Total Trades",
        "Total Return (%)",
        "Sharpe Ratio",
        "Max Drawdown",
        "Win Rate",
    ] {
        assert_eq!(rows[3][key], one[key], "{key}");
    }

    // The table as CSV and Parquet, read back.
    let (status, kind, csv) = raw(&s, &format!("/backtest/batch/{id}/results?format=csv")).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/csv"), "{kind}");
    let text = String::from_utf8(csv.to_vec()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7);
    assert!(
        lines[0].starts_with("index,entry.condition.rule.period,risk_control,Symbol,Total Trades")
    );
    assert!(
        lines[4].starts_with(&format!("3,50,-5/10/21,SPX,{},", rows[3]["Total Trades"])),
        "{}",
        lines[4]
    );
    let (status, kind, pq) = raw(&s, &format!("/backtest/batch/{id}/results?format=parquet")).await;
    assert_eq!(
        (status, kind.as_str()),
        (200, "application/vnd.apache.parquet")
    );
    let table = platform::marketdata::codec::from_parquet(pq).unwrap();
    assert_eq!(table.num_rows(), 6);
    let ret = platform::marketdata::columns::numbers(&table, "Total Return (%)").unwrap();
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(ret[k], r["Total Return (%)"].as_f64(), "row {k}");
    }
    let risk = platform::marketdata::columns::texts(&table, "risk_control").unwrap();
    assert_eq!(risk[1].as_deref(), Some("-5/10/21"));
    // The JSON table as the Arrow one: the same rows in the same order.
    let (status, json_rows) = s
        .get(&format!("/backtest/batch/{id}/results?format=json"), DEMO)
        .await;
    assert_eq!((status, json_rows.as_array().map(Vec::len)), (200, Some(6)));

    // A list: three strategies, each its row.
    let list = json!({"strategies": [sma_strategy("20", "//5"), sma_strategy("100", "//5"), sma_strategy("200", "//5")]});
    let (status, sub) = s.post("/backtest/batch", DEMO, &list).await;
    assert_eq!(status, 202, "{sub}");
    let done = finished(&s, sub["task_id"].as_str().unwrap()).await;
    let rows = done["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .all(|r| r["error"].is_null() && r["params"] == json!({}))
    );

    // Listed, newest first, without rows.
    let (_, listed) = s.get("/backtest/batches", DEMO).await;
    assert_eq!(listed["total"], 2);
    assert_eq!(listed["tasks"][1]["batch_id"], json!(id));
    assert!(listed["tasks"][0]["rows"].is_null());
    // Another tenant sees none of it.
    s.add_account("other@example.test", "other-password", "pro")
        .await;
    let other = Some(("other@example.test", "other-password"));
    assert_eq!(s.get(&format!("/backtest/batch/{id}"), other).await.0, 404);
    assert_eq!(s.get("/backtest/batches", other).await.1["total"], 0);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_refusals_name_the_strategy_and_the_cap() {
    let (s, _dir) = TestServer::fresh().await;
    let mut bad = sma_strategy("20", "//5");
    bad["risk_control"] = json!("5/x/21");
    let (status, r) = s
        .post(
            "/backtest/batch",
            DEMO,
            &json!({"strategies": [sma_strategy("20", "//5"), bad]}),
        )
        .await;
    assert_eq!(status, 400, "{r}");
    let msg = r["detail"].as_str().unwrap();
    assert!(
        msg.contains("strategies[1]") && msg.contains("risk_control"),
        "{msg}"
    );
    // A grid value that makes a strategy invalid names it too.
    let (status, r) = s
        .post("/backtest/batch", DEMO, &json!({"strategy": sma_strategy("20", "//5"), "grid": {"risk_control": ["//5", "bad"]}}))
        .await;
    assert_eq!(status, 400);
    assert!(
        r["detail"]
            .as_str()
            .unwrap()
            .starts_with("parameter 'grid.risk_control': the value 'bad': "),
        "{r}"
    );
    // The trial plan's cap: 100 strategies.
    s.add_account("trial@example.test", "trial-password", "trial")
        .await;
    let trial = Some(("trial@example.test", "trial-password"));
    let periods: Vec<String> = (2..103).map(|p| p.to_string()).collect();
    let (status, r) = s
        .post("/backtest/batch", trial, &json!({"strategy": sma_strategy("20", "//5"), "grid": {"entry.condition.rule.period": periods}}))
        .await;
    assert_eq!(status, 400, "{r}");
    assert!(r["detail"].as_str().unwrap().contains("at most 100"), "{r}");
    // Not finished yet, or unknown: 409 and 404 on the results.
    let (status, _) = s
        .get(
            "/backtest/batch/00000000-0000-0000-0000-000000000000/results",
            DEMO,
        )
        .await;
    assert_eq!(status, 404);
    let (status, r) = s.get("/backtest/batches?limit=0", DEMO).await;
    assert_eq!(status, 400, "{r}");
    s.stop().await;
}

/// A server over `market` (its database there too) with `workers` workers.
async fn server(market: &std::path::Path, workers: usize) -> TestServer {
    let mut opts = Options::new(market.join("db.sqlite"));
    opts.market_dir = market.to_path_buf();
    opts.workers = workers;
    opts.scan.at_start = false;
    TestServer::start(opts).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_strategy_that_fails_at_run_time_is_a_row_with_its_error() {
    let market = private_market();
    // Submitted and checked while the data are whole; no worker runs it yet.
    let s = server(market.path(), 0).await;
    let broken = json!({"symbol": "SPX", "risk_control": "//10", "exit": {"rule_type": "RiskControlOnly"},
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "AAII Bullish Sentiment %"},
            "rule": {"type_name": ">", "comparison_value": "30"}}}});
    let list =
        json!({"strategies": [sma_strategy("20", "//5"), broken, sma_strategy("100", "//5")]});
    let (status, sub) = s.post("/backtest/batch", DEMO, &list).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap().to_string();
    assert_eq!(
        s.get(&format!("/backtest/batch/{id}"), DEMO).await.1["status"],
        "PENDING"
    );
    s.stop().await;
    // The indicator's readings are lost before the batch runs.
    std::fs::write(
        market.path().join("indicators/series/AAII_BULL.parquet"),
        b"not parquet",
    )
    .unwrap();
    let s = server(market.path(), 2).await;
    let done = finished(&s, &id).await;
    let rows = done["rows"].as_array().unwrap();
    assert!(rows[0]["error"].is_null() && rows[2]["error"].is_null());
    assert!(
        rows[1]["error"].as_str().unwrap().contains("AAII_BULL"),
        "{}",
        rows[1]
    );
    assert!(rows[1]["Total Trades"].is_null());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chunk_that_dies_mid_run_is_redelivered_without_duplicate_rows() {
    use platform::tasks::{Claim, TaskKind};
    let market = private_market();
    let s = server(market.path(), 0).await;
    // 302 strategies: two chunks of 250 and 52.
    let periods: Vec<String> = (2..153).map(|p| p.to_string()).collect();
    let grid = json!({"strategy": sma_strategy("20", "//5"),
        "grid": {"entry.condition.rule.period": periods, "risk_control": ["//5", "//21"]}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &grid).await;
    assert_eq!(status, 202, "{sub}");
    let id: uuid::Uuid = sub["task_id"].as_str().unwrap().parse().unwrap();
    // A worker fans the batch out, starts its first chunk, and dies.
    let tasks = s.state.tasks.clone();
    let registry = api::jobs::registry(&s.state);
    let lease = chrono::TimeDelta::minutes(10);
    let Claim::Claimed(record) = tasks
        .claim(id, chrono::Utc::now().naive_utc(), lease)
        .await
        .unwrap()
    else {
        panic!("the record is claimable")
    };
    let out = registry
        .get(TaskKind::BatchBacktest)
        .unwrap()
        .run(*record.clone(), Default::default())
        .await
        .unwrap();
    tasks
        .finish(
            id,
            platform::tasks::Finished {
                attempt: record.attempts,
                outcome: platform::tasks::Outcome::Success(out.clone()),
                at: chrono::Utc::now().naive_utc(),
            },
        )
        .await
        .unwrap();
    let chunks: Vec<uuid::Uuid> = serde_json::from_value(out["chunks"].clone()).unwrap();
    assert_eq!(chunks.len(), 2);
    assert!(matches!(
        tasks
            .claim(chunks[0], chrono::Utc::now().naive_utc(), lease)
            .await
            .unwrap(),
        Claim::Claimed(_)
    ));
    let (_, running) = s.get(&format!("/backtest/batch/{id}"), DEMO).await;
    assert_eq!(
        (running["status"].as_str(), running["done"].as_u64()),
        (Some("RUNNING"), Some(0))
    );
    s.stop().await;
    // The next start delivers the dead chunk again; every row comes once.
    let s = server(market.path(), 2).await;
    let done = finished(&s, &id.to_string()).await;
    let rows = done["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 302);
    assert!(
        rows.iter()
            .enumerate()
            .all(|(k, r)| r["index"] == k && r["error"].is_null())
    );
    let chunk = s.state.tasks.get(chunks[0]).await.unwrap().unwrap();
    assert_eq!(chunk.attempts, 2, "run again after the death");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_dropped_in_the_inbox_runs_and_its_table_is_written_beside_it() {
    let inbox = tempfile::tempdir().unwrap();
    let mut opts = Options::new(inbox.path().join("db.sqlite"));
    opts.inbox = Some(inbox.path().join("inbox"));
    let s = TestServer::start(opts).await;
    let mine = inbox.path().join("inbox").join(DEMO_EMAIL);
    std::fs::create_dir_all(&mine).unwrap();
    let lines: Vec<String> = ["20", "50", "100"]
        .iter()
        .map(|p| sma_strategy(p, "//10").to_string())
        .collect();
    std::fs::write(mine.join("periods.jsonl"), lines.join("\n")).unwrap();
    let mut bad = sma_strategy("20", "//5");
    bad["symbol"] = json!("NOSUCH");
    std::fs::write(
        mine.join("bad.jsonl"),
        format!("{}\n{bad}\n", sma_strategy("20", "//5")),
    )
    .unwrap();
    // Created but not yet written: it waits instead of being refused.
    std::fs::write(mine.join("later.jsonl"), "").unwrap();
    let stranger = inbox.path().join("inbox").join("nobody@example.test");
    std::fs::create_dir_all(&stranger).unwrap();
    std::fs::write(
        stranger.join("x.jsonl"),
        sma_strategy("20", "//5").to_string(),
    )
    .unwrap();

    // A link to a strategy kept elsewhere is refused by name, unread.
    let elsewhere = inbox.path().join("elsewhere.jsonl");
    std::fs::write(&elsewhere, sma_strategy("30", "//5").to_string()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, mine.join("linked.jsonl")).unwrap();

    let results = mine.join("periods.results.parquet");
    assert!(eventually(Duration::from_secs(60), || async { results.exists() }).await);
    let id = std::fs::read_to_string(mine.join("periods.batch")).unwrap();
    let done = finished(&s, id.trim()).await;
    assert_eq!(done["name"], "periods");
    let table =
        platform::marketdata::codec::from_parquet(std::fs::read(&results).unwrap().into()).unwrap();
    assert_eq!(table.num_rows(), 3);
    let trades = platform::marketdata::columns::numbers(&table, "Total Trades").unwrap();
    for (k, r) in done["rows"].as_array().unwrap().iter().enumerate() {
        assert_eq!(trades[k], r["Total Trades"].as_f64());
    }
    let csv = std::fs::read_to_string(mine.join("periods.results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4);
    // Refusals are written beside their files; nothing is submitted for them.
    // A sweep may have run between the writes above, so the refusals can
    // come a sweep after the first batch's table.
    for refused in [
        mine.join("bad.error.txt"),
        stranger.join("x.error.txt"),
        mine.join("linked.error.txt"),
    ] {
        assert!(
            eventually(Duration::from_secs(30), || async { refused.exists() }).await,
            "{}",
            refused.display()
        );
    }
    let why = std::fs::read_to_string(mine.join("bad.error.txt")).unwrap();
    assert!(
        why.contains("strategies[1]") && why.contains("symbol"),
        "{why}"
    );
    let why = std::fs::read_to_string(stranger.join("x.error.txt")).unwrap();
    assert!(why.contains("no account"), "{why}");
    let why = std::fs::read_to_string(mine.join("linked.error.txt")).unwrap();
    assert!(why.contains("not a regular file"), "{why}");
    assert!(!mine.join("linked.batch").exists());
    assert_eq!(s.get("/backtest/batches", DEMO).await.1["total"], 1);
    assert!(!mine.join("later.error.txt").exists() && !mine.join("later.batch").exists());
    std::fs::write(
        mine.join("later.jsonl"),
        sma_strategy("20", "//5").to_string(),
    )
    .unwrap();
    let later = mine.join("later.batch");
    assert!(eventually(Duration::from_secs(30), || async { later.exists() }).await);
    assert!(!mine.join("later.error.txt").exists());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn marketlab_batch_run_writes_the_table() {
    use clap::Parser;
    let data = tempfile::tempdir().unwrap();
    tests::server::sample_into(&data.path().join("market"));
    let run = |file: &std::path::Path| {
        marketlab::cli::run(marketlab::cli::Cli::parse_from([
            "marketlab",
            "--data-dir",
            data.path().to_str().unwrap(),
            "batch",
            "run",
            file.to_str().unwrap(),
        ]))
    };
    let grid = data.path().join("grid.json");
    std::fs::write(
        &grid,
        json!({"strategy": sma_strategy("20", "//5"), "grid": {"entry.condition.rule.period": ["10", "30"], "risk_control": ["//5", "//21"]}}).to_string(),
    )
    .unwrap();
    run(&grid).await.unwrap();
    let csv = std::fs::read_to_string(data.path().join("grid.results.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[2].starts_with("1,10,//21,SPX,"), "{}", lines[2]);
    assert!(data.path().join("grid.results.parquet").exists());

    // A grid of two chunks: the command line's statistics are the
    // service's for the same batch, in the Parquet metadata and in the
    // CSV's companion file.
    let periods: Vec<String> = (5..305).map(|p| p.to_string()).collect();
    let request = json!({"strategy": sma_strategy("20", "//"), "grid": {"entry.condition.rule.period": periods}});
    let wide = data.path().join("wide.json");
    std::fs::write(&wide, request.to_string()).unwrap();
    run(&wide).await.unwrap();
    let table = platform::marketdata::codec::from_parquet(
        std::fs::read(data.path().join("wide.results.parquet"))
            .unwrap()
            .into(),
    )
    .unwrap();
    assert_eq!(table.num_rows(), 300);
    let in_parquet: Value =
        serde_json::from_str(&table.schema().metadata()["marketlab.statistics"]).unwrap();
    let companion: Value =
        serde_json::from_slice(&std::fs::read(data.path().join("wide.statistics.json")).unwrap())
            .unwrap();
    assert_eq!(in_parquet, companion);
    let mut opts = Options::new(data.path().join("db.sqlite"));
    opts.market_dir = data.path().join("market");
    opts.scan.at_start = false;
    let s = TestServer::start(opts).await;
    let (status, sub) = s.post("/backtest/batch", DEMO, &request).await;
    assert_eq!(status, 202, "{sub}");
    let over_http = finished(&s, sub["task_id"].as_str().unwrap()).await;
    assert_eq!(over_http["statistics"]["strategies"], 300);
    assert!(over_http["statistics"]["overfitting"]["pbo"].is_number());
    assert_eq!(in_parquet, over_http["statistics"]);
    s.stop().await;
    let list = data.path().join("list.jsonl");
    std::fs::write(
        &list,
        format!(
            "{}\n{}\n",
            sma_strategy("20", "//5"),
            json!({"symbol": "SPX"})
        ),
    )
    .unwrap();
    let e = run(&list).await.unwrap_err();
    assert!(e.to_string().contains("strategies[1]"), "{e}");
}

/// A fast average crossing a slow one: `params.period` sets the signal's own
/// period and `rule.period` the slow average's.
fn crossover(fast: &str, slow: &str) -> Value {
    let side = |op: &str| {
        json!({"rule_type": "SingleCondition", "condition": {
            "signal": {"name": "Simple Moving Average", "params": {"period": fast}},
            "rule": {"comparison_type": "MA", "type_name": op, "period": slow}}})
    };
    json!({"symbol": "SPX", "start_date": "2006-01-03", "risk_control": "//",
        "entry": side("CrossAbove"), "exit": side("CrossBelow")})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_two_average_crossover_grid_links_entry_and_exit_periods() {
    use engine::backtest::run;
    use engine::indicators::sma;
    use engine::rules::{Op, Target, evaluate};
    use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
    let market = private_market();
    let mut opts = Options::new(market.path().join("db.sqlite"));
    opts.market_dir = market.path().to_path_buf();
    let s = TestServer::start(opts).await;
    let fast = "entry.condition.signal.params.period,exit.condition.signal.params.period";
    let slow = "entry.condition.rule.period,exit.condition.rule.period";
    let grid = json!({"strategy": crossover("10", "50"),
        "grid": {fast: ["5", "10", "20"], slow: ["50", "100"]}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &grid).await;
    assert_eq!(status, 202, "{sub}");
    let done = finished(&s, sub["task_id"].as_str().unwrap()).await;
    let rows = done["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[5]["params"], json!({fast: "20", slow: "100"}));

    // Each row is the crossover computed here from the stored bars.
    let md = ParquetMarketData::new(std::sync::Arc::new(LocalDir::new(market.path())));
    let bars = md.daily("SPX").await.unwrap();
    let start = bars
        .time
        .partition_point(|t| t.date() < chrono::NaiveDate::from_ymd_opt(2006, 1, 3).unwrap());
    for (k, (f, sl)) in [(5, 50), (5, 100), (10, 50), (10, 100), (20, 50), (20, 100)]
        .into_iter()
        .enumerate()
    {
        let (a, b) = (sma(&bars.close, f), sma(&bars.close, sl));
        let entry = evaluate(&a, Op::CrossAbove, &Target::Series(b.clone()));
        let exit = evaluate(&a, Op::CrossBelow, &Target::Series(b));
        let settings = tests::reference::close_fills(start);
        let m = run(&bars, &entry, &exit, &settings).metrics;
        assert!(m.total_trades > 5, "SMA {f}/{sl} trades");
        assert_eq!(rows[k]["Total Trades"], m.total_trades, "SMA {f}/{sl}");
        // Equal up to the JSON text's last digit.
        let near = |key: &str, want: f64| {
            let got = rows[k][key].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-14 * want.abs(),
                "SMA {f}/{sl} {key}: {got} vs {want}"
            );
        };
        near("Total Return (%)", m.total_return);
        near("Sharpe Ratio", m.sharpe);
    }

    // Without its own period the signal is the close (price meets average).
    let (_, one) = s
        .post("/backtest/validate", DEMO, &{
            let mut c = crossover("10", "50");
            c["entry"]["condition"]["signal"]["params"] = json!({});
            c
        })
        .await;
    assert_eq!(one["status"], "valid", "{one}");
    assert_eq!(
        one["entry"]["signals"][0]["code"],
        "TI:Simple Moving Average;IDS:EO20/EP80;SC:MA/3/"
    );
    let (_, two) = s
        .post("/backtest/validate", DEMO, &crossover("10", "50"))
        .await;
    assert_eq!(
        two["entry"]["signals"][0]["code"],
        "TI:Simple Moving Average=period=10;IDS:EO20/EP80;SC:MA/3/"
    );

    // A period only where the indicator has one.
    for (signal, want) in [
        (
            json!({"name": "MACD", "params": {"period": 5}}),
            "has no single period",
        ),
        (
            json!({"name": "Symbol Close", "params": {"period": 5}}),
            "only Technical indicators",
        ),
        (
            json!({"name": "RSI", "params": {"period": 0}}),
            "at least 1",
        ),
    ] {
        let mut bad = crossover("10", "50");
        bad["entry"]["condition"] =
            json!({"signal": signal, "rule": {"type_name": ">", "comparison_value": "1"}});
        let (status, e) = s
            .post(
                "/backtest/batch",
                DEMO,
                &json!({"strategies": [crossover("5", "20"), bad]}),
            )
            .await;
        assert_eq!(status, 400, "{e}");
        let m = e["detail"].as_str().unwrap_or_default();
        assert!(
            m.contains("parameter 'strategies[1].entry.condition.signal.params.period': ")
                && m.contains(want),
            "{e}"
        );
    }
    s.stop().await;
}

/// A grid past `CHECK_EVERY` points is checked by its probes: a
/// million-point SMA grid is accepted (its lists, not a million maps), a
/// value that cannot run is refused naming its path and value, and a path
/// that changes nothing is refused as for a small grid.
#[tokio::test(flavor = "multi_thread")]
async fn a_grid_past_20000_points_is_checked_by_its_probes() {
    use platform::marketdata::{LocalDir, ParquetMarketData};
    use services::backtest::batch::{self, CHECK_EVERY, Points};
    let md = ParquetMarketData::new(std::sync::Arc::new(LocalDir::new(
        tests::server::market_dir(),
    )));
    let fast = "entry.condition.signal.params.period,exit.condition.signal.params.period";
    let slow = "entry.condition.rule.period,exit.condition.rule.period";
    let periods = |from: usize, n: usize| -> Vec<String> {
        (from..from + n).map(|p| p.to_string()).collect()
    };
    let million = json!({"statistics": false, "strategy": crossover("10", "50"),
        "grid": {fast: periods(2, 1000), slow: periods(1002, 1000)}});
    let e = batch::expand(&million, 1_000_000).unwrap();
    assert_eq!(e.len(), 1_000_000);
    let Points::Grid(axes) = &e.varied else {
        panic!("a grid")
    };
    assert_eq!(axes.len(), 2);
    // Each path's 1,000 values (point 0 shared) and the last point.
    assert_eq!(e.varied.probes().len(), 2_000);
    let params = batch::submission(&md, million.clone(), 1_000_000)
        .await
        .unwrap();
    assert_eq!(params.total, 1_000_000);
    assert_eq!(params.paths, vec![fast.to_string(), slow.to_string()]);
    assert!(batch::submission(&md, million, 999_999).await.is_err());

    // 21,000 points, past CHECK_EVERY; one fast period is not a period.
    const { assert!(21 * 1000 > CHECK_EVERY) };
    let mut bad = periods(2, 21);
    bad[13] = "fourteen".into();
    let refused = batch::submission(
        &md,
        json!({"strategy": crossover("10", "50"), "grid": {fast: bad, slow: periods(100, 1000)}}),
        1_000_000,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains(&format!("grid.{fast}")) && refused.contains("'fourteen'"),
        "{refused}"
    );
    // A strategy's name read by no backtest: the same strategy twice.
    let names: Vec<String> = (0..21).map(|k| format!("run {k}")).collect();
    let refused = batch::submission(
        &md,
        json!({"strategy": crossover("10", "50"), "grid": {slow: periods(100, 1000), "name": names}}),
        1_000_000,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains("grid.name") && refused.contains("give the same strategy"),
        "{refused}"
    );
}
