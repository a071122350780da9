//! A submit when what stores or queues tasks fails: a clear 5xx, nothing
//! stored or queued half-way.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
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
    use platform::queue::LocalQueue;
    use platform::sqlite::Database;
    use platform::tasks::SqliteTaskStore;
    use std::sync::Arc;

    // A queue nobody consumes: every enqueue is refused, as by a broker that is down.
    let (queue, receiver) = LocalQueue::new();
    drop(receiver);
    let tasks = Arc::new(SqliteTaskStore::new(Database::in_memory().unwrap()));
    let state =
        tests::server::bare_state(tasks, Arc::new(queue), tests::server::market_dir()).await;
    let (base, tx, server) = tests::server::serve_state(&state).await;
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
