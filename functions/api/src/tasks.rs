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

/// The caller's task of one of `kinds`, or 404. A damaged task reads
/// FAILED with its damage as the error (under every kind when its kind is
/// what is damaged); one whose owner cannot be read is no one's, 404.
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
        .get_owned(uuid, &caller.owner())
        .await?
        .filter(|t| t.is_of(kinds))
        .ok_or_else(not_found)
}

/// `task` when it is whole; a damaged one answers 409 with its damage,
/// for reads that need more of it than its status.
pub(crate) fn whole(task: Task) -> Result<Task, ApiError> {
    match &task.damage {
        None => Ok(task),
        Some(_) => Err(ApiError::new(
            409,
            format!(
                "task '{}' is FAILED: {}",
                task.id,
                task.error.as_deref().unwrap_or_default()
            ),
        )),
    }
}

/// The longest `wait` a status read holds (API Gateway cuts a request at
/// 29 s; one cap for every runtime).
pub const MAX_WAIT_SECONDS: f64 = 20.0;

/// The long-poll every task status read takes.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct Wait {
    /// Seconds to hold the answer until the task has ended (SUCCESS or FAILED); it comes at once when the task ends, or with its current state when the time is up. 0-20 (larger values are capped at 20); absent or 0 answers at once.
    #[param(minimum = 0, maximum = 20)]
    wait: Option<f64>,
}

/// `wait` of a status read: none, or a duration capped at [`MAX_WAIT_SECONDS`].
fn wait_param(params: &Params) -> Result<Option<std::time::Duration>, ApiError> {
    let Some(seconds) = params.opt::<f64>("wait", "a number of seconds")? else {
        return Ok(None);
    };
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(ApiError::field(
            "wait",
            format!("{seconds} is not a number of seconds from 0 to {MAX_WAIT_SECONDS}"),
        ));
    }
    Ok(Some(std::time::Duration::from_secs_f64(
        seconds.min(MAX_WAIT_SECONDS),
    )))
}

/// [`owned_task`], held up to the query's `wait` ([`Wait`]) until the task
/// has ended.
pub(crate) async fn owned_task_waiting(
    state: &AppState,
    caller: &Caller,
    id: &str,
    kinds: &[TaskKind],
    query: &Params,
) -> Result<Task, ApiError> {
    held(
        state,
        &caller.owner(),
        id,
        query,
        || owned_task(state, caller, id, kinds),
        |t: &Task| t.status.is_finished(),
    )
    .await
}

/// `read` of `id`, held up to the query's `wait` ([`Wait`]) until `ended`
/// holds: woken by this process's worker the moment an outcome of `id` is
/// stored (a chunk's end wakes its batch), else read again every
/// `long_poll_reread` of the state's limits. It holds no worker or lock
/// while it waits, and one of `tenant`'s long-poll places (past its share
/// a 429, past the server's a 503, each closing the connection).
pub(crate) async fn held<T, F, Fut>(
    state: &AppState,
    tenant: &str,
    id: &str,
    query: &Params,
    mut read: F,
    ended: fn(&T) -> bool,
) -> Result<T, ApiError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, ApiError>>,
{
    hold(state, tenant, id, query, |_, _| read(), ended).await
}

/// [`held`] with one read per wake-up for every waiter on `id`
/// ([`crate::shared_reads::SharedReads`]): a read that started after the
/// announcement that woke a waiter answers it too. `read` is given the
/// outcomes counted to `id` when the long-poll read them
/// (`TaskStore::ends`).
#[cfg(feature = "backtest")]
pub(crate) async fn held_shared<T, F, Fut>(
    state: &AppState,
    shared: &crate::shared_reads::SharedReads<T>,
    tenant: &str,
    id: &str,
    query: &Params,
    read: F,
    ended: fn(&T) -> bool,
) -> Result<std::sync::Arc<T>, ApiError>
where
    F: Fn(Option<u64>) -> Fut,
    Fut: std::future::Future<Output = Result<T, ApiError>>,
{
    let reader = shared.reader(tenant, id);
    let (reader, read) = (&reader, &read);
    hold(
        state,
        tenant,
        id,
        query,
        |since, counted| reader.read(shared, since, move || read(counted)),
        |t: &std::sync::Arc<T>| ended(t),
    )
    .await
}

/// The long-poll of [`held`]: `read` is given the instant its answer must
/// be fresh from (the request's arrival, then each wake-up) and the
/// outcomes counted to the task, when read.
async fn hold<T, F, Fut>(
    state: &AppState,
    tenant: &str,
    id: &str,
    query: &Params,
    mut read: F,
    ended: impl Fn(&T) -> bool,
) -> Result<T, ApiError>
where
    F: FnMut(tokio::time::Instant, Option<u64>) -> Fut,
    Fut: std::future::Future<Output = Result<T, ApiError>>,
{
    let arrived = tokio::time::Instant::now();
    let wait = wait_param(query)?;
    let (Some(wait), Ok(uuid)) = (wait.filter(|w| !w.is_zero()), Uuid::parse_str(id)) else {
        return read(arrived, None).await;
    };
    // Refused, the connection closes too: a flood of refused long-polls
    // holds none.
    let _place = state
        .long_polls
        .admit(tenant)
        .map_err(|r| ApiError::from(r).closing())?;
    hold_admitted(state, uuid, arrived, arrived + wait, read, ended).await
}

/// A task just submitted, held up to `wait` (the submit's `Prefer: wait`)
/// for its end as a status read's long-poll is: `Some` once it has ended;
/// `None` when it has not by then, or when the tenant's long-poll places
/// are all taken (the submit then answers as it does without the
/// preference, which a server may always ignore).
#[cfg(feature = "backtest")]
pub(crate) async fn ended_within(
    state: &AppState,
    caller: &Caller,
    id: Uuid,
    kinds: &[TaskKind],
    wait: std::time::Duration,
) -> Result<Option<Task>, ApiError> {
    let arrived = tokio::time::Instant::now();
    let Ok(_place) = state.long_polls.admit(&caller.owner()) else {
        return Ok(None);
    };
    let text = id.to_string();
    let t = hold_admitted(
        state,
        id,
        arrived,
        arrived + wait,
        |_, _| owned_task(state, caller, &text, kinds),
        |t: &Task| t.status.is_finished(),
    )
    .await?;
    Ok(t.status.is_finished().then_some(t))
}

/// The loop of a long-poll whose place is held: reads until `ended` or the
/// deadline, woken by the task's end.
async fn hold_admitted<T, F, Fut>(
    state: &AppState,
    uuid: Uuid,
    arrived: tokio::time::Instant,
    deadline: tokio::time::Instant,
    mut read: F,
    ended: impl Fn(&T) -> bool,
) -> Result<T, ApiError>
where
    F: FnMut(tokio::time::Instant, Option<u64>) -> Fut,
    Fut: std::future::Future<Output = Result<T, ApiError>>,
{
    let ends = platform::tasks::finishes::finishes().subscribe(uuid);
    let mut counted = Counted::new(state, uuid);
    let mut since = arrived;
    loop {
        // Armed before the read, so an end between the two still wakes it;
        // the count likewise is taken before the read.
        let woken = ends.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        counted.take().await;
        let now_read = read(since, counted.seen).await?;
        let now = tokio::time::Instant::now();
        if ended(&now_read) || now >= deadline {
            return Ok(now_read);
        }
        let reread = tokio::time::sleep(state.limits.long_poll_reread.min(deadline - now));
        since = tokio::select! {
            // What was stored by the announcement: a read started since
            // (another waiter's) is fresh enough.
            () = &mut woken => ends.announced().unwrap_or_else(tokio::time::Instant::now),
            () = counted.changed() => tokio::time::Instant::now(),
            () = reread => tokio::time::Instant::now(),
        };
    }
}

/// The outcomes counted to a long-polled task, read every
/// `long_poll_check` (none when unset): how a long-poll hears of an outcome
/// stored by a worker in another process without reading the whole task.
struct Counted<'a> {
    state: &'a AppState,
    id: Uuid,
    seen: Option<u64>,
    /// `seen` was just read by [`Counted::changed`]: no need to take it again.
    current: bool,
}

impl<'a> Counted<'a> {
    fn new(state: &'a AppState, id: Uuid) -> Self {
        Counted {
            state,
            id,
            seen: None,
            current: false,
        }
    }

    /// Notes the count now, before a full read.
    async fn take(&mut self) {
        if self.state.limits.long_poll_check.is_some() && !self.current {
            self.seen = self.read().await;
        }
        self.current = false;
    }

    /// Resolves once the count differs from the one taken, noting it; never
    /// when no check is set (the announcement or the full re-read remain).
    async fn changed(&mut self) {
        let Some(every) = self.state.limits.long_poll_check else {
            return std::future::pending().await;
        };
        loop {
            tokio::time::sleep(every).await;
            if let Some(n) = self.read().await
                && Some(n) != self.seen
            {
                (self.seen, self.current) = (Some(n), true);
                return;
            }
        }
    }

    /// The count, `None` when it cannot be read (then only a full re-read
    /// sees the outcome).
    async fn read(&self) -> Option<u64> {
        match self.state.tasks.ends(self.id).await {
            Ok(n) => Some(n),
            Err(e) => {
                tracing::debug!(task_id = %self.id, error = %e, "outcome count not read");
                None
            }
        }
    }
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
        .list(&caller.owner(), &filter, Page { limit, offset })
        .await?;
    Ok(Json(TaskList {
        tasks: listed.tasks.iter().map(summary).collect(),
        total: listed.total,
        limit,
        offset,
    }))
}

pub(crate) fn status_filter(params: &Params) -> Result<Option<TaskStatus>, ApiError> {
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
