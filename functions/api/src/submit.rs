//! The HTTP side of submitting a task; `services::submit` does the rest.
//! Here: the request ([`Submission`]), the optional `Idempotency-Key` header (the same key from the same
//! account within 24 hours answers with the task it first created, so a
//! client may retry a submit whose answer it never saw without running it
//! twice), the optional `Prefer: wait=N` and the 202 answer (or, when the
//! task ended within that wait, the 200 answer holding its record).

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use axum::http::HeaderMap;
use platform::tasks::{NewTask, TaskKind};
pub use services::submit::Submitted;
use services::submit::Submitter;

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

/// The submit answer: 202 `{task_id, message}`, marked when a retry was
/// answered with the task its key first created.
pub fn accepted(submitted: &Submitted, message: String) -> axum::response::Response {
    use axum::response::IntoResponse;
    let answer = crate::openapi::SubmitResponse {
        message,
        task_id: submitted.task.id.to_string(),
    };
    let mut response = (axum::http::StatusCode::ACCEPTED, axum::Json(answer)).into_response();
    if submitted.replayed {
        response
            .headers_mut()
            .insert(REPLAYED, axum::http::HeaderValue::from_static("true"));
    }
    response
}

/// The `Prefer` header (RFC 7240).
#[cfg(feature = "backtest")]
pub const PREFER: &str = "prefer";
/// Says which preference shaped the answer.
#[cfg(feature = "backtest")]
pub const PREFERENCE_APPLIED: &str = "preference-applied";

/// `wait=N` of the request's `Prefer` headers (RFC 7240: a list of
/// preferences, each `token[=value]`, parameters after `;`): seconds the
/// caller would rather wait for the task's end than read it again, capped at
/// the status long-poll's [`crate::tasks::MAX_WAIT_SECONDS`]. A malformed or
/// zero wait is no preference: a server may ignore any preference.
#[cfg(feature = "backtest")]
pub fn preferred_wait(headers: &HeaderMap) -> Option<std::time::Duration> {
    let seconds = headers
        .get_all(PREFER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|p| {
            let (name, value) = p.split(';').next()?.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("wait")
                .then(|| value.trim().trim_matches('"').parse::<f64>().ok())?
        })
        .find(|s| s.is_finite() && *s > 0.0)?;
    Some(std::time::Duration::from_secs_f64(
        seconds.min(crate::tasks::MAX_WAIT_SECONDS),
    ))
}

/// A submit answered with its task's final record (`Prefer: wait` met):
/// 200, the record as its status read gives it, `Preference-Applied`.
#[cfg(feature = "backtest")]
pub fn finished<T: serde::Serialize>(
    submitted: &Submitted,
    wait: std::time::Duration,
    record: T,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut response = axum::Json(record).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = axum::http::HeaderValue::from_str(&format!("wait={}", wait.as_secs_f64())) {
        headers.insert(PREFERENCE_APPLIED, v);
    }
    if submitted.replayed {
        headers.insert(REPLAYED, axum::http::HeaderValue::from_static("true"));
    }
    response
}

/// A submit's request: its optional `Idempotency-Key` and its JSON body
/// (the key is checked first).
pub struct Submission {
    pub key: Option<String>,
    pub body: serde_json::Value,
}

impl<S: Send + Sync> axum::extract::FromRequest<S> for Submission {
    type Rejection = axum::response::Response;

    async fn from_request(
        request: axum::extract::Request,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        use axum::response::IntoResponse;
        let key = idempotency_key(request.headers()).map_err(IntoResponse::into_response)?;
        let bytes = axum::body::Bytes::from_request(request, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let body = crate::extract::json_body(&bytes).map_err(IntoResponse::into_response)?;
        Ok(Submission { key, body })
    }
}

impl Submission {
    /// Submits `params` as a task of `kind` owned by `caller`, through the
    /// one submission use case (`services::submit`), with this deployment's
    /// stores and limits.
    pub async fn submit(
        &self,
        state: &AppState,
        caller: &Caller,
        kind: TaskKind,
        params: serde_json::Value,
    ) -> Result<Submitted, ApiError> {
        submit(state, caller, self.key.as_deref(), kind, params).await
    }
}

/// Submits `params` as a task of `kind` owned by `caller`, under the
/// idempotency `key` if one was sent.
pub async fn submit(
    state: &AppState,
    caller: &Caller,
    key: Option<&str>,
    kind: TaskKind,
    params: serde_json::Value,
) -> Result<Submitted, ApiError> {
    let submitter = Submitter {
        tasks: state.tasks.as_ref(),
        queue: state.queue.as_ref(),
        metering: state.metering.as_deref(),
    };
    let owner = caller.owner();
    let new = NewTask {
        owner: owner.clone(),
        kind,
        params,
    };
    let submitted = submitter.submit(caller.account.plan.code, new, key).await?;
    // Tasks submitted, for the account and the key that sent them (`/usage`).
    if let Some(m) = &state.metering
        && !submitted.replayed
    {
        let counter = format!("{}{kind}", services::usage::TASKS_PREFIX);
        m.record(&owner, &counter, 1);
        if let Some(k) = &caller.key {
            m.record(&owner, &platform::metering::key_counter(&k.id, &counter), 1);
        }
    }
    Ok(submitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "backtest")]
    #[test]
    fn a_wait_preference_is_read_from_the_list_and_capped() {
        let with = |values: &[&str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append(PREFER, v.parse().unwrap());
            }
            preferred_wait(&h).map(|d| d.as_secs_f64())
        };
        assert_eq!(with(&[]), None);
        assert_eq!(with(&["wait=5"]), Some(5.0));
        assert_eq!(with(&["respond-async, Wait=0.25"]), Some(0.25));
        assert_eq!(with(&["respond-async", "wait=\"2\"; x=y"]), Some(2.0));
        assert_eq!(with(&["wait=600"]), Some(crate::tasks::MAX_WAIT_SECONDS));
        for ignored in [
            "wait=0",
            "wait=-1",
            "wait=soon",
            "wait",
            "return=minimal",
            "wait=NaN",
        ] {
            assert_eq!(with(&[ignored]), None, "{ignored}");
        }
    }

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
