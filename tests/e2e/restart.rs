//! A restart loses nothing: tasks left PENDING or RUNNING run again and finish once.

use crate::jobs::{registry_with_stats, submit, wait_finished};
use async_trait::async_trait;
use chrono::TimeDelta;
use marketlab::server::DEMO_EMAIL;
use platform::sqlite::Database;
use platform::tasks::{
    Claim, NewTask, SqliteTaskStore, Task, TaskKind, TaskStatus, TaskStore, now,
};
use platform::worker::{JobError, JobHandler, JobRegistry, Progress};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tests::server::{Options, TestServer, eventually};

#[tokio::test(flavor = "multi_thread")]
async fn tasks_left_pending_or_running_by_a_crash_finish_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    // What a crashed process leaves behind: one queued task, one mid-run.
    let (pending, running) = {
        let store = SqliteTaskStore::new(Database::open(&db).unwrap());
        let p = store
            .create(NewTask {
                owner: DEMO_EMAIL.into(),
                kind: TaskKind::StrategyBacktest,
                params: json!({"symbol": "SPX"}),
            })
            .await
            .unwrap();
        let r = store
            .create(NewTask {
                owner: DEMO_EMAIL.into(),
                kind: TaskKind::StrategyBacktest,
                params: json!({"symbol": "IVV"}),
            })
            .await
            .unwrap();
        assert!(matches!(
            store.claim(r.id, now(), TimeDelta::hours(1)).await.unwrap(),
            Claim::Claimed(_)
        ));
        (p, r)
    };
    let mut opts = Options::new(db);
    opts.registry = Arc::new(|state| registry_with_stats(state.market.clone()));
    let s = TestServer::start(opts).await;
    let p = wait_finished(&s, pending.id, Duration::from_secs(20)).await;
    let r = wait_finished(&s, running.id, Duration::from_secs(20)).await;
    assert_eq!((p.status, p.attempts), (TaskStatus::Success, 1));
    assert_eq!(
        (r.status, r.attempts),
        (TaskStatus::Success, 2),
        "the interrupted run counts as an attempt"
    );
    let ivv = s.state.market.daily("IVV").await.unwrap();
    assert_eq!(r.result.unwrap()["bars"], json!(ivv.len()));
    s.stop().await;
}

/// Blocks until the process stops: a job that cannot finish before shutdown.
struct Stuck;
#[async_trait]
impl JobHandler for Stuck {
    async fn run(&self, _: Task, _: Progress) -> Result<Value, JobError> {
        std::future::pending().await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_interrupted_by_shutdown_runs_again_and_finishes_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let mut opts = Options::new(db.clone());
    opts.grace = Duration::from_millis(200);
    opts.registry = Arc::new(|_| {
        let mut r = JobRegistry::default();
        r.register(TaskKind::StrategyBacktest, Arc::new(Stuck));
        r
    });
    let s = TestServer::start(opts).await;
    let t = submit(
        &s,
        DEMO_EMAIL,
        TaskKind::StrategyBacktest,
        json!({"symbol": "SPX"}),
    )
    .await;
    let store = s.state.tasks.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let store = store.clone();
            async move { store.get(t.id).await.unwrap().unwrap().status == TaskStatus::Running }
        })
        .await
    );
    s.stop().await;
    assert_eq!(
        store.get(t.id).await.unwrap().unwrap().status,
        TaskStatus::Running,
        "left running by the stop"
    );

    let mut opts = Options::new(db);
    opts.registry = Arc::new(|state| registry_with_stats(state.market.clone()));
    let s = TestServer::start(opts).await;
    let done = wait_finished(&s, t.id, Duration::from_secs(20)).await;
    assert_eq!((done.status, done.attempts), (TaskStatus::Success, 2));
    assert_eq!(
        done.result.as_ref().unwrap()["bars"],
        json!(s.state.market.daily("SPX").await.unwrap().len())
    );
    // The first attempt can no longer overwrite the result.
    assert_eq!(
        s.state
            .tasks
            .finish(
                t.id,
                platform::tasks::Finished {
                    attempt: 1,
                    outcome: platform::tasks::Outcome::Success(json!("late")),
                    at: now()
                }
            )
            .await
            .unwrap(),
        None
    );
    s.stop().await;
}
