//! The worker through the embedded server: results, permanent failures,
//! panics, retries, and redelivery of finished tasks.

use async_trait::async_trait;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{MarketData, codec, layout};
use platform::queue::JobMessage;
use platform::tasks::{NewTask, Task, TaskKind, TaskStatus};
use platform::worker::{JobError, JobHandler, JobRegistry, Progress};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tests::server::{Options, TestServer, eventually, market_dir};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// A real job: statistics of a symbol's daily closes, computed off the reactor.
pub struct CloseStats {
    pub market: Arc<dyn MarketData>,
}

#[async_trait]
impl JobHandler for CloseStats {
    async fn run(&self, task: Task, _progress: Progress) -> Result<Value, JobError> {
        let symbol = task.params["symbol"]
            .as_str()
            .ok_or_else(|| JobError::Permanent("params.symbol is required".into()))?;
        let bars = self.market.daily(symbol).await?;
        tokio::task::spawn_blocking(move || {
            let r = engine::stats::log_returns(&bars.close);
            json!({
                "bars": bars.len(),
                "last_close": bars.close[bars.len() - 1],
                "mean_log_return": engine::stats::mean(&r),
                "annual_vol": engine::stats::std_dev(&r).map(|s| s * 252f64.sqrt()),
            })
        })
        .await
        .map_err(|e| JobError::Permanent(e.to_string()))
    }
}

struct Fails;
#[async_trait]
impl JobHandler for Fails {
    async fn run(&self, _: Task, _: Progress) -> Result<Value, JobError> {
        Err(JobError::Permanent(
            "pattern 'zigzag' is not a predefined pattern".into(),
        ))
    }
}

struct Panics;
#[async_trait]
impl JobHandler for Panics {
    async fn run(&self, _: Task, _: Progress) -> Result<Value, JobError> {
        panic!("engine bug")
    }
}

/// Fails with a retryable error the first time, then succeeds.
struct Flaky(Arc<AtomicUsize>);
#[async_trait]
impl JobHandler for Flaky {
    async fn run(&self, task: Task, _progress: Progress) -> Result<Value, JobError> {
        if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
            return Err(JobError::Retryable("market data is unavailable".into()));
        }
        Ok(
            json!({ "code": 200, "msg": "Finish Scanner trader!", "data": { "attempt": task.attempts } }),
        )
    }
}

/// Fails with a retryable error every time.
struct Unavailable(Arc<AtomicUsize>);
#[async_trait]
impl JobHandler for Unavailable {
    async fn run(&self, _: Task, _: Progress) -> Result<Value, JobError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(JobError::Retryable(
            "dispatch failure: connection refused (os error 111)".into(),
        ))
    }
}

/// Reports 40%, holds until told to go on, then finishes.
struct Halfway(Arc<tokio::sync::Notify>);
#[async_trait]
impl JobHandler for Halfway {
    async fn run(&self, _: Task, progress: Progress) -> Result<Value, JobError> {
        progress.steps(2, 5);
        self.0.notified().await;
        Ok(
            json!({"code": 200, "msg": "Found matching patterns!", "data": {"count": 0, "patterns": []}}),
        )
    }
}

pub fn registry_with_stats(market: Arc<dyn MarketData>) -> JobRegistry {
    let mut r = JobRegistry::default();
    r.register(TaskKind::StrategyBacktest, Arc::new(CloseStats { market }));
    r
}

pub async fn submit(s: &TestServer, owner: &str, kind: TaskKind, params: Value) -> Task {
    let t = s
        .state
        .tasks
        .create(NewTask {
            owner: owner.into(),
            kind,
            params,
        })
        .await
        .unwrap();
    s.state
        .queue
        .enqueue(JobMessage {
            task_id: t.id,
            kind,
            owner: None,
            trace: None,
        })
        .await
        .unwrap();
    t
}

pub async fn wait_finished(s: &TestServer, id: uuid::Uuid, timeout: Duration) -> Task {
    let store = s.state.tasks.clone();
    let finished = eventually(timeout, || {
        let store = store.clone();
        async move {
            store
                .get(id)
                .await
                .unwrap()
                .is_some_and(|t| t.status.is_finished())
        }
    })
    .await;
    let t = s.state.tasks.get(id).await.unwrap().unwrap();
    assert!(finished, "task {id} did not finish: {t:?}");
    t
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_succeed_fail_panic_and_retry() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let flaky_calls = calls.clone();
    let down = Arc::new(AtomicUsize::new(0));
    let down_calls = down.clone();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.registry = Arc::new(move |state| {
        let mut r = registry_with_stats(state.market.clone());
        r.register(TaskKind::CpmScan, Arc::new(Fails));
        r.register(TaskKind::CpmBacktest, Arc::new(Panics));
        r.register(
            TaskKind::ScannerBacktest,
            Arc::new(Flaky(flaky_calls.clone())),
        );
        r.register(
            TaskKind::BatchBacktest,
            Arc::new(Unavailable(down_calls.clone())),
        );
        r
    });
    let s = TestServer::start(opts).await;

    // Success: the stored result equals statistics computed here from the file.
    let t = submit(
        &s,
        DEMO_EMAIL,
        TaskKind::StrategyBacktest,
        json!({"symbol": "SPX", "name": "stats"}),
    )
    .await;
    let done = wait_finished(&s, t.id, Duration::from_secs(20)).await;
    assert_eq!((done.status, done.attempts), (TaskStatus::Success, 1));
    let file = std::fs::read(market_dir().join(layout::daily_prices("SPX"))).unwrap();
    let bars = codec::batch_to_bars(&codec::from_parquet(file.into()).unwrap()).unwrap();
    let r = engine::stats::log_returns(&bars.close);
    let result = done.result.clone().unwrap();
    assert_eq!(result["bars"], json!(bars.len()));
    assert_eq!(result["last_close"], json!(bars.close[bars.len() - 1]));
    let vol = engine::stats::std_dev(&r).unwrap() * 252f64.sqrt();
    assert!((result["annual_vol"].as_f64().unwrap() - vol).abs() < 1e-12);
    let (status, body) = s.get(&format!("/backtest/status/{}", t.id), DEMO).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("SUCCESS")));
    assert_eq!(body["result"], result);

    // A job for a symbol that does not exist fails with a message a user can act on.
    let t = submit(
        &s,
        DEMO_EMAIL,
        TaskKind::StrategyBacktest,
        json!({"symbol": "ZZZZ"}),
    )
    .await;
    let failed = wait_finished(&s, t.id, Duration::from_secs(20)).await;
    assert_eq!(
        (failed.status, failed.error.as_deref()),
        (TaskStatus::Failed, Some("symbol 'ZZZZ' not found"))
    );
    let (_, body) = s.get(&format!("/backtest/status/{}", t.id), DEMO).await;
    assert_eq!(body["result"], json!({"error": "symbol 'ZZZZ' not found"}));

    let t = submit(&s, DEMO_EMAIL, TaskKind::CpmScan, json!({"symbol": "SPX"})).await;
    let failed = wait_finished(&s, t.id, Duration::from_secs(20)).await;
    assert_eq!(
        failed.error.as_deref(),
        Some("pattern 'zigzag' is not a predefined pattern")
    );

    let t = submit(
        &s,
        DEMO_EMAIL,
        TaskKind::CpmBacktest,
        json!({"symbol": "SPX"}),
    )
    .await;
    let failed = wait_finished(&s, t.id, Duration::from_secs(20)).await;
    assert_eq!(
        (failed.status, failed.error.as_deref()),
        (
            TaskStatus::Failed,
            Some("internal error while running the task")
        )
    );
    assert_eq!(
        s.get("/health", None).await.0,
        200,
        "a panicking job does not take the server down"
    );

    let t = submit(
        &s,
        DEMO_EMAIL,
        TaskKind::ScannerBacktest,
        json!({"name": "flaky", "find_type": "stock"}),
    )
    .await;
    let done = wait_finished(&s, t.id, Duration::from_secs(20)).await;
    assert_eq!(
        (done.status, done.attempts),
        (TaskStatus::Success, 2),
        "retried after a retryable error"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let (_, body) = s
        .get(&format!("/smart-scanner-backtest/status/{}", t.id), DEMO)
        .await;
    assert_eq!(
        body["result"],
        json!({"code": 200, "msg": "Finish Scanner trader!", "data": {"attempt": 2}, "task_id": t.id})
    );

    // A job whose dependency stays down ends FAILED on its last attempt
    // (not RUNNING forever), with a reason its owner can read and no
    // detail of the failure.
    let down_task = submit(&s, DEMO_EMAIL, TaskKind::BatchBacktest, json!({})).await;
    let failed = wait_finished(&s, down_task.id, Duration::from_secs(30)).await;
    assert_eq!(
        (failed.status, failed.attempts, failed.error.as_deref()),
        (
            TaskStatus::Failed,
            3,
            Some(
                "a service the task needs was unavailable on each of its 3 attempts; submit it again"
            )
        )
    );
    assert_eq!(down.load(Ordering::SeqCst), 3);

    // Redelivering a finished task's message changes nothing: the step
    // each worker runs per message acknowledges it without running the
    // handler (awaited here, not waited for).
    let deps = platform::worker::WorkerDeps {
        tasks: s.state.tasks.clone(),
        handlers: Arc::new({
            let mut r = JobRegistry::default();
            r.register(TaskKind::ScannerBacktest, Arc::new(Flaky(calls.clone())));
            r
        }),
        lease: chrono::TimeDelta::minutes(15),
        max_attempts: 3,
        stall: std::time::Duration::from_secs(15 * 60),
        after: None,
        metering: s.state.metering.clone(),
        queue: s.state.queue.clone(),
        count_ends: false,
    };
    let redelivered = JobMessage {
        task_id: t.id,
        kind: TaskKind::ScannerBacktest,
        owner: None,
        trace: None,
    };
    assert_eq!(
        platform::worker::run_job(&deps, &redelivered)
            .await
            .unwrap(),
        platform::worker::Disposition::Done
    );
    assert_eq!(s.state.tasks.get(t.id).await.unwrap().unwrap(), done);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kind_without_a_handler_fails_clearly() {
    // A deployment whose workers serve pattern scans only.
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.registry = Arc::new(|state: &api::AppState| {
        let mut r = JobRegistry::default();
        r.register(
            TaskKind::CpmScan,
            Arc::new(services::analytics::cpm::CpmJob {
                market: state.market.clone(),
                mode: services::analytics::cpm::requests::Mode::Scan,
            }),
        );
        r
    });
    let s = TestServer::start(opts).await;
    let t = submit(&s, DEMO_EMAIL, TaskKind::ScannerBacktest, json!({})).await;
    let failed = wait_finished(&s, t.id, Duration::from_secs(20)).await;
    assert_eq!(
        failed.error.as_deref(),
        Some("task kind 'scanner_backtest' is not served by this deployment")
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_task_shows_its_progress() {
    let dir = tempfile::tempdir().unwrap();
    let go = Arc::new(tokio::sync::Notify::new());
    let handler = go.clone();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.registry = Arc::new(move |_| {
        let mut r = JobRegistry::default();
        r.register(TaskKind::CpmScan, Arc::new(Halfway(handler.clone())));
        r
    });
    let s = TestServer::start(opts).await;
    let t = submit(&s, DEMO_EMAIL, TaskKind::CpmScan, json!({"symbol": "SPX"})).await;
    let path = format!("/cpm/status/{}", t.id);
    let shown = eventually(Duration::from_secs(10), || async {
        let (_, body) = s.get(&path, DEMO).await;
        body["status"] == "RUNNING" && body["progress"] == 40
    })
    .await;
    assert!(shown, "{}", s.get(&path, DEMO).await.1);
    go.notify_one();
    let done = wait_finished(&s, t.id, Duration::from_secs(10)).await;
    assert_eq!((done.status, done.progress), (TaskStatus::Success, None));
    let (_, body) = s.get(&path, DEMO).await;
    assert!(body.get("progress").is_none(), "{body}");
    s.stop().await;
}

/// A job that never returns and never reports, run by the worker's own
/// step with a 200 ms stall bound over the embedded store: once the bound
/// passes, `run_job` releases the task (PENDING again, the attempt
/// counted), aborts the job (its progress shows it ended) and answers
/// Stalled; the next run claims it as attempt 2 and it succeeds.
#[tokio::test(flavor = "multi_thread")]
async fn a_silent_job_is_released_aborted_and_answered_stalled() {
    struct SilentOnce(Arc<AtomicUsize>);
    #[async_trait]
    impl JobHandler for SilentOnce {
        async fn run(&self, _task: Task, _progress: Progress) -> Result<Value, JobError> {
            if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                std::future::pending::<()>().await;
            }
            Ok(json!({"attempt": 2}))
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.workers = 0;
    let s = TestServer::start(opts).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let stall = Duration::from_millis(200);
    let deps = platform::worker::WorkerDeps {
        tasks: s.state.tasks.clone(),
        handlers: Arc::new({
            let mut r = JobRegistry::default();
            r.register(
                TaskKind::ScannerBacktest,
                Arc::new(SilentOnce(calls.clone())),
            );
            r
        }),
        lease: chrono::TimeDelta::minutes(15),
        max_attempts: 3,
        stall,
        after: None,
        metering: None,
        queue: s.state.queue.clone(),
        count_ends: false,
    };
    let task = s
        .state
        .tasks
        .create(NewTask {
            owner: DEMO_EMAIL.into(),
            kind: TaskKind::ScannerBacktest,
            params: json!({}),
        })
        .await
        .unwrap();
    let message = JobMessage::for_task(&task);
    let progress = Progress::default();
    let started = std::time::Instant::now();
    let done = platform::worker::run_job_watched(&deps, &message, progress.clone())
        .await
        .unwrap();
    assert!(
        matches!(done, platform::worker::Disposition::Stalled(_)),
        "{done:?}"
    );
    assert!(started.elapsed() >= stall);
    let released = s.state.tasks.get(task.id).await.unwrap().unwrap();
    assert_eq!(
        (released.status, released.attempts),
        (TaskStatus::Pending, 1)
    );
    assert!(progress.has_started());
    progress.ended().await;

    let again = platform::worker::run_job(&deps, &message).await.unwrap();
    assert_eq!(again, platform::worker::Disposition::Done);
    let finished = s.state.tasks.get(task.id).await.unwrap().unwrap();
    assert_eq!(
        (finished.status, finished.attempts, finished.result),
        (TaskStatus::Success, 2, Some(json!({"attempt": 2})))
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    s.stop().await;
}
