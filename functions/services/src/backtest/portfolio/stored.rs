//! A finished portfolio's answer kept in two parts: its figures in the task
//! record (a few KB: what a wait, a list or a webhook reads) and its tables
//! (series, trades, orders, contributions, weights: MBs for 500 symbols) as
//! one JSON object in the blob store, named by the task. A wait then
//! neither writes nor parses the tables; a read of the whole result or of
//! a table joins them again.

use super::answers::{
    Contribution, PortfolioOrder, PortfolioResult, PortfolioTrade, Series, WeightsAt,
};
use crate::{Error, Result};
use platform::PortError;
use platform::marketdata::BlobStore;
use platform::tasks::Task;
use serde::Serialize;
use serde_json::{Map, Value};

/// The result's parts kept as the task's tables.
pub const TABLES: [&str; 5] = ["series", "trades", "orders", "contributions", "weights"];

/// The blob a task's tables are kept in.
pub fn key(task: &uuid::Uuid) -> String {
    format!("portfolio-results/{task}.json")
}

#[derive(Serialize)]
struct Tables<'a> {
    series: &'a Series,
    trades: &'a [PortfolioTrade],
    orders: &'a [PortfolioOrder],
    contributions: &'a [Contribution],
    weights: &'a [WeightsAt],
}

/// Keeps `result`'s tables for `task` and gives the figures the task's
/// record holds.
pub async fn keep(
    blobs: &dyn BlobStore,
    task: &uuid::Uuid,
    mut result: PortfolioResult,
) -> Result<Value> {
    let tables = Tables {
        series: &result.series,
        trades: &result.trades,
        orders: &result.orders,
        contributions: &result.contributions,
        weights: &result.weights,
    };
    let bytes = serde_json::to_vec(&tables).map_err(PortError::internal)?;
    blobs.put(&key(task), bytes.into()).await?;
    result.series = Series::default();
    (result.trades, result.orders) = (Vec::new(), Vec::new());
    (result.contributions, result.weights) = (Vec::new(), Vec::new());
    let mut figures = serde_json::to_value(result).map_err(PortError::internal)?;
    if let Some(o) = figures.as_object_mut() {
        for t in TABLES {
            o.remove(t);
        }
    }
    Ok(figures)
}

/// Whether a stored result holds its tables itself (a task kept whole).
fn whole(result: &Map<String, Value>) -> bool {
    TABLES.iter().all(|t| result.contains_key(*t))
}

/// The task with its whole result: the figures joined with the tables
/// (a task that has not succeeded, or was kept whole, as it is).
pub async fn joined(blobs: &dyn BlobStore, mut task: Task) -> Result<Task> {
    let Some(Value::Object(figures)) = &mut task.result else {
        return Ok(task);
    };
    if whole(figures) {
        return Ok(task);
    }
    let data = blobs.get(&key(&task.id)).await?.ok_or_else(|| {
        Error::NotFound(format!(
            "the tables of portfolio task '{}' are gone; submit it again",
            task.id
        ))
    })?;
    let tables: Map<String, Value> = serde_json::from_slice(&data).map_err(PortError::internal)?;
    figures.extend(tables);
    Ok(task)
}

/// A stored result with the tables left out (the figures).
pub fn figures(result: &mut Value) {
    if let Some(o) = result.as_object_mut() {
        for t in TABLES {
            o.remove(t);
        }
    }
}
