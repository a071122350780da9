//! Storing and queueing a task for every submit endpoint, with the optional
//! `Idempotency-Key` header: the same key from the same account within 24
//! hours answers with the task it first created, so a client may retry a
//! submit whose answer it never saw (a timeout, a crash) without running it twice.

use crate::error::ApiError;
use crate::state::AppState;
use axum::http::HeaderMap;
use platform::PortError;
use platform::accounts::Account;
use platform::queue::JobMessage;
use platform::tasks::{Claim, Created, NewTask, Outcome, Task, TaskStatus};

pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Set to `true` on an answer that repeats an earlier submit's.
pub const REPLAYED: &str = "idempotent-replayed";
const MAX_KEY: usize = 255;

/// The key from the request headers: 1 to 255 visible ASCII characters.
pub fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(IDEMPOTENCY_KEY) else {
        return Ok(None);
    };
    let bad = |why: &str| ApiError::bad_request(format!("header 'Idempotency-Key': {why}"));
    let text = value
        .to_str()
        .map_err(|_| bad("must be visible ASCII characters"))?
        .trim();
    if text.is_empty() || text.len() > MAX_KEY {
        return Err(bad(&format!(
            "must be 1 to {MAX_KEY} characters, got {}",
            text.len()
        )));
    }
    if !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad("must be visible ASCII characters without spaces"));
    }
    Ok(Some(text.to_string()))
}

/// A stored and queued task; `replayed` when an earlier submit with the same
/// key created it.
pub struct Submitted {
    pub task: Task,
    pub replayed: bool,
}

impl Submitted {
    /// The analytics submit answer: 202 `{task_id, message}`, marked when a
    /// retry was answered with the task its key first created.
    pub fn accepted(&self, message: String) -> axum::response::Response {
        use axum::response::IntoResponse;
        let answer = crate::openapi::SubmitResponse {
            message,
            task_id: self.task.id.to_string(),
        };
        let mut response = (axum::http::StatusCode::ACCEPTED, axum::Json(answer)).into_response();
        if self.replayed {
            response
                .headers_mut()
                .insert(REPLAYED, axum::http::HeaderValue::from_static("true"));
        }
        response
    }
}

fn store_error(e: PortError) -> ApiError {
    match e {
        PortError::Internal(_) => ApiError::from(e),
        other => ApiError::new(
            503,
            format!("the task store is unavailable; the task was not queued ({other})"),
        ),
    }
}

/// Stores `new` (under `key` when given) and queues it. A replayed key's task
/// is queued again while still PENDING: its first message may have been lost
/// with a crashed instance, and a second message is harmless (claims are
/// conditional). The same key with different parameters is 422.
/// The task's estimated compute is reserved first (`services::compute`): a
/// tenant whose month is used up gets 429 before anything is stored, and a
/// reservation whose task is not created (a replay, a failure) is given back.
pub async fn submit(
    state: &AppState,
    caller: &Account,
    new: NewTask,
    key: Option<&str>,
) -> Result<Submitted, ApiError> {
    let now = chrono::Utc::now();
    let reserved = match &state.metering {
        Some(m) => {
            let r = services::compute::reserved(new.kind, &new.params, now.date_naive());
            m.reserve_compute(&caller.email, caller.plan.code, r.total(), now)
                .await
                .map_err(crate::auth::over_limit)?;
            r.total()
        }
        None => 0,
    };
    let give_back = || async {
        if let Some(m) = &state.metering
            && reserved > 0
        {
            m.release_compute(&caller.email, reserved, now.date_naive())
                .await;
        }
    };
    let stored = store_and_queue(state, new, key).await;
    if !matches!(
        stored,
        Ok(Submitted {
            replayed: false,
            ..
        })
    ) {
        give_back().await;
    }
    stored
}

/// Stores `new` (under `key`) and queues it.
async fn store_and_queue(
    state: &AppState,
    new: NewTask,
    key: Option<&str>,
) -> Result<Submitted, ApiError> {
    let (task, replayed) = match key {
        None => (state.tasks.create(new).await.map_err(store_error)?, false),
        Some(key) => {
            let params = new.params.clone();
            match state
                .tasks
                .create_idempotent(new, key)
                .await
                .map_err(store_error)?
            {
                Created::New(t) => (t, false),
                Created::Existing(t) if t.params != params => {
                    return Err(ApiError::new(
                        422,
                        format!(
                            "Idempotency-Key '{key}' was used for a different request (task {}); use a new key for a new request",
                            t.id
                        ),
                    ));
                }
                Created::Existing(t) => {
                    if t.status != TaskStatus::Pending {
                        return Ok(Submitted {
                            task: t,
                            replayed: true,
                        });
                    }
                    (t, true)
                }
            }
        }
    };
    if let Err(e) = state.queue.enqueue(JobMessage::for_task(&task)).await {
        tracing::error!(task_id = %task.id, error = %e, "enqueue failed");
        // Leave no orphan behind: the stored task is marked failed.
        if let Ok(Claim::Claimed(t)) = state
            .tasks
            .claim(
                task.id,
                platform::tasks::now(),
                chrono::TimeDelta::minutes(1),
            )
            .await
        {
            let _ = state
                .tasks
                .finish(
                    t.id,
                    t.attempts,
                    Outcome::Failed("the task could not be queued; submit it again".into()),
                    platform::tasks::now(),
                )
                .await;
        }
        return Err(ApiError::new(
            500,
            "the message broker did not accept the task; submit it again",
        ));
    }
    Ok(Submitted { task, replayed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_bounded_visible_ascii() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(IDEMPOTENCY_KEY, v.parse().unwrap());
            idempotency_key(&h)
        };
        assert_eq!(idempotency_key(&HeaderMap::new()).unwrap(), None);
        assert_eq!(with(" abc-123 ").unwrap().as_deref(), Some("abc-123"));
        for bad in ["", "a b", &"k".repeat(256)] {
            let e = with(bad).unwrap_err();
            assert!(
                e.message.starts_with("header 'Idempotency-Key'"),
                "{}",
                e.message
            );
        }
    }
}
