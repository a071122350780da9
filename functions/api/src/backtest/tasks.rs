//! The backtest service's task record (2.10) and summaries (2.12).

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
use services::backtest::{UPLOAD_FIELD, upload_digest};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(scoped!(Read: backtest_status))
        .routes(scoped!(Read: backtest_tasks))
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
    /// The task as a page to open in a browser (charts, metrics, trades).
    pub report_url: String,
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
        report_url: format!("/backtest/report/{}", t.id),
    }
}

/// A task as its status read answers it (without the uploaded rows): the
/// record, an upload's summary linking to the rows.
pub(crate) fn status_record(t: &Task) -> TaskRecord {
    let mut record = backtest_record(t);
    if let Some(summary) = record
        .params
        .get_mut(UPLOAD_FIELD)
        .and_then(Value::as_object_mut)
    {
        summary.insert(
            "url".into(),
            json!(format!("/backtest/status/{}?include=csv_data", t.id)),
        );
    }
    record
}

/// One of the caller's tasks; another account's id is 404.
#[utoipa::path(get, path = "/backtest/status/{task_id}", tag = "backtest",
    params(("task_id" = String, Path, description = "Task UUID"),
        ("include" = Option<String>, Query, description = "`csv_data`: a CSV-mode task's uploaded bars as rows in `params.csv_data` (otherwise `params.csv_upload` summarises them)", pattern = "^csv_data$"),
        crate::tasks::Wait),
    responses((status = 200, description = "The task", body = TaskRecord),
        (status = 400, description = "Unknown `include`, or a `wait` that is not a number from 0", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 404, description = "Unknown or foreign task", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn backtest_status(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
    query: Params,
) -> Result<Json<TaskRecord>, ApiError> {
    let rows = match query.get("include") {
        None => false,
        Some("csv_data") => true,
        Some(other) => {
            return Err(ApiError::field(
                "include",
                format!("'{other}' is not csv_data"),
            ));
        }
    };
    let kinds = [TaskKind::StrategyBacktest];
    let t = crate::tasks::owned_task_waiting(&state, &caller, &id, &kinds, &query).await?;
    let mut record = status_record(&t);
    if rows && let Some(digest) = upload_digest(&t.params) {
        let upload = state.uploads.get(&t.owner, digest).await?.ok_or_else(|| {
            ApiError::not_found(format!("the uploaded bars of task '{id}' are gone"))
        })?;
        record.params["csv_data"] = services::backtest::csv::rows_json(&upload);
    }
    Ok(Json(record))
}

/// The caller's tasks, newest first.
#[utoipa::path(get, path = "/backtest/tasks", tag = "backtest",
    params(crate::tasks::Paging),
    responses((status = 200, description = "A page of tasks", body = TaskList<TaskSummary>),
        (status = 400, description = "Bad paging or status", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn backtest_tasks(
    t: Tenant,
    params: Params,
) -> Result<Json<TaskList<TaskSummary>>, ApiError> {
    list_page(
        &t.state,
        &t.caller,
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
