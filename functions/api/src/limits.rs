//! Request limits every route enforces, on both runtimes: URI and header
//! size, body size and how long a client may take to send it, the shape of
//! a JSON body ([`crate::shape`]), and how long the answer may take. Each
//! refusal is an [`ApiError`], so it reaches the client in the service's
//! JSON envelope.

use crate::error::ApiError;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::CONTENT_LENGTH;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use std::time::Duration;

/// Longest request target (path and query) accepted.
pub const MAX_URI_BYTES: usize = 8 * 1024;
/// Most header fields, and their total size, accepted in one request.
pub const MAX_HEADERS: usize = 100;
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Largest request body; 6 MiB by default, the payload Lambda accepts.
    pub body_bytes: usize,
    /// How long a client may take to send its whole body (a slow sender gets 408).
    pub body_timeout: Duration,
    /// How long the answer may take once the body is in (503 past it).
    pub request_timeout: Duration,
    /// How often a long-polled status is read again in full when no notice
    /// comes: every 2 s, a safety net under the notices (the embedded
    /// workers' announcements, or the counts of `long_poll_check`).
    pub long_poll_reread: Duration,
    /// How often a long-poll reads the outcomes counted to its task
    /// (`TaskStore::ends`: one small record) and, when they changed, the
    /// task in full: `MARKETLAB_LONG_POLL_CHECK_MS` when the limits are
    /// made, else 10 ms, so an answer follows an outcome stored in another
    /// process (the AWS worker) within about that and one read. `None`
    /// where the workers' announcements reach the long-polls (the embedded
    /// server with its workers), or when the setting is 0.
    pub long_poll_check: Option<Duration>,
    /// Long-polled status reads held at once, per tenant and overall.
    pub long_polls: platform::shares::Limits,
    /// How long a custom indicator's calculation may take (504 past it):
    /// `MARKETLAB_CUSTOM_TIMEOUT_MS` when the limits are made, else 10 s.
    /// A server's own setting, so a test of one server never changes
    /// another's.
    pub custom_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            body_bytes: 6 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(60),
            long_poll_reread: Duration::from_secs(2),
            long_poll_check: match std::env::var("MARKETLAB_LONG_POLL_CHECK_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(10)
            {
                0 => None,
                ms => Some(Duration::from_millis(ms)),
            },
            long_polls: crate::state::LONG_POLLS,
            custom_timeout: Duration::from_millis(
                std::env::var("MARKETLAB_CUSTOM_TIMEOUT_MS")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(10_000),
            ),
        }
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        413,
        format!("the request body is larger than the limit of {limit} bytes"),
    )
}

enum Unread {
    TooLarge,
    Broken(axum::Error),
}

/// The body, up to `limit` bytes. Past the limit the rest is read and
/// dropped (up to 16 times the limit, while it keeps coming), so a client
/// still sending gets the 413 instead of a broken connection; memory never
/// holds more than `limit`.
async fn read(mut body: Body, limit: usize, declared: Option<u64>) -> Result<Bytes, Unread> {
    let drain_cap = (limit as u64).saturating_mul(16);
    if declared.is_some_and(|n| n > drain_cap) {
        return Err(Unread::TooLarge);
    }
    let mut kept = BytesMut::new();
    let mut seen: u64 = 0;
    let mut over = declared.is_some_and(|n| n > limit as u64);
    loop {
        // Once over the limit, a sender that pauses is not waited for.
        let next = if over {
            match tokio::time::timeout(std::time::Duration::from_secs(1), body.frame()).await {
                Ok(next) => next,
                Err(_) => break,
            }
        } else {
            body.frame().await
        };
        let Some(frame) = next else {
            break;
        };
        let frame = frame.map_err(Unread::Broken)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen += data.len() as u64;
        if seen > limit as u64 {
            over = true;
            kept = BytesMut::new();
        }
        if over {
            if seen > drain_cap {
                break;
            }
            continue;
        }
        kept.extend_from_slice(&data);
    }
    if over {
        return Err(Unread::TooLarge);
    }
    Ok(kept.freeze())
}

/// Middleware: checks the request head, buffers the body within the size and
/// time limits, then runs the rest of the stack within the request timeout.
pub async fn enforce(State(limits): State<Limits>, request: Request, next: Next) -> Response {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if target > MAX_URI_BYTES {
        return ApiError::new(
            414,
            format!("the request target is {target} bytes; the limit is {MAX_URI_BYTES}"),
        )
        .into_response();
    }
    let headers = request.headers();
    let header_bytes: usize = headers
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    if headers.len() > MAX_HEADERS || header_bytes > MAX_HEADER_BYTES {
        return ApiError::new(
            431,
            format!(
                "{} header fields of {header_bytes} bytes; the limits are {MAX_HEADERS} fields and {MAX_HEADER_BYTES} bytes",
                headers.len()
            ),
        )
        .into_response();
    }
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let (parts, body) = request.into_parts();
    let bytes =
        match tokio::time::timeout(limits.body_timeout, read(body, limits.body_bytes, declared))
            .await
        {
            Err(_) => {
                return ApiError::new(
                    408,
                    format!(
                        "the request body did not arrive within {} s",
                        limits.body_timeout.as_secs_f64()
                    ),
                )
                .into_response();
            }
            Ok(Err(Unread::TooLarge)) => return too_large(limits.body_bytes).into_response(),
            Ok(Err(Unread::Broken(e))) => {
                return ApiError::bad_request(format!("the request body could not be read: {e}"))
                    .into_response();
            }
            Ok(Ok(bytes)) => bytes,
        };
    let content_type = parts
        .headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if crate::shape::is_json(content_type, &bytes)
        && let Err(e) = crate::shape::check(&bytes)
    {
        return e.into_response();
    }
    let request = Request::from_parts(parts, Body::from(bytes));
    match tokio::time::timeout(limits.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(
                seconds = limits.request_timeout.as_secs_f64(),
                "request timed out"
            );
            ApiError::new(
                503,
                format!(
                    "the request did not complete within {} s; retry shortly",
                    limits.request_timeout.as_secs_f64()
                ),
            )
            .into_response()
        }
    }
}
