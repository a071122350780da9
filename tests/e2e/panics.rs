//! A handler that panics answers 500 in its service's envelope, with the
//! request id, and the server goes on serving: the same route, other routes,
//! the same account's cached credentials.

use async_trait::async_trait;
use chrono::{NaiveDateTime, TimeDelta};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::PortResult;
use platform::tasks::{
    Claim, Created, Finished, NewTask, Page, SqliteTaskStore, Task, TaskFilter, TaskPage, TaskStore,
};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use uuid::Uuid;

/// A task store whose listing panics once, as a bug in a port would.
struct PanicsOnce {
    inner: SqliteTaskStore,
    armed: AtomicBool,
}

#[async_trait]
impl TaskStore for PanicsOnce {
    async fn create(&self, new: NewTask) -> PortResult<Task> {
        self.inner.create(new).await
    }
    async fn create_idempotent(&self, new: NewTask, key: &str) -> PortResult<Created> {
        self.inner.create_idempotent(new, key).await
    }
    async fn get(&self, id: Uuid) -> PortResult<Option<Task>> {
        self.inner.get(id).await
    }
    async fn list(&self, owner: &str, filter: &TaskFilter, page: Page) -> PortResult<TaskPage> {
        if self.armed.swap(false, Ordering::SeqCst) {
            panic!("a bug in the task store");
        }
        self.inner.list(owner, filter, page).await
    }
    async fn claim(&self, id: Uuid, now: NaiveDateTime, lease: TimeDelta) -> PortResult<Claim> {
        self.inner.claim(id, now, lease).await
    }
    async fn finish(&self, id: Uuid, done: Finished) -> PortResult<Option<Task>> {
        self.inner.finish(id, done).await
    }
    async fn release(&self, id: Uuid, attempt: u32) -> PortResult<bool> {
        self.inner.release(id, attempt).await
    }
    async fn set_progress(&self, id: Uuid, attempt: u32, percent: u8) -> PortResult<bool> {
        self.inner.set_progress(id, attempt, percent).await
    }
    async fn renew(&self, id: Uuid, attempt: u32, until: NaiveDateTime) -> PortResult<bool> {
        self.inner.renew(id, attempt, until).await
    }
    async fn unfinished(&self) -> PortResult<Vec<Task>> {
        self.inner.unfinished().await
    }
    async fn count_end(&self, id: Uuid, child: Uuid) -> PortResult<()> {
        self.inner.count_end(id, child).await
    }
    async fn ends(&self, id: Uuid) -> PortResult<u64> {
        self.inner.ends(id).await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_handler_that_panics_answers_500_and_the_next_request_is_served() {
    let (queue, _receiver) = platform::queue::LocalQueue::new();
    let tasks = Arc::new(PanicsOnce {
        inner: SqliteTaskStore::new(platform::sqlite::Database::in_memory().unwrap()),
        armed: AtomicBool::new(true),
    });
    let state =
        tests::server::bare_state(tasks, Arc::new(queue), tests::server::market_dir()).await;
    let (base, tx, server) = tests::server::serve_state(&state).await;
    // One connection throughout: the panic does not close it either.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()
        .unwrap();
    let get = |path: &str| {
        client
            .get(format!("{base}{path}"))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
    };
    let first = get("/backtest/tasks").await.unwrap();
    assert_eq!(first.status().as_u16(), 500);
    let id = first.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_string();
    let v: Value = first.json().await.unwrap();
    assert_eq!(
        v["detail"],
        format!("internal server error (request id {id})"),
        "the backtest envelope, the request id, no panic message: {v}"
    );
    let again = get("/backtest/tasks").await.unwrap();
    assert_eq!(again.status().as_u16(), 200, "the same route is served");
    let v: Value = again.json().await.unwrap();
    assert_eq!(v["total"], 0);
    assert_eq!(
        get("/backtest/batches").await.unwrap().status().as_u16(),
        200
    );
    let _ = tx.send(());
    server.await.unwrap().unwrap();
}
