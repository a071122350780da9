//! Task store port: asynchronous jobs (backtests, pattern scans) and their results.
//!
//! Every status change is conditional on the state the caller last saw, so two
//! workers can never both run or both finish a task, on SQLite or DynamoDB alike.

mod damage;
pub mod finishes;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use damage::{DAMAGED, Damage, Field, TaskReader, damaged, unreadable_id};

#[cfg(feature = "sqlite")]
pub use sqlite::SqliteTaskStore;

use crate::{PortError, PortResult};
use async_trait::async_trait;
use chrono::{NaiveDateTime, TimeDelta};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// What a task computes; the worker dispatches on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    StrategyBacktest,
    CpmBacktest,
    CpmScan,
    ScannerBacktest,
    /// A universe traded from one pool of cash (`POST /backtest/portfolio`).
    PortfolioBacktest,
    /// A batch of strategy backtests: its job fans the batch out in chunks.
    BatchBacktest,
    /// One chunk of a batch: its strategies' rows are its result.
    BatchChunk,
}

impl TaskKind {
    pub const ALL: [TaskKind; 7] = [
        TaskKind::StrategyBacktest,
        TaskKind::CpmBacktest,
        TaskKind::CpmScan,
        TaskKind::ScannerBacktest,
        TaskKind::PortfolioBacktest,
        TaskKind::BatchBacktest,
        TaskKind::BatchChunk,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::StrategyBacktest => "strategy_backtest",
            TaskKind::CpmBacktest => "cpm_backtest",
            TaskKind::CpmScan => "cpm_scan",
            TaskKind::ScannerBacktest => "scanner_backtest",
            TaskKind::PortfolioBacktest => "portfolio_backtest",
            TaskKind::BatchBacktest => "batch_backtest",
            TaskKind::BatchChunk => "batch_chunk",
        }
    }
}

impl fmt::Display for TaskKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TaskKind {
    type Err = PortError;
    fn from_str(s: &str) -> Result<Self, PortError> {
        TaskKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| PortError::Invalid(format!("unknown task kind '{s}'")))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TaskStatus {
    Pending,
    Running,
    Success,
    Failed,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "PENDING",
            TaskStatus::Running => "RUNNING",
            TaskStatus::Success => "SUCCESS",
            TaskStatus::Failed => "FAILED",
        }
    }

    pub fn is_finished(self) -> bool {
        matches!(self, TaskStatus::Success | TaskStatus::Failed)
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TaskStatus {
    type Err = PortError;
    fn from_str(s: &str) -> Result<Self, PortError> {
        match s.to_ascii_uppercase().as_str() {
            "PENDING" => Ok(TaskStatus::Pending),
            "RUNNING" => Ok(TaskStatus::Running),
            "SUCCESS" => Ok(TaskStatus::Success),
            "FAILED" => Ok(TaskStatus::Failed),
            _ => Err(PortError::Invalid(format!(
                "unknown status '{s}' (expected PENDING, RUNNING, SUCCESS or FAILED)"
            ))),
        }
    }
}

/// A stored task. Times are UTC with microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: Uuid,
    pub owner: String,
    pub kind: TaskKind,
    pub status: TaskStatus,
    pub params: Value,
    pub result: Option<Value>,
    pub error: Option<String>,
    /// How many times a worker has claimed the task.
    pub attempts: u32,
    pub created_at: NaiveDateTime,
    pub started_at: Option<NaiveDateTime>,
    pub finished_at: Option<NaiveDateTime>,
    /// A RUNNING task whose lease has passed may be claimed again.
    pub lease_until: Option<NaiveDateTime>,
    /// How far a RUNNING job has come, 0-100, when its job reports it.
    pub progress: Option<u8>,
    /// What of the stored task could not be read: it then reads as FAILED
    /// with the damage in `error`, what could not be read at a stand-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damage: Option<Damage>,
}

impl Task {
    /// Whether the task is of one of `kinds`; a task whose kind cannot be
    /// read is of every kind, so each of its owner's routes shows it FAILED.
    pub fn is_of(&self, kinds: &[TaskKind]) -> bool {
        kinds.contains(&self.kind) || self.damage.as_ref().is_some_and(|d| d.kind_unread)
    }

    /// Whether `owner` may read the task: never when its owner cannot be read.
    pub fn owned_by(&self, owner: &str) -> bool {
        self.owner == owner && !self.damage.as_ref().is_some_and(|d| d.owner_unread)
    }
}

#[derive(Debug, Clone)]
pub struct NewTask {
    pub owner: String,
    pub kind: TaskKind,
    pub params: Value,
}

impl NewTask {
    /// The task as every store first records it: a fresh id, PENDING, no attempts.
    pub fn into_pending(self) -> Task {
        Task {
            id: Uuid::new_v4(),
            owner: self.owner,
            kind: self.kind,
            status: TaskStatus::Pending,
            params: self.params,
            result: None,
            error: None,
            attempts: 0,
            created_at: now(),
            started_at: None,
            finished_at: None,
            lease_until: None,
            progress: None,
            damage: None,
        }
    }
}

/// How a claimed attempt ended, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub attempt: u32,
    pub outcome: Outcome,
    pub at: NaiveDateTime,
}

/// A window of a listing: at most `limit` tasks, after the first `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub limit: u32,
    pub offset: u32,
}

impl Page {
    pub const fn new(limit: u32, offset: u32) -> Page {
        Page { limit, offset }
    }
}

/// Filters of a task listing; empty `kinds` means every kind.
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    pub kinds: Vec<TaskKind>,
    pub status: Option<TaskStatus>,
}

impl TaskFilter {
    pub fn matches(&self, t: &Task) -> bool {
        (self.kinds.is_empty() || t.is_of(&self.kinds)) && self.status.is_none_or(|s| s == t.status)
    }
}

/// One page of an owner's tasks, newest first, with the total matching count.
#[derive(Debug, Clone)]
pub struct TaskPage {
    pub tasks: Vec<Task>,
    pub total: u64,
}

/// How long an idempotency key keeps naming the task it first created.
pub const IDEMPOTENCY_WINDOW: TimeDelta = TimeDelta::hours(24);

/// The answer to a create under an idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub enum Created {
    /// A new task, stored together with the key.
    New(Task),
    /// The key was used within [`IDEMPOTENCY_WINDOW`]: the task it created.
    Existing(Task),
}

impl Created {
    pub fn task(&self) -> &Task {
        match self {
            Created::New(t) | Created::Existing(t) => t,
        }
    }
}

/// What a worker ends a task with.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Success(Value),
    Failed(String),
}

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// The task is now RUNNING for this caller, with `attempts` increased.
    /// Boxed: a task with its JSON params is far larger than the other answers.
    Claimed(Box<Task>),
    /// Already SUCCESS or FAILED: nothing to do.
    Finished,
    /// Another worker holds an unexpired lease.
    Busy,
    /// No such task.
    Missing,
}

#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Stores a new PENDING task.
    async fn create(&self, new: NewTask) -> Result<Task, PortError>;

    /// Stores a new PENDING task unless `key` of the same owner created one
    /// within [`IDEMPOTENCY_WINDOW`]; the task and the key are stored
    /// atomically, so a retry after a crash finds the task or nothing.
    async fn create_idempotent(&self, new: NewTask, key: &str) -> Result<Created, PortError>;

    /// Any task by id; only workers and recovery use this. A damaged task
    /// reads FAILED with its damage ([`Task::damage`]), and is logged.
    async fn get(&self, id: Uuid) -> Result<Option<Task>, PortError>;

    /// [`TaskStore::get`] with the result as its stored JSON text, not
    /// parsed (`task.result` is `None`): a batch chunk's rows are read
    /// straight into their own type instead of through JSON values. A
    /// store may leave that text unchecked: its reader treats text that
    /// does not parse as damage.
    async fn get_with_result_text(
        &self,
        id: Uuid,
    ) -> Result<Option<(Task, Option<String>)>, PortError> {
        Ok(self.get(id).await?.map(|mut t| {
            let text = t.result.take().map(|v| v.to_string());
            (t, text)
        }))
    }

    /// Where each task stands (`None` for an unknown id), without reading
    /// parameters or results: progress over many tasks stays cheap. A
    /// status that cannot be read is FAILED (and logged); damage elsewhere
    /// in the task is not seen here.
    async fn statuses(&self, ids: &[Uuid]) -> Result<Vec<Option<TaskStatus>>, PortError> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.push(self.get(*id).await?.map(|t| t.status));
        }
        Ok(out)
    }

    /// An owner's task; another owner's id reads as absent, and so does a
    /// task whose owner cannot be read ([`Task::owned_by`]).
    async fn get_owned(&self, id: Uuid, owner: &str) -> Result<Option<Task>, PortError> {
        Ok(self.get(id).await?.filter(|t| t.owned_by(owner)))
    }

    /// An owner's tasks, newest first. A damaged task is listed FAILED
    /// under every kind filter when its kind cannot be read, and under a
    /// FAILED filter when its status cannot; one without a readable id is
    /// left out with a log line.
    async fn list(&self, owner: &str, filter: &TaskFilter, page: Page) -> PortResult<TaskPage>;

    /// PENDING -> RUNNING, or RUNNING with an expired lease -> RUNNING.
    async fn claim(&self, id: Uuid, now: NaiveDateTime, lease: TimeDelta) -> PortResult<Claim>;

    /// RUNNING (claimed as the attempt) -> SUCCESS or FAILED. `None` when the
    /// task is no longer this attempt's to finish.
    async fn finish(&self, id: Uuid, done: Finished) -> PortResult<Option<Task>>;

    /// RUNNING (claimed as `attempt`) -> PENDING, for a retry. False when the
    /// task is no longer this attempt's.
    async fn release(&self, id: Uuid, attempt: u32) -> Result<bool, PortError>;

    /// Records how far the RUNNING attempt has come (0-100); a claim clears
    /// it. False when the task is no longer this attempt's.
    async fn set_progress(&self, id: Uuid, attempt: u32, percent: u8) -> Result<bool, PortError>;

    /// Moves the RUNNING attempt's lease to `until`: a live job keeps its
    /// task while a crashed one's lease runs out soon after. False when the
    /// task is no longer this attempt's.
    async fn renew(&self, id: Uuid, attempt: u32, until: NaiveDateTime) -> Result<bool, PortError>;

    /// Tasks left PENDING or RUNNING, oldest first, for recovery after a restart.
    async fn unfinished(&self) -> Result<Vec<Task>, PortError>;

    /// Counts the outcome of `child` to `id`: a task's own (`child == id`)
    /// or a batch chunk's to its batch. Counting one child again changes
    /// nothing, so a retried count never counts twice. Read by readers in
    /// other processes ([`TaskStore::ends`]); the task itself is unchanged.
    async fn count_end(&self, id: Uuid, child: Uuid) -> Result<(), PortError>;

    /// [`TaskStore::finish`], then, when this attempt stored the outcome,
    /// the outcome of `id` counted to each of `count_to`
    /// ([`TaskStore::count_end`]).
    /// A store may count before it reads back the task it returns, so a
    /// reader elsewhere hears of the outcome sooner. A count that fails is
    /// logged, not returned: the outcome is stored, and a reader that
    /// missed the count sees it on its next full read.
    async fn finish_counted(
        &self,
        id: Uuid,
        done: Finished,
        count_to: &[Uuid],
    ) -> PortResult<Option<Task>> {
        let stored = self.finish(id, done).await?;
        if stored.is_some() {
            for &to in count_to {
                uncounted(self.count_end(to, id).await, to);
            }
        }
        Ok(stored)
    }

    /// The children whose outcomes are counted to `id` (0 for none or an
    /// unknown id): a long-poll in another process than the worker reads
    /// this one small record often, and the whole task only when it
    /// changed; a batch whose count reaches its chunks has ended.
    async fn ends(&self, id: Uuid) -> Result<u64, PortError>;
}

/// Logs a count of an outcome that failed ([`TaskStore::finish_counted`]).
pub fn uncounted(done: Result<(), PortError>, id: Uuid) {
    if let Err(e) = done {
        tracing::warn!(task_id = %id, error = %e, "outcome not counted");
    }
}

/// The current UTC time truncated to microseconds, the precision every store keeps.
pub fn now() -> NaiveDateTime {
    let t = chrono::Utc::now().naive_utc();
    let micros = t.and_utc().timestamp_micros();
    chrono::DateTime::from_timestamp_micros(micros)
        .expect("in range")
        .naive_utc()
}
