//! A submit when what stores or queues tasks fails: a clear 5xx, nothing
//! stored or queued half-way.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::time::Duration;
use tests::server::TestServer;

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

fn simple_strategy() -> Value {
    json!({"symbol": "SPX", "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"}, "rule": {"type_name": ">", "comparison_value": "1"}}}, "exit": {"rule_type": "RiskControlOnly"}})
}

#[tokio::test(flavor = "multi_thread")]
async fn submit_answers_503_while_the_task_store_is_locked() {
    let (s, dir) = TestServer::fresh().await;
    // Warm the credential cache, then take the database's write lock away.
    assert_eq!(s.get("/backtest/tasks", DEMO).await.0, 200);
    let locker = rusqlite::Connection::open(dir.path().join("db.sqlite")).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let (status, v) = s
        .post("/backtest/start_backtest", DEMO, &simple_strategy())
        .await;
    assert_eq!(status, 503, "{v}");
    // What happened, for the client; the cause (SQLite's "database is
    // locked") only in the log, under the request id the answer names.
    let detail = v["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "the task store is unavailable; the task was not queued; retry shortly (request id "
        ),
        "{v}"
    );
    assert!(
        !detail.contains("locked") && !detail.contains("database"),
        "{v}"
    );
    locker.execute_batch("ROLLBACK").unwrap();
    assert_eq!(
        s.get("/backtest/tasks", DEMO).await.1["total"],
        json!(0),
        "nothing was stored or queued"
    );
    assert_eq!(
        s.post("/backtest/start_backtest", DEMO, &simple_strategy())
            .await
            .0,
        202,
        "served again once the store is back"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn submit_answers_500_when_the_queue_refuses_and_leaves_no_orphan() {
    use platform::accounts::{Authenticator, SqliteAccountStore};
    use platform::marketdata::{LocalDir, ParquetMarketData};
    use platform::queue::LocalQueue;
    use platform::sqlite::Database;
    use platform::tasks::SqliteTaskStore;
    use std::sync::Arc;

    let db = Database::in_memory().unwrap();
    let accounts = Arc::new(SqliteAccountStore::new(db.clone()));
    platform::accounts::add_account(accounts.as_ref(), DEMO_EMAIL, DEMO_PASSWORD, "pro", vec![])
        .await
        .unwrap();
    // A queue nobody consumes: every enqueue is refused, as by a broker that is down.
    let (queue, receiver) = LocalQueue::new();
    drop(receiver);
    let state = api::AppState {
        tasks: Arc::new(SqliteTaskStore::new(db)),
        queue: Arc::new(queue),
        market: Arc::new(ParquetMarketData::new(Arc::new(LocalDir::new(
            tests::server::market_dir(),
        )))),
        uploads: platform::uploads::Uploads::new(Arc::new(LocalDir::new(
            tests::server::market_dir(),
        ))),
        scanner: tests::server::scanner_store(tests::server::market_dir()),
        auth: Arc::new(Authenticator::embedded(accounts, Duration::from_secs(60)).unwrap()),
        data_legacy_json: false,
        limits: Default::default(),
        metering: None,
        webhooks: None,
        compute: Default::default(),
        long_polls: api::state::long_polls(&Default::default()),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        axum::serve(listener, api::routes::embedded(&state))
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .into_future(),
    );
    let client = reqwest::Client::new();
    let resp = client
        .post(format!("{base}/backtest/start_backtest"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .json(&simple_strategy())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 500);
    let v: Value = resp.json().await.unwrap();
    assert!(
        v["detail"].as_str().unwrap().contains("message broker"),
        "{v}"
    );
    let list: Value = client
        .get(format!("{base}/backtest/tasks"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["total"], json!(1));
    assert_eq!(
        list["tasks"][0]["status"], "FAILED",
        "the stored task is not left pending forever"
    );
    let _ = tx.send(());
    server.await.unwrap().unwrap();
}
