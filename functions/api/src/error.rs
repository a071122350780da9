//! One error type for every handler, rendered in the envelope of the route
//! group its path belongs to, chosen in one place ([`ErrorStyle::of_path`]),
//! so a path answers the same shape whichever function (or the embedded
//! server) serves it. The spec gives each service its own envelope
//! (DECISIONS.md, "Errors always have a JSON body"), kept as given:
//! - backtest: `{"detail": "..."}` with the HTTP status;
//! - analytics: `{"code": c, "msg": "...", "data": null}`, HTTP status = code
//!   except 407 and 411, which travel in the body of an HTTP 200;
//! - data: `{"error": "...", "status": s}` with the HTTP status.
//!
//! An error is never 200 to a request that asks for a table (Arrow, Parquet
//! or CSV, [`crate::table_format::asks_for_table`]): a client reading the
//! body as the table it asked for would fail on the JSON. There the
//! analytics codes 407 and 411 have an error status ([`analytics_status`]:
//! 404 and 422), the JSON envelope unchanged: a handler answers such a
//! code as an [`ApiError`] to a request for a table, and [`render_errors`]
//! gives it its status.
//!
//! Routes of no spec service (`/health`, `/auth-info`, `/usage`, `/keys`,
//! `/webhooks`, the documentation pages) and unknown paths answer the
//! backtest service's `{"detail": "..."}`, the one shape the deployment's
//! own routes have.

use crate::table_format::AsksForTable;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use platform::PortError;
use serde::Serialize;
use utoipa::ToSchema;

/// What a handler answers.
pub type Reply = Result<axum::response::Response, ApiError>;

#[derive(Debug, Clone, thiserror::Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Seconds for a `Retry-After` header (429 and some 503s).
    pub retry_after: Option<u64>,
    /// The data cannot support the answer (a 422 that the analytics service
    /// answers as its code 411); other 422s (a reused idempotency key) stay 422.
    pub insufficient_data: bool,
    /// Close the connection after this answer (`Connection: close`): a
    /// refused flood keeps no connection open.
    pub close: bool,
    /// The request field the error is about, when it is about one: every
    /// envelope carries it as `field`.
    pub field: Option<String>,
}

impl ApiError {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            // A quoted value sent back is cut to 200 characters.
            message: services::error::shorten(message.into()),
            retry_after: None,
            insufficient_data: false,
            close: false,
            field: None,
        }
    }
    pub fn closing(mut self) -> Self {
        self.close = true;
        self
    }
    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds.max(1));
        self
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(401, message)
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, message)
    }
    /// 400 for a client mistake in one field, in [`services::FieldError`]'s wording.
    pub fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        services::FieldError::new(field, reason).into()
    }
    pub fn internal() -> Self {
        Self::new(500, "internal server error")
    }
}

/// What a client reads when a service behind the API failed: the cause is
/// in the log, under the request id the answer carries.
pub const UNAVAILABLE: &str = "a service this request needs is unavailable; retry shortly";

impl From<PortError> for ApiError {
    fn from(e: PortError) -> Self {
        match e {
            PortError::NotFound(_) => ApiError::not_found(e.to_string()),
            PortError::Invalid(m) => ApiError::bad_request(m),
            PortError::Unavailable { .. } => {
                tracing::warn!(error = %platform::error::chain(&e), "dependency unavailable");
                // Most outages are a dependency's blip or timeout: ask for a retry soon.
                ApiError::new(503, UNAVAILABLE).with_retry_after(1)
            }
            PortError::Internal { .. } => {
                tracing::error!(error = %platform::error::chain(&e), "internal error");
                ApiError::internal()
            }
        }
    }
}

/// A client mistake in one field: 400 in the one wording every service uses.
impl From<services::FieldError> for ApiError {
    fn from(e: services::FieldError) -> Self {
        ApiError {
            field: Some(e.field.clone()),
            ..ApiError::bad_request(e.to_string())
        }
    }
}

/// The use cases' errors: an invalid field is 400 naming it, insufficient
/// data 422 (analytics answers it as its code 411).
impl From<services::Error> for ApiError {
    fn from(e: services::Error) -> Self {
        match e {
            services::Error::Invalid(f) => f.into(),
            services::Error::NotFound(m) => ApiError::not_found(m),
            services::Error::Unknown(f) => ApiError {
                status: StatusCode::NOT_FOUND,
                ..f.into()
            },
            services::Error::NotSubscribed(m) => ApiError::new(405, m),
            services::Error::Conflict(m) => ApiError::new(409, m),
            services::Error::Forbidden(m) => ApiError::forbidden(m),
            services::Error::Insufficient(_) => ApiError {
                insufficient_data: true,
                ..ApiError::new(422, e.to_string())
            },
            services::Error::Port(p) => p.into(),
        }
    }
}

/// Backtest error body.
#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    pub detail: String,
    /// The request field the error is about (`symbol`, `entry.condition.rule.period`), when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// Analytics error body; the HTTP status equals `code`, except 407 and 411,
/// which come in an HTTP 200 (in a 404 and a 422 to a request for a table).
#[derive(Serialize, ToSchema)]
pub struct AnalyticsError {
    pub code: u16,
    pub msg: String,
    /// Always null.
    #[schema(value_type = Option<Object>)]
    pub data: Option<()>,
    /// The request field the error is about, when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// Data service error body.
#[derive(Serialize, ToSchema)]
pub struct DataError {
    pub error: String,
    pub status: u16,
    /// The request field the error is about, when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl IntoResponse for ApiError {
    /// The body is written by [`render_errors`], which knows the route's group.
    fn into_response(self) -> Response {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = self.status;
        r.extensions_mut().insert(self);
        r
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorStyle {
    Backtest,
    Analytics,
    Data,
}

/// The first path segments of the analytics service's routes: its spec's
/// (4.1-4.9) and this project's additions under them (scanner alerts), and
/// `/views`, its pages. The routers test holds every documented analytics
/// operation to this list and every other operation outside it.
pub const ANALYTICS_ROUTES: [&str; 13] = [
    "seasonality",
    "symbol_corr",
    "asset_corr",
    "pattern_corr",
    "symbol_beta",
    "cpm",
    "smart-stock-scanner",
    "smart-scanner-backtest",
    "smart-option-scanner",
    "screens",
    "reports",
    "company_detail",
    "views",
];

/// The HTTP status of an analytics envelope whose code is `code`: the code
/// itself, but for the spec's two codes that are not HTTP errors (407
/// "Proxy Authentication Required" and 411 "Length Required" as HTTP
/// statuses), which travel in an HTTP 200 as the spec has them; to a
/// request for a table (`table`) they are errors like any other: 407 (no
/// data: nothing fired, nothing matched, no scan yet) is 404 and 411 (the
/// data cannot support the answer) is 422.
pub fn analytics_status(code: u16, table: bool) -> StatusCode {
    match code {
        407 | 411 if !table => StatusCode::OK,
        407 => StatusCode::NOT_FOUND,
        411 => StatusCode::UNPROCESSABLE_ENTITY,
        c => StatusCode::from_u16(c).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    }
}

impl ErrorStyle {
    /// The envelope of the route at `path` (the path as the client sent it,
    /// `/ws` included): the data service's under `/ws`, the analytics
    /// service's under [`ANALYTICS_ROUTES`], otherwise the backtest
    /// service's, which the deployment's own routes share. The one place an
    /// error's shape is chosen: by the route, not by the function serving
    /// it, so `/health` or an unknown path answers alike everywhere.
    pub fn of_path(path: &str) -> ErrorStyle {
        let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
        if first == "ws" {
            ErrorStyle::Data
        } else if ANALYTICS_ROUTES.contains(&first) {
            ErrorStyle::Analytics
        } else {
            ErrorStyle::Backtest
        }
    }

    /// The error in the service's envelope. A 5xx names the request id (the
    /// `x-request-id` its log lines carry), so a report can be matched to
    /// the cause, which only the log holds. `table`: the request asked for a
    /// table, so no error is answered in an HTTP 200.
    pub fn render(self, e: &ApiError, request_id: Option<&str>, table: bool) -> Response {
        let code = e.status.as_u16();
        let message = match request_id {
            Some(id) if e.status.is_server_error() => format!("{} (request id {id})", e.message),
            _ => e.message.clone(),
        };
        let mut r = match self {
            ErrorStyle::Backtest => {
                let body = ErrorDetail {
                    detail: message,
                    field: e.field.clone(),
                };
                (e.status, axum::Json(body)).into_response()
            }
            ErrorStyle::Analytics => {
                // Insufficient data is the analytics code 411; 407 and 411
                // travel in an HTTP 200 unless a table was asked for.
                let code = if e.insufficient_data { 411 } else { code };
                let http = if matches!(code, 407 | 411) {
                    analytics_status(code, table)
                } else {
                    e.status
                };
                let body = AnalyticsError {
                    code,
                    msg: message,
                    data: None,
                    field: e.field.clone(),
                };
                (http, axum::Json(body)).into_response()
            }
            ErrorStyle::Data => (
                e.status,
                axum::Json(DataError {
                    error: message,
                    status: code,
                    field: e.field.clone(),
                }),
            )
                .into_response(),
        };
        if code == 401 {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Basic realm=\"marketlab\", charset=\"UTF-8\""),
            );
        }
        if let Some(secs) = e.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
        }
        if e.close {
            r.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
        }
        r
    }
}

/// Headers an error keeps when it is rendered in its group's envelope.
const KEPT_HEADERS: [&str; 3] = ["ratelimit", "ratelimit-policy", crate::auth::MODE_HEADER];

/// Gives every error response of a router the JSON envelope of its path's
/// group ([`ErrorStyle::of_path`]): its own errors, the router's empty
/// 404/405 answers, and the plain-text rejections of axum's extractors
/// (whose text becomes the message). The path is the one sent
/// ([`axum::extract::OriginalUri`]), so a router nested under `/ws` renders
/// as the data service.
///
/// To a request for a table ([`AsksForTable`]) no error is a 200: an
/// [`ApiError`] is rendered with its error status ([`analytics_status`]
/// for the analytics codes 407 and 411).
pub async fn render_errors(
    uri: axum::extract::OriginalUri,
    request_id: Option<axum::Extension<tower_http::request_id::RequestId>>,
    AsksForTable(table): AsksForTable,
    response: Response,
) -> Response {
    let style = ErrorStyle::of_path(uri.path());
    let id = request_id
        .as_ref()
        .and_then(|r| r.0.header_value().to_str().ok());
    if let Some(e) = response.extensions().get::<ApiError>() {
        let mut rendered = style.render(e, id, table);
        // What the auth layer said about the caller's limits and mode stays.
        for name in KEPT_HEADERS {
            if let Some(v) = response.headers().get(name) {
                rendered.headers_mut().insert(name, v.clone());
            }
        }
        return rendered;
    }
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    let body = response.into_body();
    let text = match axum::body::to_bytes(body, 4096).await {
        Ok(b) => String::from_utf8_lossy(&b).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = match status {
        StatusCode::NOT_FOUND if text.is_empty() => "no such endpoint".to_string(),
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed on this endpoint".to_string(),
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is too large".to_string(),
        _ if !text.is_empty() => text,
        s => s.canonical_reason().unwrap_or("error").to_string(),
    };
    if status.is_server_error() {
        tracing::error!(%status, %message, "unhandled server error");
        // Its text is whatever failed underneath: logged, not answered.
        let generic = status.canonical_reason().unwrap_or("server error");
        return style.render(
            &ApiError::new(status.as_u16(), generic.to_lowercase()),
            id,
            table,
        );
    }
    style.render(&ApiError::new(status.as_u16(), message), id, table)
}

fn is_json(r: &Response) -> bool {
    r.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"))
}

/// A place refused by a fair share (the compute pool, long-polls): 429 for
/// the tenant's share, 503 for the server's, both worth a retry in a second.
impl From<platform::shares::Refused> for ApiError {
    fn from(r: platform::shares::Refused) -> Self {
        let status = match r {
            platform::shares::Refused::Tenant { .. } => 429,
            platform::shares::Refused::Full { .. } => {
                tracing::warn!(refused = %r, "a server-wide share is full");
                503
            }
        };
        ApiError::new(status, r.to_string()).with_retry_after(1)
    }
}

/// A submit refused: over the month's compute is 429 until the month ends,
/// a reused key 422, a store or queue that failed 503 or 500.
impl From<services::submit::SubmitError> for ApiError {
    fn from(e: services::submit::SubmitError) -> Self {
        use services::submit::SubmitError;
        match e {
            SubmitError::OverLimit(over) => crate::auth::over_limit(over),
            SubmitError::KeyReused { .. } => ApiError::new(422, e.to_string()),
            SubmitError::StoreUnavailable(_) => {
                tracing::warn!(error = %platform::error::chain(&e), "task store unavailable");
                ApiError::new(503, format!("{e}; retry shortly")).with_retry_after(1)
            }
            SubmitError::NotQueued(_) => ApiError::new(500, e.to_string()),
            SubmitError::Store(p) => p.into(),
        }
    }
}
