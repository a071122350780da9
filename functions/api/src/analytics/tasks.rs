//! The analytics service's task object (2.8) for pattern-match and
//! scanner-backtest tasks, and their lists.

use crate::auth::Tenant;
use crate::error::ApiError;
use crate::extract::Params;
use crate::scopes::scoped;
use crate::state::AppState;
use crate::tasks::{TaskList, list_page, param_str};
use axum::Json;
use axum::extract::Path;
use platform::tasks::{Task, TaskKind, TaskStatus};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(scoped!(Read: cpm_status))
        .routes(scoped!(Read: cpm_tasks))
        .routes(scoped!(Read: scanner_status))
        .routes(scoped!(Read: scanner_tasks))
}

// Analytics service: task object of 2.8 for cpm and scanner backtests.

fn analytics_time(t: chrono::NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
}

/// Task object of the analytics service (2.8).
#[derive(Serialize, ToSchema)]
pub struct AnalyticsTask {
    #[schema(value_type = String, format = "uuid")]
    pub task_id: Uuid,
    #[schema(value_type = String, pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")]
    pub status: TaskStatus,
    pub username: String,
    /// `YYYY-MM-DDTHH:MM:SS.ffffff`, UTC.
    pub created_at: String,
    /// The request as JSON text.
    pub params: String,
    /// SUCCESS: the task's result, with its `task_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub result: Option<Value>,
    /// FAILED: what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// RUNNING: how far the job has come, 0-100 (universe searches advance it symbol by symbol).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 100)]
    pub progress: Option<u8>,
    /// Beyond the spec: the task's report page (HTML, charts), open with the same credentials.
    pub report_url: String,
}

/// Task summary of the pattern-match list.
#[derive(Serialize, ToSchema)]
pub struct CpmTaskSummary {
    #[schema(value_type = String, format = "uuid")]
    pub task_id: Uuid,
    #[schema(value_type = String, pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")]
    pub status: TaskStatus,
    /// `scan` or `backtest`.
    pub mode: &'static str,
    #[schema(value_type = Option<String>)]
    pub symbol: Value,
    /// The predefined pattern, if one was named.
    #[schema(value_type = Option<String>)]
    pub system_pattern: Value,
    pub created_at: String,
}

/// Task summary of the scanner-backtest list.
#[derive(Serialize, ToSchema)]
pub struct ScannerTaskSummary {
    #[schema(value_type = String, format = "uuid")]
    pub task_id: Uuid,
    #[schema(value_type = String, pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")]
    pub status: TaskStatus,
    #[schema(value_type = Option<String>)]
    pub name: Value,
    #[schema(value_type = Option<String>)]
    pub find_type: Value,
    pub created_at: String,
}

fn analytics_record(t: &Task) -> AnalyticsTask {
    let (result, error) = match t.status {
        TaskStatus::Success => {
            let mut result = t.result.clone().unwrap_or_else(|| json!({}));
            if let Some(obj) = result.as_object_mut() {
                obj.insert("task_id".into(), json!(t.id));
            }
            (Some(result), None)
        }
        TaskStatus::Failed => (
            None,
            Some(t.error.clone().unwrap_or_else(|| "the task failed".into())),
        ),
        _ => (None, None),
    };
    AnalyticsTask {
        task_id: t.id,
        status: t.status,
        username: t.owner.clone(),
        created_at: analytics_time(t.created_at),
        params: t.params.to_string(),
        result,
        error,
        progress: (t.status == TaskStatus::Running).then_some(t.progress.unwrap_or(0)),
        report_url: match t.kind {
            TaskKind::ScannerBacktest => format!("/smart-scanner-backtest/report/{}", t.id),
            _ => format!("/cpm/report/{}", t.id),
        },
    }
}

pub(crate) const CPM_KINDS: [TaskKind; 2] = [TaskKind::CpmBacktest, TaskKind::CpmScan];

/// A pattern-match task of the caller (scan or backtest); another account's id is 404.
#[utoipa::path(get, path = "/cpm/status/{task_id}", tag = "analytics",
    params(("task_id" = String, Path, description = "Task UUID"), crate::tasks::Wait),
    responses((status = 200, description = "The task object of analytics section 2.8", body = AnalyticsTask),
        crate::analytics::AnalyticsErrors))]
async fn cpm_status(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
    query: Params,
) -> Result<Json<AnalyticsTask>, ApiError> {
    let task = crate::tasks::owned_task_waiting(&state, &caller, &id, &CPM_KINDS, &query).await?;
    Ok(Json(analytics_record(&task)))
}

/// The caller's pattern-match tasks, newest first.
#[utoipa::path(get, path = "/cpm/tasks", tag = "analytics",
    params(crate::tasks::Paging,
        ("mode" = Option<String>, Query, description = "backtest or scan", pattern = "^(backtest|scan)$")),
    responses((status = 200, description = "A page of tasks", body = TaskList<CpmTaskSummary>),
        crate::analytics::AnalyticsErrors))]
async fn cpm_tasks(
    Tenant { state, caller }: Tenant,
    params: Params,
) -> Result<Json<TaskList<CpmTaskSummary>>, ApiError> {
    let kinds = match params.get("mode") {
        None => CPM_KINDS.to_vec(),
        Some("backtest") => vec![TaskKind::CpmBacktest],
        Some("scan") => vec![TaskKind::CpmScan],
        Some(m) => {
            return Err(ApiError::field(
                "mode",
                format!("'{m}' is not backtest or scan"),
            ));
        }
    };
    list_page(&state, &caller, &params, kinds, |t| CpmTaskSummary {
        task_id: t.id,
        status: t.status,
        mode: if t.kind == TaskKind::CpmScan {
            "scan"
        } else {
            "backtest"
        },
        symbol: param_str(t, "symbol"),
        system_pattern: param_str(t, "system_pattern"),
        created_at: analytics_time(t.created_at),
    })
    .await
}

/// A scanner backtest task of the caller; another account's id is 404.
#[utoipa::path(get, path = "/smart-scanner-backtest/status/{task_id}", tag = "analytics",
    params(("task_id" = String, Path, description = "Task UUID"), crate::tasks::Wait),
    responses((status = 200, description = "The task object of analytics section 2.8", body = AnalyticsTask),
        crate::analytics::AnalyticsErrors))]
async fn scanner_status(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
    query: Params,
) -> Result<Json<AnalyticsTask>, ApiError> {
    let kinds = [TaskKind::ScannerBacktest];
    let task = crate::tasks::owned_task_waiting(&state, &caller, &id, &kinds, &query).await?;
    Ok(Json(analytics_record(&task)))
}

/// The caller's scanner backtest tasks, newest first.
#[utoipa::path(get, path = "/smart-scanner-backtest/tasks", tag = "analytics",
    params(crate::tasks::Paging),
    responses((status = 200, description = "A page of tasks", body = TaskList<ScannerTaskSummary>),
        crate::analytics::AnalyticsErrors))]
async fn scanner_tasks(
    Tenant { state, caller }: Tenant,
    params: Params,
) -> Result<Json<TaskList<ScannerTaskSummary>>, ApiError> {
    list_page(
        &state,
        &caller,
        &params,
        vec![TaskKind::ScannerBacktest],
        |t| ScannerTaskSummary {
            task_id: t.id,
            status: t.status,
            name: param_str(t, "name"),
            find_type: param_str(t, "find_type"),
            created_at: analytics_time(t.created_at),
        },
    )
    .await
}
