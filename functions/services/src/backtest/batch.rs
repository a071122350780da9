//! Batch backtests: many strategies as one job. A batch is a list of
//! strategies, or one strategy and a grid of values for some of its fields
//! (dotted paths); every strategy is checked before anything is queued.
//! The batch is split into chunks, one task and one queue message each;
//! a chunk's rows are its task's result, so a redelivered chunk replaces
//! its rows rather than adding to them.

use super::prepare::{PrepareError, prepare};
use async_trait::async_trait;
use platform::marketdata::MarketData;
use platform::tasks::Task;
use platform::worker::{JobError, JobHandler, Progress};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Strategies per chunk: one queue message, run by one worker.
pub const CHUNK: usize = 250;

/// The documented body of `POST /backtest/batch`: one of two shapes.
#[cfg(feature = "openapi")]
#[derive(ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum BatchBody {
    List(StrategyList),
    Grid(StrategyGrid),
}

/// A list of strategies, each run as given.
#[cfg(feature = "openapi")]
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct StrategyList {
    /// A name to list the batch by.
    name: Option<String>,
    /// Strategies of backtest-service 2.1; at most the plan's batch size
    /// (pro 20,000, backtest 10,000, trial 100).
    #[schema(min_items = 1, max_items = 20000)]
    strategies: Vec<super::schema::StrategyParams>,
}

/// One strategy and a grid of values for some of its fields.
#[cfg(feature = "openapi")]
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct StrategyGrid {
    /// A name to list the batch by.
    name: Option<String>,
    strategy: super::schema::StrategyParams,
    /// Dotted field paths of `strategy` to non-empty lists of values; the
    /// batch is every combination (the first path varies slowest; a number
    /// in a path indexes a list). Each combination must be a valid strategy.
    #[schema(value_type = Option<HashMap<String, Vec<Value>>>, example = json!({"entry.condition.rule.period": ["20", "50"], "risk_control": ["//21", "-5/10/21"]}))]
    grid: Option<Value>,
}

/// `POST /backtest/batch`: `strategies`, or `strategy` with `grid`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct BatchRequest {
    /// A name to list the batch by.
    #[serde(default)]
    pub name: Option<String>,
    /// Strategies of backtest-service 2.1, run as they are.
    #[serde(default)]
    pub strategies: Option<Vec<Value>>,
    /// One strategy, varied by `grid`.
    #[serde(default)]
    pub strategy: Option<Value>,
    /// Dotted field paths of `strategy` to lists of values; the batch is
    /// every combination (the first path varies slowest). A number in a
    /// path indexes a list.
    #[serde(default)]
    pub grid: Option<Map<String, Value>>,
}

/// A batch's strategies with the values each one varies.
#[derive(Debug, Clone, PartialEq)]
pub struct Expanded {
    pub name: String,
    pub strategies: Vec<Value>,
    /// Per strategy: path -> value (empty for a list batch).
    pub varied: Vec<Map<String, Value>>,
}

fn invalid(m: impl Into<String>) -> PrepareError {
    PrepareError::Invalid(m.into())
}

/// Sets `path` (dotted; numbers index lists) in `v`, creating objects on the way.
fn set_path(v: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let mut at = v;
    let parts: Vec<&str> = path.split('.').collect();
    for (k, part) in parts.iter().enumerate() {
        if part.is_empty() {
            return Err(format!("'{path}' has an empty segment"));
        }
        let last = k + 1 == parts.len();
        at = match at {
            Value::Array(a) => {
                let i: usize = part.parse().map_err(|_| {
                    format!("'{path}': '{part}' indexes a list, so it must be a number")
                })?;
                let n = a.len();
                a.get_mut(i)
                    .ok_or_else(|| format!("'{path}': index {i} is past the list's {n} items"))?
            }
            Value::Object(o) => {
                if !o.contains_key(*part) {
                    o.insert(
                        part.to_string(),
                        if last {
                            Value::Null
                        } else {
                            Value::Object(Map::new())
                        },
                    );
                }
                o.get_mut(*part).expect("inserted")
            }
            _ => {
                return Err(format!(
                    "'{path}': '{part}' is inside a value that is not an object"
                ));
            }
        };
    }
    *at = value;
    Ok(())
}

/// The batch's strategies, at most `cap` (the caller's plan).
pub fn expand(body: &Value, cap: usize) -> Result<Expanded, PrepareError> {
    let req: BatchRequest = serde_json::from_value(body.clone())
        .map_err(|e| invalid(format!("the batch is not valid: {e}")))?;
    let name = req.name.clone().unwrap_or_default();
    let too_many = |n: usize| {
        invalid(format!(
            "the batch has {n} strategies; the plan allows at most {cap} (field 'strategies' or 'grid')"
        ))
    };
    match (req.strategies, req.strategy, req.grid) {
        (Some(list), None, None) => {
            if list.is_empty() {
                return Err(invalid("'strategies' is empty"));
            }
            if list.len() > cap {
                return Err(too_many(list.len()));
            }
            let n = list.len();
            Ok(Expanded {
                name,
                strategies: list,
                varied: vec![Map::new(); n],
            })
        }
        (None, Some(base), grid) => {
            let grid = grid.unwrap_or_default();
            let mut axes: Vec<(&String, &Vec<Value>)> = Vec::new();
            for (path, values) in &grid {
                let values = values.as_array().filter(|v| !v.is_empty()).ok_or_else(|| {
                    invalid(format!("'grid.{path}' must be a non-empty list of values"))
                })?;
                axes.push((path, values));
            }
            let total = axes
                .iter()
                .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))
                .unwrap_or(usize::MAX);
            if total > cap {
                return Err(too_many(total));
            }
            let mut strategies = Vec::with_capacity(total);
            let mut varied = Vec::with_capacity(total);
            for k in 0..total {
                // Mixed radix, the first path slowest.
                let (mut rest, mut s, mut m) = (k, base.clone(), Map::new());
                let mut picks = vec![0; axes.len()];
                for (a, (_, values)) in axes.iter().enumerate().rev() {
                    picks[a] = rest % values.len();
                    rest /= values.len();
                }
                for (a, (path, values)) in axes.iter().enumerate() {
                    let v = values[picks[a]].clone();
                    set_path(&mut s, path, v.clone()).map_err(|e| invalid(format!("grid: {e}")))?;
                    m.insert((*path).clone(), v);
                }
                strategies.push(s);
                varied.push(m);
            }
            Ok(Expanded {
                name,
                strategies,
                varied,
            })
        }
        (Some(_), Some(_), _) => Err(invalid("give 'strategies' or 'strategy', not both")),
        (Some(_), None, Some(_)) => Err(invalid(
            "'grid' varies 'strategy'; a list of 'strategies' takes none",
        )),
        (None, None, _) => Err(invalid("'strategies' or 'strategy' is required")),
    }
}

/// Checks every strategy; the first invalid one names its index and field.
/// Answers each as it will be stored (the parameters the caller gave).
pub async fn check(market: &dyn MarketData, e: &Expanded) -> Result<Vec<Value>, PrepareError> {
    let mut out = Vec::with_capacity(e.strategies.len());
    for (i, s) in e.strategies.iter().enumerate() {
        let p = prepare(market, s).await.map_err(|err| match err {
            PrepareError::Invalid(m) => invalid(format!("strategies[{i}]: {m}")),
            other => other,
        })?;
        out.push(p.parsed.user_supplied.clone());
    }
    Ok(out)
}

/// A strategy's row of the results table: the values it varied and the
/// scalar metrics of 2.11, or the error that stopped it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BatchRow {
    /// Its place in the batch, from 0.
    pub index: usize,
    /// The grid's values for it (path -> value); empty for a list batch.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub params: Map<String, Value>,
    /// Why it has no metrics; `null` when it ran.
    pub error: Option<String>,
    #[serde(rename = "Symbol")]
    pub symbol: Option<String>,
    #[serde(rename = "Total Trades")]
    pub total_trades: Option<usize>,
    #[serde(rename = "Win Rate")]
    pub win_rate: Option<f64>,
    #[serde(rename = "Average Win %")]
    pub average_win: Option<f64>,
    #[serde(rename = "Average Loss %")]
    pub average_loss: Option<f64>,
    #[serde(rename = "Total Return (%)")]
    pub total_return: Option<f64>,
    #[serde(rename = "BuyHoldGain")]
    pub buy_hold_gain: Option<f64>,
    #[serde(rename = "CAGR")]
    pub cagr: Option<f64>,
    #[serde(rename = "Sharpe Ratio")]
    pub sharpe: Option<f64>,
    #[serde(rename = "Max Drawdown")]
    pub max_drawdown: Option<f64>,
    #[serde(rename = "DrawDown Period")]
    pub drawdown_period: Option<usize>,
    #[serde(rename = "Time in Market")]
    pub time_in_market: Option<f64>,
}

/// The metric columns of a row, in order, as the CSV and Parquet tables name them.
pub const METRICS: [&str; 11] = [
    "Total Trades",
    "Win Rate",
    "Average Win %",
    "Average Loss %",
    "Total Return (%)",
    "BuyHoldGain",
    "CAGR",
    "Sharpe Ratio",
    "Max Drawdown",
    "DrawDown Period",
    "Time in Market",
];

impl BatchRow {
    fn failed(index: usize, params: Map<String, Value>, error: String) -> Self {
        BatchRow {
            index,
            params,
            error: Some(error),
            symbol: None,
            total_trades: None,
            win_rate: None,
            average_win: None,
            average_loss: None,
            total_return: None,
            buy_hold_gain: None,
            cagr: None,
            sharpe: None,
            max_drawdown: None,
            drawdown_period: None,
            time_in_market: None,
        }
    }

    /// A row from a 2.11 result object (as the backtest job answers it).
    fn ran(index: usize, params: Map<String, Value>, r: &Value) -> Self {
        let f = |k: &str| r.get(k).and_then(Value::as_f64);
        let u = |k: &str| r.get(k).and_then(Value::as_u64).map(|x| x as usize);
        BatchRow {
            index,
            params,
            error: None,
            symbol: r.get("Symbol").and_then(Value::as_str).map(str::to_string),
            total_trades: u("Total Trades"),
            win_rate: f("Win Rate"),
            average_win: f("Average Win %"),
            average_loss: f("Average Loss %"),
            total_return: f("Total Return (%)"),
            buy_hold_gain: f("BuyHoldGain"),
            cagr: f("CAGR"),
            sharpe: f("Sharpe Ratio"),
            max_drawdown: f("Max Drawdown"),
            drawdown_period: u("DrawDown Period"),
            time_in_market: f("Time in Market"),
        }
    }

    /// The metric of `METRICS[k]`.
    pub fn metric(&self, k: usize) -> Option<f64> {
        match k {
            0 => self.total_trades.map(|x| x as f64),
            1 => self.win_rate,
            2 => self.average_win,
            3 => self.average_loss,
            4 => self.total_return,
            5 => self.buy_hold_gain,
            6 => self.cagr,
            7 => self.sharpe,
            8 => self.max_drawdown,
            9 => self.drawdown_period.map(|x| x as f64),
            10 => self.time_in_market,
            _ => None,
        }
    }
}

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
    match super::run::execute(market, &prepared).await {
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

/// The results table as CSV: index, the varied paths, the metrics, error.
pub fn to_csv(paths: &[String], rows: &[BatchRow]) -> String {
    let quote = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::from("index");
    for p in paths {
        out.push(',');
        out.push_str(&quote(p));
    }
    out.push_str(",Symbol");
    for m in METRICS {
        out.push(',');
        out.push_str(&quote(m));
    }
    out.push_str(",error\n");
    for r in rows {
        out.push_str(&r.index.to_string());
        for p in paths {
            out.push(',');
            match r.params.get(p) {
                Some(Value::String(s)) => out.push_str(&quote(s)),
                Some(v) => out.push_str(&quote(&v.to_string())),
                None => {}
            }
        }
        out.push(',');
        out.push_str(&quote(r.symbol.as_deref().unwrap_or("")));
        for k in 0..METRICS.len() {
            out.push(',');
            if let Some(x) = r.metric(k) {
                out.push_str(&x.to_string());
            }
        }
        out.push(',');
        out.push_str(&quote(r.error.as_deref().unwrap_or("")));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_grid_is_every_combination_first_path_slowest() {
        let body = json!({"strategy": {"symbol": "SPY", "entry": {"condition": {"rule": {"comparison_value": 10}}}},
            "grid": {"entry.condition.rule.comparison_value": [20, 25, 30], "risk_control": ["//21", "-5/10/21"]}});
        let e = expand(&body, 100).unwrap();
        assert_eq!(e.strategies.len(), 6);
        assert_eq!(
            e.strategies[0]["entry"]["condition"]["rule"]["comparison_value"],
            20
        );
        assert_eq!(e.strategies[1]["risk_control"], "-5/10/21");
        assert_eq!(
            e.strategies[5]["entry"]["condition"]["rule"]["comparison_value"],
            30
        );
        assert_eq!(
            e.varied[3],
            json!({"entry.condition.rule.comparison_value": 25, "risk_control": "-5/10/21"})
                .as_object()
                .unwrap()
                .clone()
        );
        assert_eq!(e.strategies[2]["symbol"], "SPY");
        // Lists are indexed by number.
        let e = expand(
            &json!({"strategy": {"rules": [{"x": 1}, {"x": 2}]}, "grid": {"rules.1.x": [5]}}),
            10,
        )
        .unwrap();
        assert_eq!(e.strategies[0]["rules"], json!([{"x": 1}, {"x": 5}]));
    }

    #[test]
    fn refusals_name_the_field() {
        for (body, want) in [
            (
                json!({"strategy": {}, "grid": {"a": [1, 2, 3], "b": [1, 2, 3, 4]}}),
                "at most 10",
            ),
            (json!({"strategies": []}), "'strategies' is empty"),
            (json!({"strategy": {}, "grid": {"a": []}}), "grid.a"),
            (
                json!({"strategy": {"rules": [1]}, "grid": {"rules.x": [1]}}),
                "rules.x",
            ),
            (
                json!({"strategy": {"rules": [1]}, "grid": {"rules.3": [1]}}),
                "index 3",
            ),
            (json!({"strategies": [{}], "strategy": {}}), "not both"),
            (json!({"name": "x"}), "required"),
        ] {
            match expand(&body, 10) {
                Err(PrepareError::Invalid(m)) => assert!(m.contains(want), "{body}: {m}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    #[test]
    fn csv_quotes_and_leaves_failures_empty() {
        let mut ok = BatchRow::failed(0, Map::new(), String::new());
        ok.error = None;
        ok.symbol = Some("SPY".into());
        ok.total_trades = Some(3);
        ok.total_return = Some(1.5);
        let mut params = Map::new();
        params.insert("risk_control".into(), json!("-5/10/21"));
        let bad = BatchRow::failed(1, params, "no data, sorry".into());
        let text = to_csv(&["risk_control".into()], &[ok, bad]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("index,risk_control,Symbol,Total Trades,Win Rate"));
        assert!(lines[1].starts_with("0,,SPY,3,,,,1.5,"));
        assert!(lines[2].starts_with("1,-5/10/21,,,") && lines[2].ends_with(",\"no data, sorry\""));
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
