//! A finished backtest's trades and equity as tables: JSON rows, CSV,
//! Parquet or Arrow (`format=` or `Accept`), for notebooks and
//! spreadsheets. The same run as its chart.

use crate::auth::Tenant;
use crate::error::Reply;
use crate::extract::Query;
use crate::openapi::{Binary, ErrorDetail};
use crate::table_format::{Format, respond};
use axum::Json;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use platform::marketdata::interchange::Table;
use services::backtest::chart::{Chart, ChartTrade, EquityRow, ExportQuery, task_chart};

/// One of a finished task's tables in the format asked for: `rows` as
/// JSON, else `table` in the negotiated format, a file named `name`.
async fn export(
    t: &Tenant,
    headers: &HeaderMap,
    task_id: &str,
    q: ExportQuery,
    name: &str,
    rows: fn(Chart) -> axum::response::Response,
    table: fn(&Chart) -> Table,
) -> Reply {
    let format = Format::negotiate(q.format.as_deref(), headers)?;
    let task = super::monte_carlo::succeeded(t, task_id).await?;
    let c = task_chart(t.state.market.as_ref(), &t.state.uploads, &task).await?;
    match format {
        Format::Json => Ok(crate::arrow::vary(rows(c))),
        other => respond(other, table(&c), &format!("{name}-{task_id}")),
    }
}

/// Every trade of a finished backtest: symbol, side, size, fills after
/// slippage, fees and profit in money, return (a fraction), bars held,
/// exit reason, MAE and MFE (fractions).
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
    let rows = |c: Chart| Json(c.trades).into_response();
    export(
        &t,
        &headers,
        &task_id,
        q,
        "trades",
        rows,
        Chart::trade_table,
    )
    .await
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
    let rows = |c: Chart| Json(c.equity_rows()).into_response();
    export(
        &t,
        &headers,
        &task_id,
        q,
        "equity",
        rows,
        Chart::equity_table,
    )
    .await
}
