//! Running jobs: one `run_job` used by every runtime (embedded pool, SQS batch
//! handler, long-running poller), plus the embedded pool and restart recovery.

use crate::PortError;
use crate::metering::{COMPUTE_PREFIX, MIN_ATTEMPT_COMPUTE_MS, Metering, Reserved};
use crate::queue::{JobMessage, JobQueue, LocalReceiver};
use crate::tasks::{Claim, Finished, Outcome, Task, TaskKind, TaskStore, now};
use crate::telemetry::{self, trace};
use async_trait::async_trait;
use chrono::TimeDelta;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::task::JoinHandle;
use tracing::Instrument;

/// Why a job did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The task can never succeed (bad parameters, missing data): mark it FAILED.
    #[error("{0}")]
    Permanent(String),
    /// A dependency failed; the same job may succeed later.
    #[error("{0}")]
    Retryable(String),
}

impl From<PortError> for JobError {
    fn from(e: PortError) -> Self {
        match e {
            PortError::Unavailable { .. } => JobError::Retryable(crate::error::chain(&e)),
            PortError::Internal { .. } => {
                tracing::error!(error = %crate::error::chain(&e), "job hit an internal error");
                JobError::Permanent("internal error while running the task".into())
            }
            PortError::NotFound(_) | PortError::Invalid(_) => JobError::Permanent(e.to_string()),
        }
    }
}

/// Computes the result of one kind of task. Engine work belongs in
/// `spawn_blocking` inside the handler; a long job tells `progress` how far
/// it has come.
#[async_trait]
pub trait JobHandler: Send + Sync {
    async fn run(&self, task: Task, progress: Progress) -> Result<Value, JobError>;

    /// What the task's submit reserved of its owner's monthly compute,
    /// worked out again from the task; the worker settles each attempt
    /// against it. Tasks no submit reserved for (the default) settle nothing.
    fn reserved(&self, _task: &Task) -> Reserved {
        Reserved::default()
    }
}

mod progress;
pub use progress::Progress;

/// How often a changed progress is written to the task store.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(500);

/// Handlers by task kind; each service group registers its own.
#[derive(Default, Clone)]
pub struct JobRegistry {
    handlers: HashMap<TaskKind, Arc<dyn JobHandler>>,
}

impl JobRegistry {
    pub fn register(&mut self, kind: TaskKind, handler: Arc<dyn JobHandler>) {
        self.handlers.insert(kind, handler);
    }

    pub fn get(&self, kind: TaskKind) -> Option<Arc<dyn JobHandler>> {
        self.handlers.get(&kind).cloned()
    }

    /// Every handler replaced by `wrap` of it (fault drills wrap them all).
    pub fn wrapped(self, wrap: impl Fn(Arc<dyn JobHandler>) -> Arc<dyn JobHandler>) -> Self {
        JobRegistry {
            handlers: self
                .handlers
                .into_iter()
                .map(|(kind, h)| (kind, wrap(h)))
                .collect(),
        }
    }
}

#[derive(Clone)]
pub struct WorkerDeps {
    pub tasks: Arc<dyn TaskStore>,
    pub handlers: Arc<JobRegistry>,
    /// How long a claim protects a RUNNING task from other workers; renewed
    /// every third of it while the job runs and reports.
    pub lease: TimeDelta,
    /// How long a running job may report nothing ([`Progress`]) before it
    /// is taken to have stopped: its task is released for another worker
    /// and `run_job` answers [`Disposition::Stalled`]. A job that may run
    /// longer than this reports progress.
    pub stall: Duration,
    /// Claims after which a task is failed instead of run again.
    pub max_attempts: u32,
    /// Told of every task that ends (SUCCESS or FAILED), after it is stored.
    pub after: Option<Arc<dyn AfterJob>>,
    /// Counts each task's compute and holds its owner to the plan's
    /// concurrent tasks; none runs every task as it comes, uncounted.
    pub metering: Option<Arc<Metering>>,
    /// Where a task waiting for a slot is sent back, delayed.
    pub queue: Arc<dyn JobQueue>,
    /// Whether each outcome is also counted in the store
    /// ([`TaskStore::count_end`]), for long-polls in other processes (the
    /// AWS functions); in one process the announcement reaches them.
    pub count_ends: bool,
}

/// How long a task over its owner's concurrent-task limit waits (PENDING)
/// before it is tried again.
pub const SLOT_WAIT: Duration = Duration::from_secs(2);

/// What a deployment does once a task has ended (a batch's last chunk
/// writes the batch's results file). Its failure is logged, not the task's.
#[async_trait]
pub trait AfterJob: Send + Sync {
    async fn finished(&self, task: &Task);
}

/// Several hooks, told in order (batch files, then webhook events).
pub struct AfterEach(pub Vec<Arc<dyn AfterJob>>);

#[async_trait]
impl AfterJob for AfterEach {
    async fn finished(&self, task: &Task) {
        for after in &self.0 {
            after.finished(task).await;
        }
    }
}

/// What became of a message: acknowledged, or to be delivered again later.
#[derive(Debug, Clone, PartialEq)]
pub enum Disposition {
    Done,
    Retry(String),
    /// The owner's running tasks are at the plan's limit: the task stays
    /// PENDING and its message was sent back for later.
    Waiting,
    /// The job reported nothing for [`WorkerDeps::stall`]: its task was
    /// released (PENDING again, the attempt counted) and the job aborted,
    /// so its message should be given back at once. The job's
    /// [`Progress::ended`] tells whether it has stopped: one stuck on its
    /// thread cannot be.
    Stalled(String),
}

/// Claims the task, runs its handler and records the outcome. Redelivery of a
/// finished task is a no-op; a panic in the handler fails the task, not the
/// worker. With metering, the task first takes one of its owner's slots; with
/// none free it stays PENDING and its message comes back after [`SLOT_WAIT`].
/// The task runs inside a span carrying the trace of the request that
/// queued it (a new one when the message carries none), so every line it
/// logs names that trace, and the messages it queues carry it on.
pub async fn run_job(deps: &WorkerDeps, message: &JobMessage) -> Result<Disposition, PortError> {
    run_job_watched(deps, message, Progress::default()).await
}

/// [`run_job`] with the job's [`Progress`] in the caller's hands: the
/// poller keeps the message hidden only while it reports.
pub async fn run_job_watched(
    deps: &WorkerDeps,
    message: &JobMessage,
    progress: Progress,
) -> Result<Disposition, PortError> {
    let trace = message.trace.map(|t| t.child()).unwrap_or_default();
    let span = tracing::info_span!("task", trace_id = %trace.id(), task_id = %message.task_id, kind = %message.kind);
    telemetry::worker_busy(1.0);
    let start = std::time::SystemTime::now();
    let done = trace::scope(trace, run_slotted(deps, message, progress).instrument(span)).await;
    telemetry::worker_busy(-1.0);
    if matches!(
        done,
        Err(_) | Ok(Disposition::Retry(_) | Disposition::Stalled(_))
    ) {
        telemetry::task(message.kind.as_str(), telemetry::Outcome::Retry);
    }
    if telemetry::otlp::enabled() {
        use telemetry::otlp::{Attr, Kind, Span, record};
        let disposition = match &done {
            Ok(Disposition::Done) => "done",
            Ok(Disposition::Waiting) => "waiting",
            Ok(Disposition::Retry(_)) | Err(_) => "retry",
            Ok(Disposition::Stalled(_)) => "stalled",
        };
        record(Span {
            name: format!("task {}", message.kind.as_str()),
            kind: Kind::Consumer,
            trace,
            start,
            end: std::time::SystemTime::now(),
            attributes: vec![
                ("marketlab.task_id", Attr::Str(message.task_id.to_string())),
                (
                    "marketlab.task_kind",
                    Attr::Str(message.kind.as_str().into()),
                ),
                ("marketlab.disposition", Attr::Str(disposition.into())),
            ],
            error: done.is_err(),
        });
    }
    done
}

async fn run_slotted(
    deps: &WorkerDeps,
    message: &JobMessage,
    progress: Progress,
) -> Result<Disposition, PortError> {
    let Some(metering) = &deps.metering else {
        return run_claimed(deps, message, progress).await;
    };
    let owner = match &message.owner {
        Some(o) => o.clone(),
        None => match deps.tasks.get(message.task_id).await? {
            Some(t) => t.owner,
            None => return Ok(Disposition::Done),
        },
    };
    // The slot is held as long as a job may run silent (the lease is far
    // shorter, renewed while the job runs; the slot is not).
    let hold = TimeDelta::from_std(deps.stall)
        .unwrap_or(deps.lease)
        .max(deps.lease);
    match metering.hold_slot(&owner, message.task_id, hold).await {
        Ok(true) => {}
        Ok(false) => {
            let mut again = message.clone();
            again.trace = trace::current();
            deps.queue.enqueue_after(again, SLOT_WAIT).await?;
            telemetry::task(message.kind.as_str(), telemetry::Outcome::Waiting);
            return Ok(Disposition::Waiting);
        }
        // As with request limits, a limit store that cannot answer must
        // not stop the work: the task runs unlimited, and it is logged.
        Err(e) => {
            tracing::warn!(task_id = %message.task_id, error = %e, "task slots unavailable; running without one");
            return run_claimed(deps, message, progress).await;
        }
    }
    let done = run_claimed(deps, message, progress).await;
    if let Err(e) = metering.release_slot(&owner, message.task_id).await {
        // The hold ends with its lease anyway.
        tracing::warn!(task_id = %message.task_id, error = %e, "task slot not released");
    }
    done
}

async fn run_claimed(
    deps: &WorkerDeps,
    message: &JobMessage,
    progress: Progress,
) -> Result<Disposition, PortError> {
    let task = match deps.tasks.claim(message.task_id, now(), deps.lease).await? {
        Claim::Claimed(t) => *t,
        // A finished task delivered again: its message may have outlived
        // a worker that stored the outcome and stopped before telling the
        // hooks, so they are told again (each is idempotent).
        Claim::Finished => {
            if let Some(after) = &deps.after
                && let Some(task) = deps.tasks.get(message.task_id).await?
            {
                after.finished(&task).await;
            }
            return Ok(Disposition::Done);
        }
        Claim::Missing => return Ok(Disposition::Done),
        Claim::Busy => return Ok(Disposition::Retry("task is running elsewhere".into())),
    };
    let (id, attempt, parent) = (task.id, task.attempts, parent_of(&task));
    let waited = (now() - task.created_at).to_std().unwrap_or_default();
    let failed = |msg: String| Finished {
        attempt,
        outcome: Outcome::Failed(msg),
        at: now(),
    };
    let handler = deps.handlers.get(task.kind);
    if attempt > deps.max_attempts {
        let msg = format!(
            "gave up after {} attempts: the worker running it stopped each time",
            deps.max_attempts
        );
        end(deps, id, parent, failed(msg)).await?;
        telemetry::task(task.kind.as_str(), telemetry::Outcome::Failed);
        // What it reserved for tasks it never created goes back.
        if let (Some(m), Some(h)) = (&deps.metering, &handler) {
            let back = h.reserved(&task).children_ms;
            m.settle_compute(
                &task.owner,
                0,
                back,
                task.created_at.date(),
                chrono::Utc::now(),
            )
            .await;
        }
        return Ok(Disposition::Done);
    }
    let Some(handler) = handler else {
        let msg = format!("task kind '{}' is not served by this deployment", task.kind);
        end(deps, id, parent, failed(msg)).await?;
        telemetry::task(task.kind.as_str(), telemetry::Outcome::Failed);
        return Ok(Disposition::Done);
    };
    tracing::info!(task_id = %id, kind = %task.kind, attempt, "job started");
    progress.beat();
    let (stalled, stall) = tokio::sync::oneshot::channel();
    let reporter = tokio::spawn(
        heartbeat(
            Beat {
                tasks: deps.tasks.clone(),
                id,
                attempt,
                progress: progress.clone(),
                lease: deps.lease,
                stall: deps.stall,
            },
            stalled,
        )
        .instrument(tracing::Span::current()),
    );
    let (owner, kind, created) = (task.owner.clone(), task.kind, task.created_at.date());
    let reserved = handler.reserved(&task);
    let started = std::time::Instant::now();
    let ending = progress.ending();
    let mut running = tokio::spawn(
        trace::scope(trace::current().unwrap_or_default(), async move {
            let _ending = ending;
            handler.run(task, progress).await
        })
        .instrument(tracing::Span::current()),
    );
    // The attempt's compute (its run time), settled once its outcome is
    // written, so its owner sees the outcome without waiting for the ledger.
    let settle = |failed: bool, ran: Duration| {
        let ms = (ran.as_millis() as u64).max(MIN_ATTEMPT_COMPUTE_MS);
        async move {
            if let Some(m) = &deps.metering {
                m.record(&owner, &format!("{COMPUTE_PREFIX}{kind}"), ms);
                // The first attempt settles the task's own reservation; a failure
                // gives back what was reserved for the tasks it would have created.
                let back = if attempt == 1 { reserved.own_ms } else { 0 }
                    + if failed { reserved.children_ms } else { 0 };
                m.settle_compute(&owner, ms, back, created, chrono::Utc::now())
                    .await;
            }
        }
    };
    // The job's end, or its silence: then the heartbeat has released the
    // task, and the job is aborted and left (one stuck on its thread
    // cannot be stopped; its caller decides what becomes of the process).
    let job = tokio::select! {
        job = &mut running => job,
        Ok(silent) = stall => {
            running.abort();
            settle(false, started.elapsed()).await;
            telemetry::task_timing(kind.as_str(), waited, started.elapsed(), None);
            return Ok(Disposition::Stalled(format!(
                "the job reported nothing for {:.1} s",
                silent.as_secs_f64()
            )));
        }
    };
    reporter.abort();
    let ran = started.elapsed();
    let failed = matches!(job, Ok(Err(JobError::Permanent(_))) | Err(_));
    let outcome = match job {
        Ok(Ok(value)) => Outcome::Success(value),
        Ok(Err(JobError::Permanent(msg))) => Outcome::Failed(msg),
        Ok(Err(JobError::Retryable(msg))) if attempt < deps.max_attempts => {
            tracing::warn!(task_id = %id, error = %msg, "job will be retried");
            deps.tasks.release(id, attempt).await?;
            settle(failed, ran).await;
            telemetry::task_timing(kind.as_str(), waited, ran, None);
            return Ok(Disposition::Retry(msg));
        }
        // The last attempt: FAILED now, or the task would stay RUNNING once
        // its message reaches the dead-letter queue. The cause is logged;
        // the owner reads what happened.
        Ok(Err(JobError::Retryable(msg))) => {
            tracing::error!(task_id = %id, error = %msg, attempt, "job failed on its last attempt");
            Outcome::Failed(format!(
                "a service the task needs was unavailable on each of its {attempt} attempts; submit it again"
            ))
        }
        Err(join) => {
            tracing::error!(task_id = %id, error = %join, "job panicked");
            Outcome::Failed("internal error while running the task".into())
        }
    };
    let ok = matches!(outcome, Outcome::Success(_));
    let finished = end(
        deps,
        id,
        parent,
        Finished {
            attempt,
            outcome,
            at: now(),
        },
    )
    .await;
    settle(failed, ran).await;
    telemetry::task_timing(kind.as_str(), waited, ran, Some(attempt));
    telemetry::task(
        kind.as_str(),
        if ok {
            telemetry::Outcome::Success
        } else {
            telemetry::Outcome::Failed
        },
    );
    match finished? {
        Some(task) => {
            tracing::info!(task_id = %id, success = ok, "job finished");
            if let Some(after) = &deps.after {
                after.finished(&task).await;
            }
        }
        None => tracing::warn!(task_id = %id, "job result dropped: task was taken over"),
    }
    Ok(Disposition::Done)
}

/// The batch a chunk belongs to: its readers wait on its chunks' ends.
fn parent_of(task: &Task) -> Option<uuid::Uuid> {
    (task.kind == TaskKind::BatchChunk)
        .then(|| task.params.get("batch").and_then(Value::as_str))
        .flatten()
        .and_then(|s| uuid::Uuid::parse_str(s).ok())
}

/// Stores the task's outcome and, when this attempt still owned it, tells
/// this process's long-polled status reads at once (a chunk's batch too),
/// and counts it for those of other processes when the deployment has them.
async fn end(
    deps: &WorkerDeps,
    id: uuid::Uuid,
    parent: Option<uuid::Uuid>,
    done: Finished,
) -> Result<Option<Task>, PortError> {
    // A chunk's outcome counts to its batch, whose readers wait on it; any
    // other task's to itself.
    let count_to: Vec<uuid::Uuid> = match deps.count_ends {
        true => vec![parent.unwrap_or(id)],
        false => Vec::new(),
    };
    let stored = deps.tasks.finish_counted(id, done, &count_to).await?;
    if stored.is_some() {
        let hub = crate::tasks::finishes::finishes();
        hub.announce(id);
        if let Some(batch) = parent {
            hub.announce(batch);
        }
    }
    Ok(stored)
}

/// What the heartbeat of one attempt watches and writes.
struct Beat {
    tasks: Arc<dyn TaskStore>,
    id: uuid::Uuid,
    attempt: u32,
    progress: Progress,
    lease: TimeDelta,
    stall: Duration,
}

/// While a job runs: copies its progress to its task when it changes, and
/// renews the claim's lease every third of it while the job reports, so a
/// long job keeps its task while one whose worker died is taken over once
/// its lease runs out. A job silent for the stall bound has its task
/// released (logged with the task's id) and `stalled` told how long it was
/// silent. Stops when the attempt no longer owns the task (or when
/// `run_job` aborts it).
async fn heartbeat(b: Beat, stalled: tokio::sync::oneshot::Sender<Duration>) {
    let renew_every = (b.lease / 3).to_std().unwrap_or(PROGRESS_INTERVAL);
    let tick = PROGRESS_INTERVAL.min(renew_every).min(b.stall / 4);
    let mut renewed = tokio::time::Instant::now();
    let mut written = 0;
    loop {
        tokio::time::sleep(tick).await;
        let silent = b.progress.silent_for();
        if silent >= b.stall {
            match b.tasks.release(b.id, b.attempt).await {
                Ok(_) => {
                    tracing::warn!(task_id = %b.id, attempt = b.attempt, silent_s = silent.as_secs_f64(), "job stopped reporting; its task is released for another worker")
                }
                // Its lease, no longer renewed, runs out instead.
                Err(e) => {
                    tracing::warn!(task_id = %b.id, attempt = b.attempt, error = %e, "job stopped reporting; its task not released")
                }
            }
            let _ = stalled.send(silent);
            return;
        }
        if renewed.elapsed() >= renew_every {
            match b.tasks.renew(b.id, b.attempt, now() + b.lease).await {
                Ok(true) => renewed = tokio::time::Instant::now(),
                Ok(false) => return,
                Err(e) => tracing::warn!(task_id = %b.id, error = %e, "lease not renewed"),
            }
        }
        let now = b.progress.get();
        if now == written {
            continue;
        }
        match b.tasks.set_progress(b.id, b.attempt, now).await {
            Ok(true) => written = now,
            Ok(false) => return,
            // A missed update is harmless: the next one carries the latest value.
            Err(e) => tracing::warn!(task_id = %b.id, error = %e, "progress not recorded"),
        }
    }
}

/// Puts tasks left PENDING or RUNNING by a previous process back on the queue.
/// Only for single-process deployments, where no other worker can hold them.
pub async fn recover(tasks: &dyn TaskStore, queue: &dyn JobQueue) -> Result<usize, PortError> {
    let unfinished = tasks.unfinished().await?;
    for t in &unfinished {
        if t.status == crate::tasks::TaskStatus::Running {
            tasks.release(t.id, t.attempts).await?;
        }
        queue.enqueue(JobMessage::for_task(t)).await?;
    }
    Ok(unfinished.len())
}

/// The embedded worker pool: `n` tasks draining the in-process queue. With
/// none, the queue stays open and its messages wait for the next start.
pub struct WorkerPool {
    handles: Vec<JoinHandle<()>>,
    stop: tokio::sync::watch::Sender<bool>,
    _receiver: LocalReceiver,
}

impl WorkerPool {
    pub fn start(
        n: usize,
        receiver: LocalReceiver,
        queue: Arc<dyn JobQueue>,
        deps: WorkerDeps,
    ) -> Self {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let idle = Arc::new(Idle::default());
        let handles = (0..n)
            .map(|_| {
                let (rx, queue, deps) = (receiver.clone(), queue.clone(), deps.clone());
                let mut stopped = stopped.clone();
                let idle = idle.clone();
                tokio::spawn(async move {
                    loop {
                        let msg = tokio::select! {
                            _ = stopped.changed() => break,
                            msg = rx.recv() => match msg { Some(m) => m, None => break },
                        };
                        idle.busy.fetch_add(1, Ordering::SeqCst);
                        let done = run_job(&deps, &msg).await;
                        idle.clone().job_ended();
                        match done {
                            Ok(Disposition::Done | Disposition::Waiting) => {}
                            Ok(Disposition::Retry(_) | Disposition::Stalled(_)) | Err(_) => {
                                // Back off, then deliver again, as a queue's visibility timeout would.
                                let queue = queue.clone();
                                tokio::spawn(async move {
                                    tokio::time::sleep(Duration::from_secs(2)).await;
                                    let _ = queue.enqueue(msg).await;
                                });
                            }
                        }
                    }
                })
            })
            .collect();
        WorkerPool {
            handles,
            stop,
            _receiver: receiver,
        }
    }

    /// Lets each worker finish its current job, then stops it; after `grace`
    /// the rest are aborted. Queued and interrupted tasks stay PENDING or
    /// RUNNING in the store and are recovered on the next start.
    pub async fn shutdown(self, grace: Duration) {
        let _ = self.stop.send(true);
        let aborts: Vec<_> = self.handles.iter().map(|h| h.abort_handle()).collect();
        let all = async {
            for h in self.handles {
                let _ = h.await;
            }
        };
        if tokio::time::timeout(grace, all).await.is_err() {
            tracing::warn!("workers still busy at shutdown; their tasks resume on next start");
            aborts.iter().for_each(|a| a.abort());
        }
    }
}

/// Jobs running in the pool. When the last one ends and none has started
/// for a moment, freed memory is handed back to the system: a burst of
/// large jobs (uploaded bars) would otherwise leave the heaps full of free
/// pages for good.
#[derive(Default)]
struct Idle {
    busy: AtomicUsize,
    scheduled: AtomicBool,
}

/// How long the pool stays idle before its freed memory is handed back.
const IDLE_BEFORE_TRIM: Duration = Duration::from_millis(200);

impl Idle {
    fn job_ended(self: Arc<Self>) {
        if self.busy.fetch_sub(1, Ordering::SeqCst) != 1
            || self.scheduled.swap(true, Ordering::SeqCst)
        {
            return;
        }
        tokio::spawn(async move {
            tokio::time::sleep(IDLE_BEFORE_TRIM).await;
            self.scheduled.store(false, Ordering::SeqCst);
            if self.busy.load(Ordering::SeqCst) == 0 {
                let _ = tokio::task::spawn_blocking(crate::memory::trim).await;
            }
        });
    }
}

/// Resolves on Ctrl-C or SIGTERM: the embedded server and the long-running
/// poller stop on either.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown requested");
}
