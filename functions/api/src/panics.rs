//! A handler that panics answers 500, in its service's envelope with the
//! request id, and takes nothing down with it: hyper would otherwise drop
//! the connection with no answer. The locks a handler can hold do not
//! poison (parking_lot), so the next request is served as usual.

use crate::error::ApiError;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use tower_http::request_id::RequestId;

/// Runs the rest of the request, turning a panic into a logged 500.
pub async fn catch(req: Request, next: Next) -> Response {
    let id = req
        .extensions()
        .get::<RequestId>()
        .and_then(|id| id.header_value().to_str().ok())
        .unwrap_or("-")
        .to_string();
    let path = req.uri().path().to_string();
    match AssertUnwindSafe(next.run(req)).catch_unwind().await {
        Ok(response) => response,
        Err(panic) => {
            let what = platform::pool::panic_text(&*panic);
            tracing::error!(request_id = %id, %path, panic = %what, "handler panicked; answered 500");
            platform::telemetry::panic_caught();
            ApiError::internal().into_response()
        }
    }
}
