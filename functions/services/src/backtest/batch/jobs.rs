//! A batch on the workers: the job that fans it out in chunks, the job
//! that runs a chunk, and where a batch stands.

use super::strategies::{Keep, Ran, Strategies, run_strategies};
use super::{BatchRow, CHUNK, ChunkParams, ChunkResult, Expanded, expand};
use async_trait::async_trait;
use platform::marketdata::MarketData;
use platform::returns::ReturnStore;
use platform::tasks::Task;
use platform::worker::{JobError, JobHandler, Progress};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Runs every strategy of a batch here (the command line's batch) as the
/// workers run it: in chunks of [`super::chunk_size`], as many at once as there are
/// cores, each keeping its returns in `returns` under `batch` as a chunk
/// job does, so the statistics that follow are the service's own
/// ([`super::statistics::compute`]). Without `statistics` nothing is kept.
pub async fn run_chunks(
    market: &dyn MarketData,
    e: &Expanded,
    statistics: Option<&super::StatisticsParams>,
    returns: &ReturnStore,
    batch: &str,
    progress: &Progress,
) -> Result<Vec<BatchRow>, JobError> {
    use futures::StreamExt;
    let keep = Keep {
        blocks: statistics.map_or(0, |s| s.blocks),
        raw: statistics.is_some() && !e.same_bars(),
        walk_forward: None,
    };
    let total = e.len();
    let chunk = super::chunk_size(e);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let parallel = std::thread::available_parallelism().map_or(1, usize::from);
    let chunks = futures::stream::iter((0..total).step_by(chunk).map(|first| {
        let done = &done;
        async move {
            let points = first..(first + chunk).min(total);
            let n = points.len();
            let strategies = match &e.base {
                Some(base) if e.portfolio => Strategies::Portfolios {
                    base: base.clone(),
                    first,
                    varied: points.map(|k| e.varied.get(k)).collect(),
                },
                Some(base) => Strategies::Grid {
                    base: base.clone(),
                    first,
                    varied: points.map(|k| e.varied.get(k)).collect(),
                },
                None => Strategies::Listed(
                    points
                        .map(|k| (k, e.strategies[k].clone(), e.varied.get(k)))
                        .collect(),
                ),
            };
            let ran = run_strategies(market, strategies, keep, &Progress::default()).await?;
            if keep.blocks > 0 || keep.raw {
                returns.put(batch, first, ran.returns).await?;
            }
            let finished = done.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
            progress.steps(finished, total);
            Ok::<_, JobError>(ran.rows)
        }
    }))
    .buffered(parallel);
    let mut rows = Vec::with_capacity(total);
    futures::pin_mut!(chunks);
    while let Some(chunk) = chunks.next().await {
        rows.extend(chunk?);
    }
    Ok(rows)
}

/// Runs batch chunks on the workers, keeping their returns for the batch's statistics.
pub struct BatchChunkJob {
    pub market: Arc<dyn MarketData>,
    pub returns: ReturnStore,
}

#[async_trait]
impl JobHandler for BatchChunkJob {
    fn reserved(&self, task: &Task) -> platform::metering::Reserved {
        crate::compute::reserved(task.kind, &task.params, task.created_at.date())
    }

    async fn run(&self, task: Task, progress: Progress) -> Result<Value, JobError> {
        let p: ChunkParams = serde_json::from_value(task.params)
            .map_err(|e| JobError::Permanent(format!("invalid chunk: {e}")))?;
        let (batch, first) = (p.batch.clone(), p.first);
        let keep = Keep {
            blocks: p.blocks,
            raw: p.raw_returns,
            walk_forward: p.walk_forward,
        };
        let started = std::time::Instant::now();
        let Ran {
            rows,
            returns,
            walk,
        } = run_strategies(self.market.as_ref(), p.strategies(), keep, &progress).await?;
        // Kept before the rows are: a finished chunk always has its returns
        // (unless its batch wants no statistics) and its walk-forward picks.
        if keep.blocks > 0 || keep.raw {
            self.returns.put(&batch, first, returns).await?;
        }
        if let Some(w) = &walk {
            super::walk_forward::keep(&self.returns, &batch, first, w).await?;
        }
        platform::telemetry::batch_rows(rows.len(), started.elapsed());
        serde_json::to_value(ChunkResult { rows })
            .map_err(|e| JobError::Permanent(format!("chunk result not serializable: {e}")))
    }
}

/// A batch record's parameters: the request as sent (checked at the submit).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BatchParams {
    pub request: Value,
    pub total: usize,
    /// Strategies per chunk ([`super::chunk_size`]; [`CHUNK`] in records
    /// written before chunks grew with their batch).
    #[serde(default = "chunk")]
    pub chunk: usize,
    /// The grid's paths, in order: the varied columns of the table.
    pub paths: Vec<String>,
    /// The longest of its strategies' estimated engine time
    /// (`crate::compute::strategy_us`).
    #[serde(default)]
    pub strategy_us: u64,
    /// Whether its submit reserved monthly compute for it (the HTTP submit
    /// does; the batch-file inbox does not yet).
    #[serde(default)]
    pub reserved: bool,
    /// The defaults of 2.1 its strategies were given.
    #[serde(default)]
    pub defaults_applied: Map<String, Value>,
    /// What the batch should know before reading its rows.
    #[serde(default)]
    pub warnings: Vec<String>,
}

fn chunk() -> usize {
    CHUNK
}

impl BatchParams {
    pub fn layout(&self) -> super::Layout {
        super::Layout {
            total: self.total,
            chunk: self.chunk,
        }
    }

    /// The rows of chunk `k`.
    pub(super) fn span(&self, k: usize) -> std::ops::Range<usize> {
        let first = k.saturating_mul(self.chunk).min(self.total);
        first..first.saturating_add(self.chunk).min(self.total)
    }

    /// What a damaged batch record whose parameters cannot be read shows:
    /// nothing but its failure.
    fn unread() -> Self {
        BatchParams {
            request: Value::Null,
            total: 0,
            chunk: CHUNK,
            paths: Vec::new(),
            strategy_us: 0,
            reserved: false,
            defaults_applied: Map::new(),
            warnings: Vec::new(),
        }
    }
}

/// A batch record's result once fanned out.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FannedOut {
    pub chunks: Vec<uuid::Uuid>,
}

/// Fans a batch out on the workers: one chunk task and one queue message per
/// `chunk` strategies. Chunks are created under per-batch keys, so a retried
/// fan-out finds them rather than duplicating them.
pub struct BatchJob {
    pub tasks: Arc<dyn platform::tasks::TaskStore>,
    pub queue: Arc<dyn platform::queue::JobQueue>,
}

#[async_trait]
impl JobHandler for BatchJob {
    fn reserved(&self, task: &Task) -> platform::metering::Reserved {
        crate::compute::reserved(task.kind, &task.params, task.created_at.date())
    }

    async fn run(&self, task: Task, _progress: Progress) -> Result<Value, JobError> {
        use platform::tasks::{NewTask, TaskKind};
        let submitter = crate::submit::Submitter {
            tasks: self.tasks.as_ref(),
            queue: self.queue.as_ref(),
            metering: None,
        };
        let p: BatchParams = serde_json::from_value(task.params.clone())
            .map_err(|e| JobError::Permanent(format!("invalid batch: {e}")))?;
        let e = expand(&p.request, usize::MAX)?;
        // No statistics: nothing kept (0 blocks, no raw returns).
        let statistics = super::StatisticsParams::of_request(&p.request);
        let blocks = statistics.map_or(0, |s| s.blocks);
        let walk_forward = super::WalkForwardParams::of_request(&p.request);
        let raw_returns = statistics.is_some() && !e.same_bars();
        let mut chunks = Vec::new();
        for (k, first) in (0..e.len()).step_by(p.chunk.max(1)).enumerate() {
            let count = (first + p.chunk).min(e.len()) - first;
            let (varied, axes) = match &e.varied {
                super::Points::Grid(axes) => (Vec::new(), Some(axes.clone())),
                list => (list.range(first..first + count), None),
            };
            let params = ChunkParams {
                batch: task.id.to_string(),
                first,
                strategies: match e.base {
                    Some(_) => Vec::new(),
                    None => e.strategies[first..first + count].to_vec(),
                },
                base: e.base.clone(),
                varied,
                axes,
                count,
                strategy_us: p.strategy_us,
                reserved: p.reserved,
                blocks,
                walk_forward,
                raw_returns,
                portfolio: e.portfolio,
            };
            let new = NewTask {
                owner: task.owner.clone(),
                kind: TaskKind::BatchChunk,
                params: serde_json::to_value(params)
                    .map_err(|e| JobError::Permanent(format!("chunk not serializable: {e}")))?,
            };
            let chunk = submitter
                .submit_child(new, &format!("batch:{}:{k}", task.id))
                .await?;
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
    /// The defaults of 2.1 applied to at least one of its strategies (the
    /// end date aside), with their values.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub defaults_applied: Map<String, Value>,
    /// Such as strategies run with the default maximum holding.
    pub warnings: Vec<String>,
    /// One row per strategy in batch order, once `SUCCESS`, when asked
    /// for ([`Rows::Read`]). Never part of the status answer: a finished
    /// batch's status stays small whatever its size, and its rows come from
    /// `/backtest/batch/{id}/results`.
    #[serde(skip)]
    pub rows: Option<Vec<BatchRow>>,
    /// The batch's page: the results as a table to sort, open with the same credentials.
    pub report_url: String,
    /// Whether the best row is luck (the Deflated Sharpe Ratio and the
    /// Probability of Backtest Overfitting), once `SUCCESS`, for two or
    /// more strategies.
    pub statistics: Option<super::BatchStatistics>,
    /// The walk-forward analysis, once `SUCCESS`, when the batch asked for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub walk_forward: Option<super::WalkForwardResult>,
}

/// Whether [`status`] reads a finished batch's rows (all its chunks'
/// results: what the results table needs, not its progress).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    Read,
    Skip,
}

/// A batch's standing from its record and its chunks. A chunk that failed
/// for good gives each of its strategies a row with the chunk's error.
/// With `returns`, a finished batch's statistics come too.
pub async fn status(
    tasks: &dyn platform::tasks::TaskStore,
    returns: Option<&ReturnStore>,
    record: &Task,
    read: Rows,
) -> Result<BatchStatus, platform::PortError> {
    status_counted(tasks, returns, record, read, None).await
}

/// [`status`], given the outcomes counted to the batch when the caller has
/// read them (`TaskStore::ends`: its own fan-out's and each chunk's): once
/// they are all counted, the chunks' statuses need no read.
pub async fn status_counted(
    tasks: &dyn platform::tasks::TaskStore,
    returns: Option<&ReturnStore>,
    record: &Task,
    read: Rows,
    counted: Option<u64>,
) -> Result<BatchStatus, platform::PortError> {
    use platform::tasks::TaskStatus;
    let p: BatchParams = match serde_json::from_value(record.params.clone()) {
        Ok(p) => p,
        // Damaged, it reads FAILED with its damage, whatever it lost.
        Err(_) if record.damage.is_some() => BatchParams::unread(),
        Err(e) => return Err(platform::PortError::fault("batch record", e)),
    };
    let mut s = BatchStatus {
        report_url: format!("/backtest/batch/{}/report", record.id),
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
        defaults_applied: p.defaults_applied.clone(),
        warnings: p.warnings.clone(),
        rows: None,
        statistics: None,
        walk_forward: None,
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
        .map_err(|e| platform::PortError::fault("batch record", e))?;
    // Progress from the chunks' statuses alone; their rows are read once
    // every chunk has finished. The fan-out and every chunk counted: all
    // have ended.
    if counted.is_some_and(|n| n > fanned.chunks.len() as u64) {
        s.done = p.total;
    } else {
        let standing = tasks.statuses(&fanned.chunks).await?;
        let size = |k: usize| p.chunk.min(p.total.saturating_sub(k * p.chunk));
        s.done = standing
            .iter()
            .enumerate()
            .filter(|(_, st)| st.is_some_and(TaskStatus::is_finished))
            .map(|(k, _)| size(k))
            .sum();
        if s.done < p.total || standing.iter().any(Option::is_none) {
            s.status = "RUNNING";
            return Ok(s);
        }
    }
    let mut rows: Vec<BatchRow> = Vec::new();
    if read == Rows::Read {
        for (k, id) in fanned.chunks.into_iter().enumerate() {
            rows.extend(chunk_rows(tasks, id, p.span(k)).await?);
        }
    }
    rows.sort_by_key(|r| r.index);
    if let Some(store) = returns {
        if let Some(settings) = super::StatisticsParams::of_request(&p.request) {
            s.statistics = super::statistics::of(store, &s.batch_id, p.layout(), &settings).await?;
        }
        if let Some(w) = super::WalkForwardParams::of_request(&p.request) {
            // The rows' grid values, or the grid's own when they were not read.
            let grid = match read {
                Rows::Read => None,
                Rows::Skip => Some(super::expand(&p.request, usize::MAX).map_err(|e| {
                    platform::PortError::fault("batch record", std::io::Error::other(e.to_string()))
                })?),
            };
            let varied = |k: usize| match &grid {
                Some(g) if k < g.len() => g.varied.get(k),
                Some(_) => Map::new(),
                None => rows.get(k).map(|r| r.params.clone()).unwrap_or_default(),
            };
            s.walk_forward =
                Some(super::walk_forward::of(store, &s.batch_id, p.layout(), &w, varied).await?);
        }
    }
    s.status = "SUCCESS";
    s.rows = (read == Rows::Read).then_some(rows);
    Ok(s)
}

/// A finished chunk's rows: its result's, or one row per strategy with the
/// chunk's error when it failed for good. `span` is the batch's rows the
/// chunk holds: a damaged chunk's own parameters may be gone.
pub(super) async fn chunk_rows(
    tasks: &dyn platform::tasks::TaskStore,
    id: uuid::Uuid,
    span: std::ops::Range<usize>,
) -> Result<Vec<BatchRow>, platform::PortError> {
    let (chunk, result) = chunk_task(tasks, id).await?;
    rows_of(chunk, result, span)
}

/// A finished chunk's task, its result as the stored text.
pub(super) async fn chunk_task(
    tasks: &dyn platform::tasks::TaskStore,
    id: uuid::Uuid,
) -> Result<(Task, Option<String>), platform::PortError> {
    tasks
        .get_with_result_text(id)
        .await?
        .ok_or_else(|| platform::PortError::internal(format!("chunk {id} vanished")))
}

/// A finished chunk's rows from its task and result text ([`chunk_rows`]),
/// read straight into rows (a million rows are 256 chunks of JSON).
pub(super) fn rows_of(
    chunk: Task,
    result: Option<String>,
    span: std::ops::Range<usize>,
) -> Result<Vec<BatchRow>, platform::PortError> {
    use platform::tasks::TaskStatus;
    let mut damaged = chunk.damage.is_some();
    let mut why = chunk.error;
    if chunk.status == TaskStatus::Success {
        match serde_json::from_str::<ChunkResult>(result.as_deref().unwrap_or("null")) {
            Ok(r) => return Ok(r.rows),
            // A store may hand the text over unchecked: damaged, the
            // chunk's rows fail with that said.
            Err(_) => {
                let what = "result is not a chunk's rows";
                tracing::error!(key = %chunk.id, damage = what, "task item damaged: its rows read as failed");
                (damaged, why) = (true, Some(platform::tasks::damaged(what)));
            }
        }
    }
    let why = why.unwrap_or_else(|| "the chunk failed".into());
    Ok(match serde_json::from_value::<ChunkParams>(chunk.params) {
        Ok(mut c) => c
            .varied()
            .into_iter()
            .enumerate()
            .map(|(k, v)| BatchRow::failed(c.first + k, v, why.clone()))
            .collect(),
        // Damaged with its parameters: its rows are known by place alone.
        Err(_) if damaged => span
            .map(|k| BatchRow::failed(k, Map::new(), why.clone()))
            .collect(),
        Err(e) => return Err(platform::PortError::fault("chunk", e)),
    })
}

/// A batch's parameters and chunks once it and every chunk have finished
/// (the rows can be read); `None` before.
pub(super) async fn finished(
    tasks: &dyn platform::tasks::TaskStore,
    record: &Task,
) -> Result<Option<(BatchParams, FannedOut)>, platform::PortError> {
    use platform::tasks::TaskStatus;
    if record.status != TaskStatus::Success {
        return Ok(None);
    }
    let p: BatchParams = serde_json::from_value(record.params.clone())
        .map_err(|e| platform::PortError::fault("batch record", e))?;
    let fanned: FannedOut = serde_json::from_value(record.result.clone().unwrap_or_default())
        .map_err(|e| platform::PortError::fault("batch record", e))?;
    let standing = tasks.statuses(&fanned.chunks).await?;
    Ok(standing
        .iter()
        .all(|st| st.is_some_and(TaskStatus::is_finished))
        .then_some((p, fanned)))
}

/// What the end of a batch tells: its failed rows and its row of the
/// highest total return (the last of equals), read a chunk at a time; `None`
/// while the batch has not finished.
pub async fn outcome(
    tasks: &dyn platform::tasks::TaskStore,
    record: &Task,
) -> Result<Option<Outcome>, platform::PortError> {
    let Some((p, fanned)) = finished(tasks, record).await? else {
        return Ok(None);
    };
    let mut o = Outcome::default();
    let mut top = f64::NEG_INFINITY;
    for (k, id) in fanned.chunks.into_iter().enumerate() {
        for row in chunk_rows(tasks, id, p.span(k)).await? {
            o.failed += usize::from(row.error.is_some());
            if let Some(m) = row.total_return.filter(|m| m.is_finite())
                && m >= top
            {
                top = m;
                o.best = Some(row);
            }
        }
    }
    Ok(Some(o))
}

/// A finished batch's failed rows and best row ([`outcome`]).
#[derive(Debug, Default)]
pub struct Outcome {
    pub failed: usize,
    pub best: Option<BatchRow>,
}

/// The page of a finished batch's rows from index `from`, at most `limit`
/// of them, in batch order: only the chunks holding them are read (a chunk holds the
/// batch's `chunk` rows from its number times `chunk`). `None` while the
/// batch has not finished; an empty page past its end.
pub async fn rows_page(
    tasks: &dyn platform::tasks::TaskStore,
    record: &Task,
    from: usize,
    limit: usize,
) -> Result<Option<super::RowsPage>, platform::PortError> {
    let Some((p, fanned)) = finished(tasks, record).await? else {
        return Ok(None);
    };
    let to = from.saturating_add(limit).min(p.total);
    let mut rows = Vec::with_capacity(to.saturating_sub(from));
    if from < to {
        for k in from / p.chunk..to.div_ceil(p.chunk) {
            rows.extend(
                chunk_rows(tasks, fanned.chunks[k], p.span(k))
                    .await?
                    .into_iter()
                    .filter(|r| (from..to).contains(&r.index)),
            );
        }
    }
    rows.sort_by_key(|r| r.index);
    Ok(Some(super::RowsPage::new(rows, from, p.total)))
}
