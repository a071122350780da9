//! A finished backtest's trades and equity as tables: JSON rows, CSV,
//! Parquet or Arrow (`format=` or `Accept`), for notebooks and
//! spreadsheets. The same run as its chart.

use crate::auth::Tenant;
use crate::error::{ApiError, Reply};
use crate::extract::Query;
use crate::openapi::{Binary, ErrorDetail};
use crate::table_format::{Format, respond};
use axum::Json;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use services::backtest::chart::{Chart, ChartTrade, EquityRow, ExportQuery, task_chart};

async fn chart(t: &Tenant, task_id: &str) -> Result<Chart, ApiError> {
    let task = super::monte_carlo::succeeded(t, task_id).await?;
    Ok(task_chart(t.state.market.as_ref(), &t.state.uploads, &task).await?)
}

/// Every trade of a finished backtest: fills, size, profit in money and
/// percent, bars held, exit reason, MAE and MFE.
#[utoipa::path(get, path = "/backtest/trades/{task_id}", tag = "backtest", operation_id = "backtest_trades",
    params(("task_id" = String, Path, description = "A backtest task of the caller"), ExportQuery),
    responses((status = 200, description = "One row per trade: JSON rows, or the same columns as CSV, Parquet or an Arrow IPC stream (times as dates, or timestamps for intraday bars)",
            content((Vec<ChartTrade> = "application/json"), (String = "text/csv"), (Binary = "application/vnd.apache.parquet"), (Binary = "application/vnd.apache.arrow.stream"))),
        (status = 400, description = "Unknown format", body = ErrorDetail),
        (status = 404, description = "No such task of the caller", body = ErrorDetail),
        (status = 409, description = "The task has not succeeded (PENDING, RUNNING or FAILED)", body = ErrorDetail)))]
pub(crate) async fn backtest_trades(
    t: Tenant,
    headers: HeaderMap,
    Path(task_id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Reply {
    let format = Format::negotiate(q.format.as_deref(), &headers)?;
    let c = chart(&t, &task_id).await?;
    match format {
        Format::Json => Ok(crate::arrow::vary(Json(c.trades).into_response())),
        other => respond(other, c.trade_table(), &format!("trades-{task_id}")),
    }
}

/// A finished backtest's account bar by bar: close, equity, drawdown,
/// position, cash, daily return and the benchmark's equity.
#[utoipa::path(get, path = "/backtest/equity/{task_id}", tag = "backtest", operation_id = "backtest_equity",
    params(("task_id" = String, Path, description = "A backtest task of the caller"), ExportQuery),
    responses((status = 200, description = "One row per bar of the window: JSON rows, or the same columns as CSV, Parquet or an Arrow IPC stream",
            content((Vec<EquityRow> = "application/json"), (String = "text/csv"), (Binary = "application/vnd.apache.parquet"), (Binary = "application/vnd.apache.arrow.stream"))),
        (status = 400, description = "Unknown format", body = ErrorDetail),
        (status = 404, description = "No such task of the caller", body = ErrorDetail),
        (status = 409, description = "The task has not succeeded (PENDING, RUNNING or FAILED)", body = ErrorDetail)))]
pub(crate) async fn backtest_equity(
    t: Tenant,
    headers: HeaderMap,
    Path(task_id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Reply {
    let format = Format::negotiate(q.format.as_deref(), &headers)?;
    let c = chart(&t, &task_id).await?;
    match format {
        Format::Json => Ok(crate::arrow::vary(Json(c.equity_rows()).into_response())),
        other => respond(other, c.equity_table(), &format!("equity-{task_id}")),
    }
}
