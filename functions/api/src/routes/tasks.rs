//! Reading tasks: status and listings, in each service's task shape. A task of
//! another owner, or of another group's kind, reads as not found.

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::{Extension, Json};
use platform::tasks::{Task, TaskFilter, TaskKind, TaskStatus};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

const MAX_LIMIT: i64 = 200;

pub fn backtest_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(backtest_status))
        .routes(routes!(backtest_tasks))
}

pub fn analytics_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(cpm_status))
        .routes(routes!(cpm_tasks))
        .routes(routes!(scanner_status))
        .routes(routes!(scanner_tasks))
}

/// The caller's task of one of `kinds`, or 404.
async fn owned_task(
    state: &AppState,
    caller: &Caller,
    id: &str,
    kinds: &[TaskKind],
) -> Result<Task, ApiError> {
    let not_found = || ApiError::not_found(format!("task '{id}' not found"));
    let uuid = Uuid::parse_str(id).map_err(|_| not_found())?;
    state
        .tasks
        .get_owned(uuid, &caller.0.email)
        .await?
        .filter(|t| kinds.contains(&t.kind))
        .ok_or_else(not_found)
}

/// A page of tasks, each in its service's summary shape.
#[derive(Serialize, ToSchema)]
pub struct TaskList<S> {
    pub tasks: Vec<S>,
    /// Tasks matching the filter, over all pages.
    pub total: u64,
    pub limit: u32,
    pub offset: u32,
}

/// Task record of the backtest service (2.10).
#[derive(Serialize, ToSchema)]
pub struct TaskRecord {
    #[schema(value_type = String, format = "uuid")]
    pub task_id: Uuid,
    #[schema(value_type = String, pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")]
    pub status: TaskStatus,
    /// The strategy as submitted.
    #[schema(value_type = Object)]
    pub params: Value,
    pub username: String,
    /// `YYYY-MM-DDTHH:MM:SS`, UTC.
    pub created_at: String,
    /// SUCCESS: the result object; FAILED: `{error}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<TaskOutcome>,
    /// FAILED: what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A finished task's `result`: the stored result object (written by the job
/// from `BacktestResult`), or the failure.
#[derive(Serialize)]
#[serde(untagged)]
pub enum TaskOutcome {
    Result(Value),
    Failed { error: String },
}

impl utoipa::PartialSchema for TaskOutcome {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(utoipa::openapi::Ref::from_schema_name("BacktestResult"))
            .item(
                ObjectBuilder::new()
                    .property("error", ObjectBuilder::new().schema_type(Type::String))
                    .required("error"),
            )
            .into()
    }
}
impl ToSchema for TaskOutcome {}

/// Task summary of the backtest service (2.12).
#[derive(Serialize, ToSchema)]
pub struct TaskSummary {
    #[schema(value_type = String, format = "uuid")]
    pub task_id: Uuid,
    #[schema(value_type = String, pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")]
    pub status: TaskStatus,
    /// The strategy's `name`, as submitted.
    #[schema(value_type = Option<String>)]
    pub strategy_name: Value,
    #[schema(value_type = String)]
    pub symbol: Value,
    /// Default `Daily`.
    #[schema(value_type = String)]
    pub frequency: Value,
    pub created_at: String,
}

/// A page of the caller's tasks of `kinds` (status filter and paging from the
/// query), each rendered by `summary`.
async fn list_page<S: Serialize>(
    state: &AppState,
    caller: &Caller,
    params: &Params,
    kinds: Vec<TaskKind>,
    summary: fn(&Task) -> S,
) -> Result<Json<TaskList<S>>, ApiError> {
    let limit = params.int_in("limit", 20, 1, MAX_LIMIT)? as u32;
    let offset = params.int_in("offset", 0, 0, i64::from(u32::MAX))? as u32;
    let filter = TaskFilter {
        kinds,
        status: status_filter(params)?,
    };
    let listed = state
        .tasks
        .list(&caller.0.email, &filter, limit, offset)
        .await?;
    Ok(Json(TaskList {
        tasks: listed.tasks.iter().map(summary).collect(),
        total: listed.total,
        limit,
        offset,
    }))
}

fn status_filter(params: &Params) -> Result<Option<TaskStatus>, ApiError> {
    params
        .get("status")
        .map(|s| {
            s.parse().map_err(|e: platform::PortError| {
                ApiError::bad_request(format!("query parameter 'status': {e}"))
            })
        })
        .transpose()
}

fn param_str(task: &Task, key: &str) -> Value {
    task.params.get(key).cloned().unwrap_or(Value::Null)
}

// Backtest service: task record of 2.10, summaries of 2.12.

fn backtest_time(t: chrono::NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S").to_string()
}

fn backtest_record(t: &Task) -> TaskRecord {
    let (result, error) = match t.status {
        TaskStatus::Success => (t.result.clone().map(TaskOutcome::Result), None),
        TaskStatus::Failed => {
            let msg = t.error.clone().unwrap_or_else(|| "the task failed".into());
            (Some(TaskOutcome::Failed { error: msg.clone() }), Some(msg))
        }
        _ => (None, None),
    };
    TaskRecord {
        task_id: t.id,
        status: t.status,
        params: t.params.clone(),
        username: t.owner.clone(),
        created_at: backtest_time(t.created_at),
        result,
        error,
    }
}

/// One of the caller's tasks; another account's id is 404.
#[utoipa::path(get, path = "/backtest/status/{task_id}", tag = "backtest",
    params(("task_id" = String, Path, description = "Task UUID")),
    responses((status = 200, description = "The task", body = TaskRecord),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 404, description = "Unknown or foreign task", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn backtest_status(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<TaskRecord>, ApiError> {
    let t = owned_task(&state, &caller, &id, &[TaskKind::StrategyBacktest]).await?;
    Ok(Json(backtest_record(&t)))
}

/// The caller's tasks, newest first.
#[utoipa::path(get, path = "/backtest/tasks", tag = "backtest",
    params(("limit" = Option<i64>, Query, description = "1-200, default 20", minimum = 1, maximum = 200), ("offset" = Option<i64>, Query, description = "Default 0", minimum = 0, maximum = 1000000),
        ("status" = Option<String>, Query, description = "PENDING, RUNNING, SUCCESS or FAILED", pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")),
    responses((status = 200, description = "A page of tasks", body = TaskList<TaskSummary>),
        (status = 400, description = "Bad paging or status", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn backtest_tasks(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Result<Json<TaskList<TaskSummary>>, ApiError> {
    list_page(
        &state,
        &caller,
        &params,
        vec![TaskKind::StrategyBacktest],
        |t| TaskSummary {
            task_id: t.id,
            status: t.status,
            strategy_name: param_str(t, "name"),
            symbol: param_str(t, "symbol"),
            frequency: t.params.get("frequency").cloned().unwrap_or(json!("Daily")),
            created_at: backtest_time(t.created_at),
        },
    )
    .await
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
    }
}

const CPM_KINDS: [TaskKind; 2] = [TaskKind::CpmBacktest, TaskKind::CpmScan];

/// A pattern-match task of the caller (scan or backtest); another account's id is 404.
#[utoipa::path(get, path = "/cpm/status/{task_id}", tag = "analytics",
    params(("task_id" = String, Path, description = "Task UUID")),
    responses((status = 200, description = "The task object of analytics section 2.8", body = AnalyticsTask),
        crate::analytics::AnalyticsErrors))]
async fn cpm_status(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<AnalyticsTask>, ApiError> {
    Ok(Json(analytics_record(
        &owned_task(&state, &caller, &id, &CPM_KINDS).await?,
    )))
}

/// The caller's pattern-match tasks, newest first.
#[utoipa::path(get, path = "/cpm/tasks", tag = "analytics",
    params(("limit" = Option<i64>, Query, description = "1-200, default 20", minimum = 1, maximum = 200), ("offset" = Option<i64>, Query, description = "Default 0", minimum = 0, maximum = 1000000),
        ("status" = Option<String>, Query, description = "PENDING, RUNNING, SUCCESS or FAILED", pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$"),
        ("mode" = Option<String>, Query, description = "backtest or scan", pattern = "^(backtest|scan)$")),
    responses((status = 200, description = "A page of tasks", body = TaskList<CpmTaskSummary>),
        crate::analytics::AnalyticsErrors))]
async fn cpm_tasks(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Result<Json<TaskList<CpmTaskSummary>>, ApiError> {
    let kinds = match params.get("mode") {
        None => CPM_KINDS.to_vec(),
        Some("backtest") => vec![TaskKind::CpmBacktest],
        Some("scan") => vec![TaskKind::CpmScan],
        Some(m) => {
            return Err(ApiError::bad_request(format!(
                "query parameter 'mode': '{m}' is not backtest or scan"
            )));
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
    params(("task_id" = String, Path, description = "Task UUID")),
    responses((status = 200, description = "The task object of analytics section 2.8", body = AnalyticsTask),
        crate::analytics::AnalyticsErrors))]
async fn scanner_status(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<AnalyticsTask>, ApiError> {
    Ok(Json(analytics_record(
        &owned_task(&state, &caller, &id, &[TaskKind::ScannerBacktest]).await?,
    )))
}

/// The caller's scanner backtest tasks, newest first.
#[utoipa::path(get, path = "/smart-scanner-backtest/tasks", tag = "analytics",
    params(("limit" = Option<i64>, Query, description = "1-200, default 20", minimum = 1, maximum = 200), ("offset" = Option<i64>, Query, description = "Default 0", minimum = 0, maximum = 1000000),
        ("status" = Option<String>, Query, description = "PENDING, RUNNING, SUCCESS or FAILED", pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")),
    responses((status = 200, description = "A page of tasks", body = TaskList<ScannerTaskSummary>),
        crate::analytics::AnalyticsErrors))]
async fn scanner_tasks(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
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
