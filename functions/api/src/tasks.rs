//! Reading tasks, shared by the groups: ownership, paging and the page shape.
//! A task of another owner, or of another group's kind, reads as not found.

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use axum::Json;
use platform::tasks::{Page, Task, TaskFilter, TaskKind, TaskStatus};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

const MAX_LIMIT: i64 = 200;

/// The paging and status filter every task list takes (parsed by `list_page`).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct Paging {
    /// 1-200, default 20
    #[param(minimum = 1, maximum = 200)]
    limit: Option<i64>,
    /// Default 0
    #[param(minimum = 0, maximum = 1000000)]
    offset: Option<i64>,
    /// PENDING, RUNNING, SUCCESS or FAILED
    #[param(pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")]
    status: Option<String>,
}

/// The caller's task of one of `kinds`, or 404.
pub(crate) async fn owned_task(
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

/// A page of the caller's tasks of `kinds` (status filter and paging from the
/// query), each rendered by `summary`.
pub(crate) async fn list_page<S: Serialize>(
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
        .list(&caller.0.email, &filter, Page { limit, offset })
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
            s.parse()
                .map_err(|e: platform::PortError| ApiError::field("status", e.to_string()))
        })
        .transpose()
}

pub(crate) fn param_str(task: &Task, key: &str) -> Value {
    task.params.get(key).cloned().unwrap_or(Value::Null)
}
