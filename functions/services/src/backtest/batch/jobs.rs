//! A batch on the workers: the job that fans it out in chunks, the job
//! that runs a chunk, and where a batch stands.

use super::super::prepare::{PrepareError, prepare};
use super::{BatchRow, CHUNK, Expanded, expand};
use async_trait::async_trait;
use platform::marketdata::MarketData;
use platform::tasks::Task;
use platform::worker::{JobError, JobHandler, Progress};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// A chunk task's parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChunkParams {
    pub batch: String,
    /// Index of its first strategy in the batch.
    pub first: usize,
    pub strategies: Vec<Value>,
    pub varied: Vec<Map<String, Value>>,
}

/// A chunk task's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChunkResult {
    pub rows: Vec<BatchRow>,
}

/// Runs one strategy of a batch into its row; its failure is the row's error.
async fn run_one(
    market: &dyn MarketData,
    index: usize,
    s: &Value,
    varied: Map<String, Value>,
) -> BatchRow {
    let prepared = match prepare(market, s).await {
        Ok(p) => p,
        Err(PrepareError::Invalid(m)) => return BatchRow::failed(index, varied, m),
        Err(PrepareError::Port(p)) => return BatchRow::failed(index, varied, p.to_string()),
    };
    match super::super::run::execute(market, &prepared).await {
        Ok(v) => BatchRow::ran(index, varied, &v),
        Err(e) => BatchRow::failed(index, varied, e.to_string()),
    }
}

/// Runs every strategy of a batch here, in order (the command line's batch).
pub async fn run_all(market: &dyn MarketData, e: &Expanded, progress: &Progress) -> Vec<BatchRow> {
    let n = e.strategies.len();
    let mut rows = Vec::with_capacity(n);
    for (k, (s, v)) in e.strategies.iter().zip(&e.varied).enumerate() {
        rows.push(run_one(market, k, s, v.clone()).await);
        progress.steps(k + 1, n);
    }
    rows
}

/// Runs batch chunks on the workers.
pub struct BatchChunkJob {
    pub market: Arc<dyn MarketData>,
}

#[async_trait]
impl JobHandler for BatchChunkJob {
    async fn run(&self, task: Task, progress: Progress) -> Result<Value, JobError> {
        let p: ChunkParams = serde_json::from_value(task.params.clone())
            .map_err(|e| JobError::Permanent(format!("invalid chunk: {e}")))?;
        let n = p.strategies.len();
        let mut rows = Vec::with_capacity(n);
        for (k, (s, v)) in p.strategies.iter().zip(p.varied).enumerate() {
            rows.push(run_one(self.market.as_ref(), p.first + k, s, v).await);
            progress.steps(k + 1, n);
        }
        serde_json::to_value(ChunkResult { rows })
            .map_err(|e| JobError::Permanent(format!("chunk result not serializable: {e}")))
    }
}

/// A batch record's parameters: the request as sent (checked at the submit).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BatchParams {
    pub request: Value,
    pub total: usize,
    /// The grid's paths, in order: the varied columns of the table.
    pub paths: Vec<String>,
}

/// A batch record's result once fanned out.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FannedOut {
    pub chunks: Vec<uuid::Uuid>,
}

/// Fans a batch out on the workers: one chunk task and one queue message per
/// `CHUNK` strategies. Chunks are created under per-batch keys, so a retried
/// fan-out finds them rather than duplicating them.
pub struct BatchJob {
    pub tasks: Arc<dyn platform::tasks::TaskStore>,
    pub queue: Arc<dyn platform::queue::JobQueue>,
}

#[async_trait]
impl JobHandler for BatchJob {
    async fn run(&self, task: Task, _progress: Progress) -> Result<Value, JobError> {
        use platform::queue::JobMessage;
        use platform::tasks::{NewTask, TaskKind};
        let p: BatchParams = serde_json::from_value(task.params.clone())
            .map_err(|e| JobError::Permanent(format!("invalid batch: {e}")))?;
        let e = expand(&p.request, usize::MAX).map_err(|e| match e {
            PrepareError::Invalid(m) => JobError::Permanent(m),
            PrepareError::Port(p) => p.into(),
        })?;
        let mut chunks = Vec::new();
        for (k, (strategies, varied)) in e
            .strategies
            .chunks(CHUNK)
            .zip(e.varied.chunks(CHUNK))
            .enumerate()
        {
            let params = ChunkParams {
                batch: task.id.to_string(),
                first: k * CHUNK,
                strategies: strategies.to_vec(),
                varied: varied.to_vec(),
            };
            let new = NewTask {
                owner: task.owner.clone(),
                kind: TaskKind::BatchChunk,
                params: serde_json::to_value(params)
                    .map_err(|e| JobError::Permanent(format!("chunk not serializable: {e}")))?,
            };
            let created = self
                .tasks
                .create_idempotent(new, &format!("batch:{}:{k}", task.id))
                .await?;
            let chunk = created.task();
            if !chunk.status.is_finished() {
                self.queue
                    .enqueue(JobMessage {
                        task_id: chunk.id,
                        kind: TaskKind::BatchChunk,
                    })
                    .await?;
            }
            chunks.push(chunk.id);
        }
        serde_json::to_value(FannedOut { chunks })
            .map_err(|e| JobError::Permanent(format!("batch result not serializable: {e}")))
    }
}

/// Where a batch stands.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BatchStatus {
    pub batch_id: String,
    pub name: String,
    /// `PENDING` (not fanned out yet), `RUNNING`, `SUCCESS` (every row in)
    /// or `FAILED` (the batch could not be fanned out).
    pub status: &'static str,
    /// Strategies with a row, and all of them.
    pub done: usize,
    pub total: usize,
    /// The grid's paths: the keys of each row's `params`.
    pub paths: Vec<String>,
    /// ISO time with microseconds.
    pub created_at: String,
    /// Why the batch failed, when it did.
    pub error: Option<String>,
    /// One row per strategy in batch order, once `SUCCESS`.
    pub rows: Option<Vec<BatchRow>>,
}

/// A batch's standing from its record and its chunks. A chunk that failed
/// for good gives each of its strategies a row with the chunk's error.
pub async fn status(
    tasks: &dyn platform::tasks::TaskStore,
    record: &Task,
) -> Result<BatchStatus, platform::PortError> {
    use platform::tasks::TaskStatus;
    let p: BatchParams = serde_json::from_value(record.params.clone())
        .map_err(|e| platform::PortError::Internal(format!("batch record: {e}")))?;
    let mut s = BatchStatus {
        batch_id: record.id.to_string(),
        name: p
            .request
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        status: "PENDING",
        done: 0,
        total: p.total,
        paths: p.paths.clone(),
        created_at: record
            .created_at
            .format("%Y-%m-%dT%H:%M:%S%.6f")
            .to_string(),
        error: None,
        rows: None,
    };
    match record.status {
        TaskStatus::Pending | TaskStatus::Running => return Ok(s),
        TaskStatus::Failed => {
            s.status = "FAILED";
            s.error = record.error.clone();
            return Ok(s);
        }
        TaskStatus::Success => {}
    }
    let fanned: FannedOut = serde_json::from_value(record.result.clone().unwrap_or_default())
        .map_err(|e| platform::PortError::Internal(format!("batch record: {e}")))?;
    let mut rows: Vec<BatchRow> = Vec::with_capacity(p.total);
    let mut finished = true;
    for id in fanned.chunks {
        let Some(chunk) = tasks.get(id).await? else {
            finished = false;
            continue;
        };
        match chunk.status {
            TaskStatus::Success => {
                let r: ChunkResult = serde_json::from_value(chunk.result.unwrap_or_default())
                    .map_err(|e| platform::PortError::Internal(format!("chunk result: {e}")))?;
                rows.extend(r.rows);
            }
            TaskStatus::Failed => {
                let c: ChunkParams = serde_json::from_value(chunk.params)
                    .map_err(|e| platform::PortError::Internal(format!("chunk: {e}")))?;
                let why = chunk.error.unwrap_or_else(|| "the chunk failed".into());
                rows.extend(
                    c.varied
                        .into_iter()
                        .enumerate()
                        .map(|(k, v)| BatchRow::failed(c.first + k, v, why.clone())),
                );
            }
            _ => finished = false,
        }
    }
    s.done = rows.len();
    if finished && rows.len() == p.total {
        rows.sort_by_key(|r| r.index);
        s.status = "SUCCESS";
        s.rows = Some(rows);
    } else {
        s.status = "RUNNING";
    }
    Ok(s)
}
