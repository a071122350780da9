//! Authentication (an API key as `Authorization: Bearer`, or HTTP Basic
//! with the account's e-mail and password), plan checks and the rate limit
//! with its headers, as middleware per service group.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use platform::accounts::{Account, KeyLogin, Service, Verdict};
use platform::keys::{KeyRecord, Mode, Scope};
use platform::metering::{Allowance, DATA_BYTES, DATA_ROWS, OverLimit, RATE_WINDOW_SECONDS};
use std::sync::Arc;

/// The verified caller, available to handlers as an extension.
#[derive(Debug, Clone)]
pub struct Caller {
    pub account: Account,
    /// The key the request came with; none for a password login.
    pub key: Option<Arc<KeyRecord>>,
}

impl Caller {
    /// A password login: live, every scope.
    pub fn password(account: Account) -> Self {
        Caller { account, key: None }
    }

    pub fn mode(&self) -> Mode {
        self.key.as_ref().map_or(Mode::Live, |k| k.mode)
    }

    /// Whom tasks, usage and limits are kept under: the account, or its
    /// test-mode books.
    pub fn owner(&self) -> String {
        platform::keys::owner(&self.account.email, self.mode())
    }

    pub fn allows(&self, scope: Scope) -> bool {
        self.key.as_ref().is_none_or(|k| k.allows(scope))
    }
}

/// What every tenant handler reads: the state (its market data the sample
/// set for a test-mode caller) and the caller the auth layer verified. A
/// route outside that layer, or registered without a scope, answers 500: a
/// server fault, never an open door.
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
        let checked = parts
            .extensions
            .get::<crate::scopes::ScopeChecked>()
            .is_some();
        let caller = caller.filter(|_| checked).ok_or_else(ApiError::internal)?;
        Ok(Tenant {
            state: state.in_mode(caller.mode())?,
            caller,
        })
    }
}

/// Credentials as sent.
enum Credentials {
    Basic(String, String),
    Bearer(String),
}

fn credentials(headers: &HeaderMap) -> Option<Credentials> {
    if let Some(key) = bearer_key(headers) {
        return Some(Credentials::Bearer(key.to_string()));
    }
    basic_credentials(headers).map(|(u, p)| Credentials::Basic(u, p))
}

/// The key of an `Authorization: Bearer` header.
pub fn bearer_key(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
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

/// Says on an answer whether it came from test mode.
pub const MODE_HEADER: &str = "marketlab-mode";

/// Who may pass a group's authenticated routes, and what they count as.
#[derive(Clone, Copy)]
pub struct Gate {
    pub service: Service,
    /// Whether the plan must include `service` (`/usage` is open to every account).
    pub plan_check: bool,
}

/// Verifies the caller and the plan's access to the gate's service, then
/// applies the plan's requests per minute (telling what is left in the
/// `RateLimit` headers) and bills the request unless its answer is a refusal
/// (and, on the data service, the rows and bytes it returned), for the
/// account and for the key. The
/// data service answers a missing plan with 401, the others with 403
/// (their specs differ).
pub async fn require(
    State((state, gate)): State<(AppState, Gate)>,
    mut request: Request,
    next: Next,
) -> Response {
    let Gate {
        service,
        plan_check,
    } = gate;
    let client = request
        .extensions()
        .get::<crate::serve::ClientIp>()
        .map(|c| c.0);
    let sent = credentials(request.headers());
    let caller = match verify(&state, sent, client).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let account = &caller.account;
    if plan_check && !account.can_use(service) {
        let message = format!(
            "the '{}' plan does not include the {service} service",
            account.plan.code
        );
        return if service == Service::Data {
            ApiError::unauthorized(format!("{message}: an eligible data plan is required"))
        } else {
            ApiError::forbidden(message)
        }
        .into_response();
    }
    let mode = caller.mode();
    let Some(metering) = state.metering.clone() else {
        request.extensions_mut().insert(caller);
        return with_mode(next.run(request).await, mode);
    };
    let owner = caller.owner();
    let key = caller.key.as_ref().map(|k| k.id.clone());
    let allowance = match metering
        .admit(&owner, account.plan.code, service, metering.now())
        .await
    {
        Ok(a) => a,
        Err(over) => {
            let mut r = over_limit(over.clone()).into_response();
            rate_headers(&mut r, service, over.value as u32, 0, over.retry_after);
            return with_mode(r, mode);
        }
    };
    let counted = |counter: &str, n: u64| {
        metering.record(&owner, counter, n);
        if let Some(id) = &key {
            metering.record(&owner, &platform::metering::key_counter(id, counter), n);
        }
    };
    request.extensions_mut().insert(caller);
    let mut response = next.run(request).await;
    // Billed once answered: a refusal past this point (a scope, the month's
    // compute, a fair share) is not.
    metering.count_request(&owner, service, key.as_deref(), response.status().as_u16());
    // Data answers carry their volume (`data::routes::body`).
    if response.status().is_success()
        && let Some(v) = response.extensions().get::<crate::rows::DataVolume>()
    {
        let (bytes, rows) = (v.bytes, v.rows);
        counted(DATA_BYTES, bytes);
        counted(DATA_ROWS, rows);
    }
    let Allowance {
        limit,
        remaining,
        reset,
    } = allowance;
    rate_headers(&mut response, service, limit, remaining, reset);
    with_mode(response, mode)
}

/// The caller the credentials sent name.
async fn verify(
    state: &AppState,
    sent: Option<Credentials>,
    client: Option<std::net::IpAddr>,
) -> Result<Caller, ApiError> {
    match sent {
        None => Err(ApiError::unauthorized(
            "authentication required: send an API key (Authorization: Bearer) or HTTP Basic credentials (e-mail and password)",
        )),
        Some(Credentials::Basic(email, password)) => {
            match state.auth.verify(&email, &password, client).await? {
                Verdict::Valid(a) => Ok(Caller::password(a)),
                Verdict::Denied => Err(ApiError::unauthorized("invalid e-mail or password")),
                Verdict::Locked(wait) => Err(slowly_locked(wait).await),
            }
        }
        Some(Credentials::Bearer(key)) => match state.auth.verify_key(&key, client).await? {
            KeyLogin::Valid(account, key) => Ok(Caller {
                account,
                key: Some(key),
            }),
            KeyLogin::Denied(why) => Err(ApiError::unauthorized(why)),
            KeyLogin::Locked(wait) => Err(slowly_locked(wait).await),
            KeyLogin::Disabled => Err(ApiError::unauthorized(
                "this deployment does not accept API keys: send HTTP Basic credentials",
            )),
        },
    }
}

/// A tarpit: a client hammering a locked login gets its answers slowly,
/// which caps its request rate per connection at a few a second.
async fn slowly_locked(wait: std::time::Duration) -> ApiError {
    tokio::time::sleep(LOCKED_DELAY.min(wait)).await;
    locked(wait)
}

/// `RateLimit-Policy` and `RateLimit` (IETF httpapi ratelimit headers,
/// draft 10): the service's requests per minute, what is left of them and
/// the seconds until the window ends.
fn rate_headers(r: &mut Response, service: Service, limit: u32, remaining: u32, reset: u64) {
    let h = r.headers_mut();
    let policy = format!("\"{service}\";q={limit};w={RATE_WINDOW_SECONDS}");
    let now = format!("\"{service}\";r={remaining};t={reset}");
    for (name, value) in [("ratelimit-policy", policy), ("ratelimit", now)] {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(HeaderName::from_static(name), v);
        }
    }
}

fn with_mode(mut r: Response, mode: Mode) -> Response {
    r.headers_mut().insert(
        HeaderName::from_static(MODE_HEADER),
        HeaderValue::from_static(mode.name()),
    );
    r
}

/// 429 for a plan limit, naming it and its value, with the wait in `Retry-After`.
pub fn over_limit(over: OverLimit) -> ApiError {
    ApiError::new(429, over.message).with_retry_after(over.retry_after)
}

/// How long an answer to a locked login is held back.
pub const LOCKED_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

/// 429 for a login locked by recent failures (of the account, the API key
/// id, or the address), with the wait in `Retry-After`.
pub fn locked(wait: std::time::Duration) -> ApiError {
    let secs = wait.as_secs_f64().ceil() as u64;
    ApiError::new(
        429,
        format!("too many failed logins for this account, key or address; retry in {secs} s"),
    )
    .with_retry_after(secs)
}
