//! The events' payloads: a finished task's or batch's (through the
//! worker's hooks), the nightly scan's and its alerts'.

use crate::Result;
use platform::scanner::ScanDay;
use platform::tasks::{Task, TaskKind, TaskStatus, TaskStore};
use platform::webhooks::emit::Events;
use platform::webhooks::{Alert, EventType};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// A finished task's scalar figures (its result's top-level numbers and
/// short texts, and those of its statistics block): the payload stays
/// small, the full result is one link away.
fn key_metrics(result: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let sources = [
        result,
        &result["data"],
        &result["data"]["stats"],
        &result["backtest_info"]["stats"],
        &result["data"]["backtest_info"]["stats"],
    ];
    for source in sources {
        let Some(obj) = source.as_object() else {
            continue;
        };
        for (k, v) in obj {
            let keep = match v {
                Value::Number(_) | Value::Bool(_) => true,
                Value::String(s) => s.len() <= 40,
                _ => false,
            };
            if keep && out.len() < 24 && !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// Where a task's owner reads it.
fn links(task: &Task) -> Value {
    let id = task.id;
    match task.kind {
        TaskKind::StrategyBacktest => json!({
            "status": format!("/backtest/status/{id}"),
            "report": format!("/backtest/report/{id}"),
            "chart": format!("/backtest/chart/{id}"),
        }),
        TaskKind::CpmScan | TaskKind::CpmBacktest => json!({
            "status": format!("/cpm/status/{id}"),
            "report": format!("/cpm/report/{id}"),
        }),
        TaskKind::ScannerBacktest => json!({
            "status": format!("/smart-scanner-backtest/status/{id}"),
            "report": format!("/smart-scanner-backtest/report/{id}"),
        }),
        TaskKind::PortfolioBacktest => json!({
            "status": format!("/backtest/portfolio/{id}"),
            "report": format!("/backtest/portfolio/{id}/report"),
        }),
        TaskKind::BatchBacktest | TaskKind::BatchChunk => json!({
            "status": format!("/backtest/batch/{id}"),
            "results": format!("/backtest/batch/{id}/results"),
            "report": format!("/backtest/batch/{id}/report"),
        }),
    }
}

/// The payload of `task.finished`.
pub fn task_finished(task: &Task) -> Value {
    let mut data = json!({
        "task_id": task.id.to_string(),
        "kind": task.kind.as_str(),
        "status": task.status.as_str(),
        "links": links(task),
    });
    if let Some(result) = &task.result {
        data["metrics"] = Value::Object(key_metrics(result));
    }
    if let Some(error) = &task.error {
        data["error"] = Value::String(error.chars().take(500).collect());
    }
    data
}

/// Tells a finished task's owner: `task.finished` for a backtest, CPM or
/// scanner backtest; `batch.finished` once a batch's last chunk is in (or
/// the batch could not be fanned out).
pub struct TaskEvents {
    pub events: Events,
    pub tasks: Arc<dyn TaskStore>,
    /// Where batches keep their returns: the event then carries the
    /// batch's overfitting statistics (and computes them first).
    pub returns: Option<platform::returns::ReturnStore>,
}

impl TaskEvents {
    async fn tell(&self, task: &Task) -> Result<()> {
        match task.kind {
            TaskKind::StrategyBacktest
            | TaskKind::CpmBacktest
            | TaskKind::CpmScan
            | TaskKind::ScannerBacktest
            | TaskKind::PortfolioBacktest => {
                self.events
                    .emit(
                        Some(&task.owner),
                        EventType::TaskFinished,
                        &task.id.to_string(),
                        task_finished(task),
                    )
                    .await?;
            }
            TaskKind::BatchBacktest if task.status == TaskStatus::Failed => {
                self.batch(task).await?;
            }
            TaskKind::BatchBacktest => {}
            TaskKind::BatchChunk => {
                let Some(parent) = task
                    .params
                    .get("batch")
                    .and_then(Value::as_str)
                    .and_then(|s| uuid::Uuid::parse_str(s).ok())
                else {
                    return Ok(());
                };
                if let Some(record) = self.tasks.get(parent).await? {
                    self.batch(&record).await?;
                }
            }
        }
        Ok(())
    }

    /// `batch.finished`, when the batch has.
    async fn batch(&self, record: &Task) -> Result<()> {
        use crate::backtest::batch::{Rows, outcome, status};
        let s = status(
            self.tasks.as_ref(),
            self.returns.as_ref(),
            record,
            Rows::Skip,
        )
        .await?;
        if s.status != "SUCCESS" && s.status != "FAILED" {
            return Ok(());
        }
        if !self
            .events
            .wanted(&record.owner, EventType::BatchFinished)
            .await?
        {
            return Ok(());
        }
        // A chunk's rows at a time: a million rows at once took a gigabyte.
        let o = outcome(self.tasks.as_ref(), record)
            .await?
            .unwrap_or_default();
        let (failed, best) = (o.failed, o.best.as_ref());
        let mut data = json!({
            "batch_id": s.batch_id,
            "name": s.name,
            "status": s.status,
            "total": s.total,
            "failed_rows": failed,
            "links": links(record),
        });
        if let Some(row) = best {
            // The row of the highest total return, with its figures under
            // the names of the results table.
            let mut best = json!({"index": row.index, "params": row.params});
            if let Ok(Value::Object(figures)) = serde_json::to_value(row) {
                for (k, v) in figures {
                    if crate::backtest::batch::METRICS.contains(&k.as_str()) {
                        best[k] = v;
                    }
                }
            }
            data["best"] = best;
        }
        if let Some(st) = &s.statistics {
            data["statistics"] = json!({
                "pbo": st.overfitting.as_ref().map(|o| o.pbo),
                "deflated_sharpe_ratio": st.deflated_sharpe.as_ref().and_then(|d| d.deflated_sharpe_ratio),
            });
        }
        if let Some(e) = &s.error {
            data["error"] = Value::String(e.chars().take(500).collect());
        }
        self.events
            .emit(
                Some(&record.owner),
                EventType::BatchFinished,
                &s.batch_id,
                data,
            )
            .await?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl platform::worker::AfterJob for TaskEvents {
    async fn finished(&self, task: &Task) {
        if let Err(e) = self.tell(task).await {
            tracing::warn!(task_id = %task.id, error = %e, "webhook event not recorded");
        }
    }
}

/// Items of one alert's event, at most.
const ALERT_ITEMS: usize = 100;

fn matches(alert: &Alert, row: &platform::scanner::ScanRow) -> bool {
    (alert.signals.is_empty() || alert.signals.contains(&row.signal))
        && (alert.tickers.is_empty() || alert.tickers.contains(&row.symbol))
        && alert.min_win_rate.is_none_or(|w| row.figures.win_rate >= w)
        && alert
            .min_trades
            .is_none_or(|n| row.figures.trade_number >= n as usize)
}

/// After a scan stored `day`: `scan.completed` to every subscriber, and one
/// `scanner.alert` per alert with matching items (one per alert and day:
/// scanning the day again tells nothing new). The events recorded.
pub async fn scan_events(events: &Events, day: &ScanDay) -> Result<usize> {
    let date = day.date.to_string();
    let stocks = {
        let mut s: Vec<&str> = day.rows.iter().map(|r| r.symbol.as_str()).collect();
        s.dedup();
        s.len()
    };
    let mut told = events
        .emit(
            None,
            EventType::ScanCompleted,
            &date,
            json!({"date": date, "items": day.rows.len(), "stocks_with_items": stocks, "links": {"scanner": "/smart-stock-scanner/latest-day-all"}}),
        )
        .await?;
    for alert in events.store.all_alerts().await? {
        let hits: Vec<&platform::scanner::ScanRow> =
            day.rows.iter().filter(|r| matches(&alert, r)).collect();
        if hits.is_empty() {
            continue;
        }
        let items: Vec<Value> = hits
            .iter()
            .take(ALERT_ITEMS)
            .map(|r| {
                json!({
                    "symbol": r.symbol,
                    "signal": r.signal,
                    "direction": r.direction.as_str(),
                    "close": r.close,
                    "win_rate": r.figures.win_rate,
                    "trades": r.figures.trade_number,
                    "avg_return": r.figures.avg_return,
                    "profit_target": r.profit_target,
                    "stop_loss": r.stop_loss,
                })
            })
            .collect();
        told += events
            .emit(
                Some(&alert.account),
                EventType::ScannerAlert,
                &format!("{}:{date}", alert.id),
                json!({
                    "alert_id": alert.id,
                    "name": alert.name,
                    "date": date,
                    "matched": hits.len(),
                    "items": items,
                    "links": {"scanner": "/smart-stock-scanner/latest-day-all"},
                }),
            )
            .await?;
    }
    Ok(told)
}
