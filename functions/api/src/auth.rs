//! HTTP Basic authentication and plan checks, as middleware per service group.

use crate::error::{ApiError, ErrorStyle};
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use platform::accounts::{Account, Service, Verdict};
use platform::metering::{DATA_BYTES, DATA_ROWS, OverLimit};

/// The verified caller, available to handlers as an extension.
#[derive(Debug, Clone)]
pub struct Caller(pub Account);

/// What every tenant handler reads: the state and the caller the auth layer
/// verified (a route outside that layer answers 500, a server fault).
pub struct Tenant {
    pub state: AppState,
    pub caller: Caller,
}

impl axum::extract::FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, ApiError> {
        let caller = parts.extensions.get::<Caller>().cloned();
        Ok(Tenant {
            state: state.clone(),
            caller: caller.ok_or_else(ApiError::internal)?,
        })
    }
}

/// E-mail and password from an `Authorization: Basic` header.
pub fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// Who may pass a group's authenticated routes, and what they count as.
#[derive(Clone, Copy)]
pub struct Gate {
    pub service: Service,
    pub style: ErrorStyle,
    /// Whether the plan must include `service` (`/usage` is open to every account).
    pub plan_check: bool,
}

/// Verifies the caller and the plan's access to the gate's service, then
/// applies the plan's requests per minute and counts the request (and, on
/// the data service, the rows and bytes it returned). The data service
/// answers a missing plan with 401, the others with 403 (their specs differ).
pub async fn require(
    State((state, gate)): State<(AppState, Gate)>,
    mut request: Request,
    next: Next,
) -> Response {
    let Gate {
        service,
        style,
        plan_check,
    } = gate;
    let Some((email, password)) = basic_credentials(request.headers()) else {
        return ApiError::unauthorized(
            "authentication required: send HTTP Basic credentials (e-mail and password)",
        )
        .into_response();
    };
    let client = request
        .extensions()
        .get::<crate::serve::ClientIp>()
        .map(|c| c.0);
    let account = match state.auth.verify(&email, &password, client).await {
        Ok(Verdict::Valid(a)) => a,
        Ok(Verdict::Denied) => {
            return ApiError::unauthorized("invalid e-mail or password").into_response();
        }
        Ok(Verdict::Locked(wait)) => {
            // A tarpit: a client hammering a locked key gets its answers slowly,
            // which caps its request rate per connection at a few a second.
            tokio::time::sleep(LOCKED_DELAY.min(wait)).await;
            return locked(wait).into_response();
        }
        Err(e) => return ApiError::from(e).into_response(),
    };
    if plan_check && !account.can_use(service) {
        let message = format!(
            "the '{}' plan does not include the {service} service",
            account.plan.code
        );
        return match style {
            ErrorStyle::Data => {
                ApiError::unauthorized(format!("{message}: an eligible data plan is required"))
            }
            _ => ApiError::forbidden(message),
        }
        .into_response();
    }
    let Some(metering) = state.metering.clone() else {
        request.extensions_mut().insert(Caller(account));
        return next.run(request).await;
    };
    let now = metering.now();
    if let Err(over) = metering
        .admit(&account.email, account.plan.code, service, now)
        .await
    {
        return over_limit(over).into_response();
    }
    let email = account.email.clone();
    request.extensions_mut().insert(Caller(account));
    let response = next.run(request).await;
    // Data answers carry their volume (`data::routes::body`).
    if response.status().is_success()
        && let Some(v) = response.extensions().get::<crate::rows::DataVolume>()
    {
        metering.record(&email, DATA_BYTES, v.bytes);
        metering.record(&email, DATA_ROWS, v.rows);
    }
    response
}

/// 429 for a plan limit, naming it and its value, with the wait in `Retry-After`.
pub fn over_limit(over: OverLimit) -> ApiError {
    ApiError::new(429, over.message).with_retry_after(over.retry_after)
}

/// How long an answer to a locked login is held back.
pub const LOCKED_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

/// 429 for a login locked by recent failures, with the wait in `Retry-After`.
pub fn locked(wait: std::time::Duration) -> ApiError {
    let secs = wait.as_secs_f64().ceil() as u64;
    ApiError::new(
        429,
        format!("too many failed logins for this account or address; retry in {secs} s"),
    )
    .with_retry_after(secs)
}
