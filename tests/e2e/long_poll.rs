//! Long-polled status reads (`?wait=N`): answered the moment the embedded
//! worker stores the outcome, or with the current state when the time is
//! up; a worker in another process (no notice) is seen on the next re-read.

use crate::jobs::submit;
use async_trait::async_trait;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::tasks::{Claim, Finished, NewTask, Outcome, Task, TaskKind, now};
use platform::worker::{JobError, JobHandler, JobRegistry, Progress};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// A job that takes its task's `ms` and notes when it returned.
struct Sleeps(Arc<Mutex<Vec<Instant>>>);

#[async_trait]
impl JobHandler for Sleeps {
    async fn run(&self, task: Task, _: Progress) -> Result<Value, JobError> {
        let ms = task.params["ms"].as_u64().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        self.0.lock().unwrap().push(Instant::now());
        Ok(json!({"slept_ms": ms}))
    }
}

/// A job held until the test lets it go: its end is an event, not a time.
struct Held(Arc<tokio::sync::Semaphore>);

#[async_trait]
impl JobHandler for Held {
    async fn run(&self, _: Task, _: Progress) -> Result<Value, JobError> {
        self.0
            .acquire()
            .await
            .expect("the gate stays open")
            .forget();
        Ok(json!({"held": true}))
    }
}

/// A server whose backtests run until `gate` lets one go.
async fn held_server(gate: Arc<tokio::sync::Semaphore>) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.registry = Arc::new(move |_| {
        let mut r = JobRegistry::default();
        r.register(TaskKind::StrategyBacktest, Arc::new(Held(gate.clone())));
        r
    });
    (TestServer::start(opts).await, dir)
}

async fn server_rereading(
    returned: Arc<Mutex<Vec<Instant>>>,
    reread: Duration,
) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.limits.long_poll_reread = reread;
    opts.registry = Arc::new(move |_| {
        let mut r = JobRegistry::default();
        for kind in [
            TaskKind::StrategyBacktest,
            TaskKind::CpmScan,
            TaskKind::ScannerBacktest,
        ] {
            r.register(kind, Arc::new(Sleeps(returned.clone())));
        }
        r
    });
    (TestServer::start(opts).await, dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_poll_answers_when_the_task_ends_on_every_status_operation() {
    // Re-reads 15 s apart: an answer before then came from the worker's
    // notice, however loaded the machine.
    let returned = Arc::new(Mutex::new(Vec::new()));
    let (s, _dir) = server_rereading(returned.clone(), Duration::from_secs(15)).await;
    for (kind, path) in [
        (TaskKind::StrategyBacktest, "/backtest/status"),
        (TaskKind::CpmScan, "/cpm/status"),
        (TaskKind::ScannerBacktest, "/smart-scanner-backtest/status"),
    ] {
        returned.lock().unwrap().clear();
        let t = submit(&s, DEMO_EMAIL, kind, json!({"ms": 300})).await;
        let t0 = Instant::now();
        let (status, body) = s.get(&format!("{path}/{}?wait=20", t.id), DEMO).await;
        let answered = Instant::now();
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("SUCCESS")),
            "{path}: {body}"
        );
        let ended = returned.lock().unwrap()[0];
        assert!(answered - t0 >= Duration::from_millis(300), "{path}");
        // The job's return, the outcome's write and the answer: far sooner
        // than the next re-read (50 ms is typical; 5 s leaves room for load).
        let late = answered - ended;
        assert!(
            late < Duration::from_secs(5),
            "{path}: answered {late:?} after the job ended"
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_poll_ends_at_its_wait_and_refuses_a_bad_one() {
    // The task runs until the test lets it end: a long-poll that answers
    // while it runs ended at its own wait.
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (s, _dir) = held_server(gate.clone()).await;
    let t = submit(&s, DEMO_EMAIL, TaskKind::StrategyBacktest, json!({})).await;
    let t0 = Instant::now();
    let (status, body) = s
        .get(&format!("/backtest/status/{}?wait=0.4", t.id), DEMO)
        .await;
    let took = t0.elapsed();
    assert_eq!(status, 200);
    assert!(
        matches!(body["status"].as_str(), Some("PENDING" | "RUNNING")),
        "{body}"
    );
    // At its 0.4 s, not at the cap's 20 s.
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(20),
        "{took:?}"
    );
    for bad in ["-1", "soon", "NaN"] {
        let (status, body) = s
            .get(&format!("/backtest/status/{}?wait={bad}", t.id), DEMO)
            .await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(
            body["detail"].as_str().unwrap().contains("'wait'"),
            "{body}"
        );
    }
    let (status, body) = s.get(&format!("/cpm/status/{}?wait=x", t.id), DEMO).await;
    assert_eq!((status, body["code"].as_i64()), (400, Some(400)), "{body}");
    // Another tenant's task is 404 at once, however long it asks to wait.
    s.add_account("eve@example.test", "eve-password", "pro")
        .await;
    let t0 = Instant::now();
    let (status, _) = s
        .get(
            &format!("/backtest/status/{}?wait=20", t.id),
            Some(("eve@example.test", "eve-password")),
        )
        .await;
    assert_eq!(status, 404);
    assert!(t0.elapsed() < Duration::from_secs(1));
    // A wait above the cap (20 s) is taken as the cap, and ends with the task.
    gate.add_permits(1);
    let (_, body) = s
        .get(&format!("/backtest/status/{}?wait=600", t.id), DEMO)
        .await;
    assert_eq!(body["status"], "SUCCESS", "{body}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_end_written_by_another_process_is_seen_on_the_next_read() {
    // No worker here: the task ends through the store alone, as one written
    // by a worker elsewhere (the AWS deployment) would, with no notice.
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.workers = 0;
    let s = TestServer::start(opts).await;
    let t = s
        .state
        .tasks
        .create(NewTask {
            owner: DEMO_EMAIL.into(),
            kind: TaskKind::CpmScan,
            params: json!({}),
        })
        .await
        .unwrap();
    let (tasks, polls) = (s.state.tasks.clone(), s.state.long_polls.clone());
    let ended = tokio::spawn(async move {
        // Ended once the long-poll below is waiting on it.
        let waiting = eventually(Duration::from_secs(30), || async {
            polls.in_use(DEMO_EMAIL).0 == 1
        })
        .await;
        assert!(waiting, "the long-poll never started");
        let Claim::Claimed(c) = tasks
            .claim(t.id, now(), chrono::TimeDelta::minutes(1))
            .await
            .unwrap()
        else {
            panic!("claimed")
        };
        let done = Finished {
            attempt: c.attempts,
            outcome: Outcome::Success(json!({"code": 200})),
            at: now(),
        };
        tasks.finish(t.id, done).await.unwrap();
        Instant::now()
    });
    let (status, body) = s.get(&format!("/cpm/status/{}?wait=20", t.id), DEMO).await;
    let answered = Instant::now();
    let ended = ended.await.unwrap();
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("SUCCESS")),
        "{body}"
    );
    // Read again every 2 s: seen long before the wait's 20 s.
    assert!(
        answered - ended < Duration::from_secs(10),
        "{:?}",
        answered - ended
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn many_long_polls_on_one_task_all_answer_at_its_end_and_past_the_share_are_refused() {
    // The task ends when the test lets it: once every poll past the share
    // has been refused (so the share is held), however slowly they arrive.
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (s, _dir) = held_server(gate.clone()).await;
    let t = submit(&s, DEMO_EMAIL, TaskKind::StrategyBacktest, json!({})).await;
    let share = api::state::LONG_POLLS.per_tenant;
    let past = 20;
    let http = reqwest::Client::new();
    let (refused_tx, mut refused_rx) = tokio::sync::mpsc::unbounded_channel();
    let polls: Vec<_> = (0..share + past)
        .map(|_| {
            let req = http
                .get(s.url(&format!("/backtest/status/{}?wait=15", t.id)))
                .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
            let refused = refused_tx.clone();
            tokio::spawn(async move {
                let r = req.send().await.unwrap();
                let (status, headers) = (r.status().as_u16(), r.headers().clone());
                if status != 200 {
                    let _ = refused.send(());
                }
                (status, headers, r.json::<Value>().await.unwrap())
            })
        })
        .collect();
    for _ in 0..past {
        refused_rx
            .recv()
            .await
            .expect("a poll past the share is refused");
    }
    let t0 = Instant::now();
    gate.add_permits(1);
    let answers: Vec<_> = futures::future::join_all(polls)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    // At the task's end, not at their 15 s wait.
    assert!(t0.elapsed() < Duration::from_secs(14), "{:?}", t0.elapsed());
    let ended = answers
        .iter()
        .filter(|(st, _, body)| *st == 200 && body["status"] == "SUCCESS")
        .count();
    assert_eq!(ended, share, "the tenant's share waited to the end");
    for (status, headers, body) in answers.iter().filter(|a| a.0 != 200) {
        assert_eq!(*status, 429, "{body}");
        assert_eq!(headers["retry-after"], "1");
        assert_eq!(headers["connection"], "close");
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .contains("long-polls running or waiting, its share"),
            "{body}"
        );
    }
    s.stop().await;
}

/// Submits a backtest with `prefer` as its `Prefer` header, under `key`.
async fn submit_preferring(s: &TestServer, prefer: Option<&str>, key: &str) -> reqwest::Response {
    let body = json!({
        "symbol": "SPX", "start_date": "2015-01-01", "risk_control": "//",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "SMA", "params": {"period": 10}}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": 20}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "SMA", "params": {"period": 10}}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": 20}}}
    });
    let mut req = reqwest::Client::new()
        .post(s.url("/backtest/start_backtest"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .header("idempotency-key", key)
        .json(&body);
    if let Some(p) = prefer {
        req = req.header("prefer", p);
    }
    req.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_submit_preferring_to_wait_answers_with_the_ended_task_or_as_queued() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (s, _dir) = held_server(gate.clone()).await;

    // Held: not ended within its wait, so queued as without the preference.
    let r = submit_preferring(&s, Some("wait=0.2"), "held").await;
    assert_eq!(r.status().as_u16(), 202);
    assert!(r.headers().get("preference-applied").is_none());
    let held: Value = r.json().await.unwrap();
    let held_id = held["task_id"].as_str().unwrap().to_string();

    // With the tenant's long-poll places all taken, the submit does not
    // wait at all: it answers as queued at once (it is not refused).
    let share = api::state::LONG_POLLS.per_tenant;
    let polls: Vec<_> = (0..share)
        .map(|_| {
            let req = reqwest::Client::new()
                .get(s.url(&format!("/backtest/status/{held_id}?wait=15")))
                .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
            tokio::spawn(async move { req.send().await.unwrap().status().as_u16() })
        })
        .collect();
    let places = s.state.long_polls.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let places = places.clone();
            async move { places.in_use(DEMO_EMAIL).0 == share }
        })
        .await,
        "the polls hold the tenant's places"
    );
    let t0 = Instant::now();
    let r = submit_preferring(&s, Some("wait=15"), "no-place").await;
    assert_eq!(r.status().as_u16(), 202);
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());

    // Let every job end (the two held and the next one): the next submit
    // comes back finished, its record as the status read gives it.
    gate.add_permits(3);
    for poll in polls {
        assert_eq!(poll.await.unwrap(), 200);
    }
    let r = submit_preferring(&s, Some("respond-async, wait=15"), "quick").await;
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["preference-applied"], "wait=15");
    let record: Value = r.json().await.unwrap();
    assert_eq!(record["status"], "SUCCESS");
    assert_eq!(record["result"], json!({"held": true}));
    let id = record["task_id"].as_str().unwrap();
    let (status, read) = s.get(&format!("/backtest/status/{id}"), DEMO).await;
    assert_eq!(status, 200);
    assert_eq!(read, record);

    // Sent again under its key: the same task, ended, marked a replay;
    // without the preference, the 202 it always was.
    let again = submit_preferring(&s, Some("wait=15"), "quick").await;
    assert_eq!(again.status().as_u16(), 200);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.json::<Value>().await.unwrap()["task_id"], json!(id));
    let plain = submit_preferring(&s, None, "quick").await;
    assert_eq!(plain.status().as_u16(), 202);
    assert_eq!(plain.json::<Value>().await.unwrap()["task_id"], json!(id));
    s.stop().await;
}
