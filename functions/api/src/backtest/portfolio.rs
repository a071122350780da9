//! Portfolio backtests: submit one, read its task (the result inside).

use crate::auth::Tenant;
use crate::error::{ApiError, Reply};
use crate::extract::Params;
use crate::routes::schema_names::documented;
use crate::state::AppState;
use crate::submit::Submission;
use axum::Json;
use axum::extract::Path;
use platform::tasks::{Task, TaskKind, TaskStatus};
use serde::Serialize;
use serde_json::Value;
use services::backtest::portfolio::request::PortfolioParams;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(documented!(start_portfolio))
        .routes(documented!(portfolio_status))
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
