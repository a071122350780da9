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
    set_limits(
        server,
        "backtest",
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
