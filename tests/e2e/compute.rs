//! Monthly compute under a burst, over HTTP: a one-minute plan, many fast
//! submits and several large batches at once; real use ends within one
//! task's estimate of the limit, and the ledger settles to the compute
//! counted.

use crate::usage::set_limits;
use platform::quota::PlanLimits;
use platform::tasks::{Page, TaskFilter, TaskKind};
use std::time::Duration;
use tests::server::{TestServer, eventually, optix_strategy};

/// The month's counted compute from the usage store, and the ledger the
/// submits reserve against.
async fn compute_used(server: &TestServer, account: &str) -> (u64, i64) {
    let m = server.state.metering.as_ref().unwrap();
    m.flush().await.unwrap();
    let today = chrono::Utc::now().date_naive();
    let used = platform::metering::compute_ms(&m.month(account, today).await.unwrap());
    let key = format!("compute#{account}#{}", today.format("%Y-%m"));
    let ledger = m.quota_store().count(&key).await.unwrap().unwrap_or(0);
    (used, ledger)
}

/// Waits until every task of `account` has finished.
async fn all_finished(server: &TestServer, account: &str) {
    let done = eventually(Duration::from_secs(240), || async {
        let page = server
            .state
            .tasks
            .list(account, &TaskFilter::default(), Page::new(100_000, 0))
            .await
            .unwrap();
        page.tasks.iter().all(|t| t.status.is_finished())
    })
    .await;
    assert!(done, "{account}: tasks left unfinished");
}

/// A one-minute plan for the `backtest` plan's tenants, fast otherwise.
async fn one_minute(server: &TestServer) {
    one_minute_of(server, "backtest").await;
}

/// `plan` with one minute of compute a month.
async fn one_minute_of(server: &TestServer, plan: &str) {
    set_limits(
        server,
        plan,
        PlanLimits {
            requests_per_minute: 100_000,
            concurrent_tasks: 8,
            monthly_compute_minutes: 1,
            max_batch: None,
        },
    )
    .await;
}

/// Monthly compute under a burst: 150 fast submits with 0.18 of a minute
/// used, and four 4,000-strategy batches at once from a fresh tenant, end
/// within one task's estimate of the one-minute limit, and the ledger the
/// submits reserved against ends equal to the compute counted.
#[tokio::test(flavor = "multi_thread")]
async fn monthly_compute_holds_within_one_estimate_under_a_burst() {
    let (server, _dir) = TestServer::fresh().await;
    one_minute(&server).await;
    let limit = 60_000u64;
    let http = reqwest::Client::new();

    // 150 fast submits, 0.18 minutes already used.
    let fast = "fast@example.test";
    server
        .add_account(fast, "a long password", "backtest")
        .await;
    let m = server.state.metering.as_ref().unwrap();
    m.record(fast, "compute_ms:strategy_backtest", 10_800);
    m.flush().await.unwrap();
    let submits: Vec<_> = (0..150)
        .map(|_| {
            http.post(server.url("/backtest/start_backtest"))
                .basic_auth(fast, Some("a long password"))
                .json(&optix_strategy())
                .send()
        })
        .collect();
    let mut accepted = 0;
    let mut refused = 0;
    for s in futures::future::join_all(submits).await {
        match s.unwrap().status().as_u16() {
            202 => accepted += 1,
            429 => refused += 1,
            other => panic!("{other}"),
        }
    }
    all_finished(&server, fast).await;
    let (used, ledger) = compute_used(&server, fast).await;
    let estimate = 1_000;
    println!(
        "150 fast submits: {accepted} accepted, {refused} refused; compute used {used} ms of {limit} (ledger {ledger})"
    );
    assert_eq!(accepted + refused, 150);
    assert!(
        accepted >= 40,
        "work is accepted up to the limit: {accepted}"
    );
    assert!(used <= limit + estimate, "{used} ms");
    assert_eq!(
        ledger, used as i64,
        "the ledger settles to the compute counted"
    );

    // Four 4,000-strategy batches at once from a fresh tenant.
    let batches = "batches@example.test";
    server
        .add_account(batches, "a long password", "backtest")
        .await;
    let grid = serde_json::json!({
        "strategy": {"symbol": "SPX", "start_date": "2000-01-01", "risk_control": "//21",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"}, "rule": {"type_name": ">", "comparison_value": "100"}}},
            "exit": {"rule_type": "RiskControlOnly"}},
        "grid": {
            "entry.condition.rule.comparison_value": (0..80).map(|k| (100 + 10 * k).to_string()).collect::<Vec<_>>(),
            "risk_control": (1..=50).map(|k| format!("//{k}")).collect::<Vec<_>>()
        }
    });
    let submits: Vec<_> = (0..4)
        .map(|_| {
            http.post(server.url("/backtest/batch"))
                .basic_auth(batches, Some("a long password"))
                .json(&grid)
                .send()
        })
        .collect();
    let mut accepted = 0;
    for s in futures::future::join_all(submits).await {
        match s.unwrap().status().as_u16() {
            202 => accepted += 1,
            429 => {}
            other => panic!("{other}"),
        }
    }
    all_finished(&server, batches).await;
    let (used, ledger) = compute_used(&server, batches).await;
    let today = chrono::Utc::now().date_naive();
    let batch_params = serde_json::json!({"request": {}, "total": 4_000, "paths": [],
        "strategy_us": services::compute::strategy_us(&grid["strategy"], today), "reserved": true});
    let estimate =
        services::compute::reserved(TaskKind::BatchBacktest, &batch_params, today).total();
    println!(
        "4 batches of 4,000 at once: {accepted} accepted (estimate {estimate} ms each); compute used {used} ms of {limit} (ledger {ledger})"
    );
    // Each was accepted while the ledger was below the limit (0, 17, 34 and
    // 51 s reserved); a fifth finds it past.
    assert!(accepted >= 1, "{accepted}");
    assert!(used <= limit + estimate, "{used} ms");
    assert_eq!(ledger, used as i64);
    let (status, body) = server
        .post("/backtest/batch", Some((batches, "a long password")), &grid)
        .await;
    assert_eq!(status, 429, "{body}");
    server.stop().await;
}

/// A batch file dropped by a tenant whose month of compute is used up is
/// refused like the same batch over HTTP: nothing is stored, and the file's
/// refusal carries the 429's message.
#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_file_over_the_monthly_compute_is_refused_like_a_submit() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = tests::server::Options::new(dir.path().join("db.sqlite"));
    opts.inbox = Some(dir.path().join("inbox"));
    let server = TestServer::start(opts).await;
    one_minute(&server).await;
    let spent = "spent@example.test";
    server
        .add_account(spent, "a long password", "backtest")
        .await;
    let m = server.state.metering.as_ref().unwrap();
    m.record(spent, "compute_ms:strategy_backtest", 60_000);
    m.flush().await.unwrap();

    let strategy = optix_strategy();
    let over_http = reqwest::Client::new()
        .post(server.url("/backtest/batch"))
        .basic_auth(spent, Some("a long password"))
        .json(&serde_json::json!({"strategies": [strategy]}))
        .send()
        .await
        .unwrap();
    assert_eq!(over_http.status().as_u16(), 429);
    let refused: serde_json::Value = over_http.json().await.unwrap();
    let message = refused["detail"].as_str().unwrap().to_string();
    assert!(message.starts_with("monthly compute used up"), "{message}");

    let folder = dir.path().join("inbox").join(spent);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("late.jsonl"), format!("{strategy}\n")).unwrap();
    let why = folder.join("late.error.txt");
    assert!(eventually(Duration::from_secs(30), || async { why.exists() }).await);
    assert_eq!(std::fs::read_to_string(&why).unwrap().trim(), message);
    assert!(!folder.join("late.batch").exists());
    let tasks = server
        .state
        .tasks
        .list(spent, &TaskFilter::default(), Page::new(10, 0))
        .await
        .unwrap();
    assert_eq!(tasks.total, 0, "nothing was stored for either refusal");

    let (used, ledger) = compute_used(&server, spent).await;
    assert_eq!(used, 60_000);
    assert!(ledger <= 60_000, "no reservation is left behind: {ledger}");
    server.stop().await;
}

/// Answers refused by a limit, a share or a scope are not billed: with the
/// tenant's places on the compute pool all taken, a correlation is 429; a
/// key without the scope is 403; with the month's compute spent, a submit,
/// a batch and a correlation are 429. `/usage` counts none of them, and
/// counts the requests that were answered.
#[tokio::test(flavor = "multi_thread")]
async fn refusals_by_limits_shares_and_scopes_are_not_billed() {
    let (server, _dir) = TestServer::fresh().await;
    one_minute_of(&server, "pro").await;
    let (email, password) = ("refused@example.test", "a long password");
    server.add_account(email, password, "pro").await;
    let http = reqwest::Client::new();
    let post = |path: &str, body: serde_json::Value| {
        http.post(server.url(path))
            .basic_auth(email, Some(password))
            .json(&body)
            .send()
    };
    let refused = |r: reqwest::Response, status: u16| {
        assert_eq!(r.status().as_u16(), status, "{}", r.url());
        if status == 429 {
            assert!(r.headers().contains_key("retry-after"), "{}", r.url());
        }
    };
    let correlation = serde_json::json!({"benchmark": "SPX", "stock_comparison": ["IVV", "TLT"],
        "start_date": "2024-01-01", "end_date": "2024-06-30"});

    // The tenant's share of the compute pool, taken: a correlation waits for none.
    let share = server.state.compute.limits().per_tenant;
    let held: Vec<_> = (0..share)
        .map(|_| server.state.compute.admit(email).unwrap())
        .collect();
    refused(
        post("/symbol_corr", correlation.clone()).await.unwrap(),
        429,
    );
    drop(held);

    // A read key submitting (its creation is answered, and billed).
    let made = tests::keys::Keys::with_basic(&server.base, email, password)
        .create(serde_json::json!({"name": "reader", "scopes": ["read"]}))
        .await;
    let key = made["key"].as_str().unwrap();
    let r = http
        .post(server.url("/backtest/start_backtest"))
        .bearer_auth(key)
        .json(&optix_strategy())
        .send()
        .await
        .unwrap();
    refused(r, 403);

    // The month's compute spent.
    let m = server.state.metering.as_ref().unwrap();
    m.record(email, "compute_ms:strategy_backtest", 60_000);
    m.flush().await.unwrap();
    refused(
        post("/backtest/start_backtest", optix_strategy())
            .await
            .unwrap(),
        429,
    );
    let batch = serde_json::json!({"strategies": [optix_strategy()]});
    refused(post("/backtest/batch", batch).await.unwrap(), 429);
    refused(post("/symbol_corr", correlation).await.unwrap(), 429);

    let usage = |by_key: bool| {
        let m = m.clone();
        let http = http.clone();
        let url = server.url(if by_key { "/usage?by=key" } else { "/usage" });
        async move {
            m.flush().await.unwrap();
            let r = http.get(url).basic_auth(email, Some(password)).send().await;
            r.unwrap().json::<serde_json::Value>().await.unwrap()
        }
    };
    let first = usage(true).await;
    assert_eq!(
        first["total"]["requests"],
        serde_json::json!({"backtest": 1, "analytics": 0, "data": 0}),
        "only the key's creation: {first}"
    );
    assert_eq!(
        first["keys"],
        serde_json::json!([]),
        "the key's 403 is not its use"
    );
    // Answered requests are billed: that `/usage` and a list of tasks.
    let (status, _) = server.get("/backtest/tasks", Some((email, password))).await;
    assert_eq!(status, 200);
    let second = usage(false).await;
    assert_eq!(second["total"]["requests"]["backtest"], 3, "{second}");
    server.stop().await;
}
