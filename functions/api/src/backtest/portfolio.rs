//! Portfolio backtests: submit one, read its task (the result inside) and
//! its tables as JSON rows, CSV, Parquet or Arrow.

use crate::auth::Tenant;
use crate::error::{ApiError, Reply};
use crate::extract::{Params, Query};
use crate::openapi::{Binary, ErrorDetail};
use crate::routes::schema_names::documented;
use crate::state::AppState;
use crate::submit::Submission;
use crate::table_format::{Format, respond};
use axum::Json;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use platform::tasks::{Task, TaskKind, TaskStatus};
use serde::Serialize;
use serde_json::Value;
use services::backtest::chart::ExportQuery;
use services::backtest::portfolio::request::PortfolioParams;
use services::backtest::portfolio::tables::{self, PortfolioTable};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(documented!(start_portfolio))
        .routes(documented!(portfolio_status))
        .routes(documented!(portfolio_equity))
        .routes(documented!(portfolio_trades))
        .routes(documented!(portfolio_orders))
        .routes(documented!(portfolio_weights))
        .routes(documented!(portfolio_contributions))
}

/// Submit a portfolio backtest: checked against the data, then queued.
#[utoipa::path(post, path = "/backtest/portfolio", tag = "backtest", request_body = PortfolioParams,
    params(crate::openapi::IdempotencyKey),
    responses((status = 202, description = "Queued", body = crate::openapi::SubmitResponse,
            links(("status" = (operation_id = "portfolio_status", parameters(("task_id" = "$response.body#/task_id")))))),
        (status = 400, description = "Invalid request, an unknown symbol, or a schedule that never fires; the message names the field", body = crate::openapi::ErrorDetail),
        crate::openapi::BacktestSubmitRefusals,
        crate::openapi::BacktestAccess,
        (status = 503, description = "The task store is unavailable; nothing was queued", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn start_portfolio(Tenant { state, caller }: Tenant, sent: Submission) -> Reply {
    services::backtest::portfolio::prepare(state.market.as_ref(), &sent.body).await?;
    let kind = TaskKind::PortfolioBacktest;
    let submitted = sent
        .submit(&state, &caller, kind, sent.body.clone())
        .await?;
    Ok(crate::submit::accepted(
        &submitted,
        "Portfolio task submitted; poll /backtest/portfolio/{task_id}".into(),
    ))
}

/// A portfolio task.
#[derive(Serialize, ToSchema)]
pub struct PortfolioTask {
    #[schema(value_type = String, format = "uuid")]
    pub task_id: Uuid,
    #[schema(value_type = String, pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")]
    pub status: TaskStatus,
    /// The request as submitted.
    #[schema(value_type = Object)]
    pub params: Value,
    /// `YYYY-MM-DDTHH:MM:SS`, UTC.
    pub created_at: String,
    /// SUCCESS: the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<services::backtest::portfolio::answers::PortfolioResult>)]
    pub result: Option<Value>,
    /// FAILED: what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn record(t: Task) -> PortfolioTask {
    let failed = t.status == TaskStatus::Failed;
    PortfolioTask {
        task_id: t.id,
        status: t.status,
        params: t.params,
        created_at: t.created_at.format("%Y-%m-%dT%H:%M:%S").to_string(),
        result: if t.status == TaskStatus::Success {
            t.result
        } else {
            None
        },
        error: if failed {
            Some(t.error.unwrap_or_else(|| "the task failed".into()))
        } else {
            None
        },
    }
}

/// One of the caller's portfolio tasks; another account's id is 404.
#[utoipa::path(get, path = "/backtest/portfolio/{task_id}", tag = "backtest",
    params(("task_id" = String, Path, description = "Task UUID"), crate::tasks::Wait),
    responses((status = 200, description = "The task", body = PortfolioTask),
        (status = 400, description = "A `wait` that is not a number from 0", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 404, description = "Unknown or foreign task", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn portfolio_status(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
    query: Params,
) -> Result<Json<PortfolioTask>, ApiError> {
    let kinds = [TaskKind::PortfolioBacktest];
    let t = crate::tasks::owned_task_waiting(&state, &caller, &id, &kinds, &query).await?;
    Ok(Json(record(t)))
}

/// The caller's portfolio task, once it has succeeded (409 before).
async fn succeeded(t: &Tenant, task_id: &str) -> Result<Task, ApiError> {
    let kinds = [TaskKind::PortfolioBacktest];
    let task = crate::tasks::owned_task(&t.state, &t.caller, task_id, &kinds).await?;
    if task.status != TaskStatus::Success {
        return Err(ApiError::new(
            409,
            format!(
                "task '{task_id}' is {}: its tables exist once it has succeeded",
                task.status
            ),
        ));
    }
    Ok(task)
}

/// One of a finished portfolio's tables in the format asked for.
async fn export(
    t: Tenant,
    headers: HeaderMap,
    task_id: String,
    q: ExportQuery,
    table: PortfolioTable,
) -> Reply {
    let format = Format::negotiate(q.format.as_deref(), &headers)?;
    let task = succeeded(&t, &task_id).await?;
    let result = task.result.as_ref().unwrap_or(&Value::Null);
    match format {
        Format::Json => Ok(crate::arrow::vary(
            Json(tables::rows(result, table)).into_response(),
        )),
        other => respond(
            other,
            tables::columns(result, table),
            &format!("{}-{task_id}", table.name()),
        ),
    }
}

macro_rules! export_route {
    ($fn:ident, $path:literal, $table:expr, $what:literal) => {
        #[doc = $what]
        #[utoipa::path(get, path = $path, tag = "backtest",
            params(("task_id" = String, Path, description = "A portfolio task of the caller"), ExportQuery),
            responses((status = 200, description = "JSON rows, or the same columns as CSV, Parquet or an Arrow IPC stream",
                    content((Vec<Object> = "application/json"), (String = "text/csv"), (Binary = "application/vnd.apache.parquet"), (Binary = "application/vnd.apache.arrow.stream"))),
                (status = 400, description = "Unknown format", body = ErrorDetail),
                (status = 401, description = "Missing or invalid credentials", body = ErrorDetail),
                (status = 404, description = "No such task of the caller", body = ErrorDetail),
                (status = 409, description = "The task has not succeeded (PENDING, RUNNING or FAILED)", body = ErrorDetail)))]
        pub(crate) async fn $fn(
            t: Tenant,
            headers: HeaderMap,
            Path(task_id): Path<String>,
            Query(q): Query<ExportQuery>,
        ) -> Reply {
            export(t, headers, task_id, q, $table).await
        }
    };
}

export_route!(
    portfolio_equity,
    "/backtest/portfolio/{task_id}/equity",
    PortfolioTable::Equity,
    "A finished portfolio's account per session: date, equity, cash, exposure, traded, benchmark."
);
export_route!(
    portfolio_trades,
    "/backtest/portfolio/{task_id}/trades",
    PortfolioTable::Trades,
    "A finished portfolio's round trips with their symbol."
);
export_route!(
    portfolio_orders,
    "/backtest/portfolio/{task_id}/orders",
    PortfolioTable::Orders,
    "A finished portfolio's fills: date, symbol, units (negative sold), price, commission."
);
export_route!(
    portfolio_weights,
    "/backtest/portfolio/{task_id}/weights",
    PortfolioTable::Weights,
    "A finished portfolio's weights at each month's last session, a column per symbol held."
);
export_route!(
    portfolio_contributions,
    "/backtest/portfolio/{task_id}/contributions",
    PortfolioTable::Contributions,
    "A finished portfolio's profit per symbol, largest first."
);
