//! Public endpoints: liveness and how to authenticate.

use crate::auth::basic_credentials;
use crate::state::Shared;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::{Extension, Json};
use platform::accounts::{KeyLogin, Verdict};
use serde::Serialize;
use utoipa::ToSchema;

/// Liveness: the process answers and its ports were wired.
#[utoipa::path(get, path = "/health", tag = "public", security(()), responses((status = 200, description = "Running", body = crate::openapi::Health)))]
pub async fn health() -> Json<crate::openapi::Health> {
    Json(crate::openapi::Health { status: "ok" })
}

/// What `/auth-info` answers.
#[derive(Serialize, ToSchema)]
pub struct AuthInfo {
    /// `basic`.
    pub scheme: &'static str,
    pub header: &'static str,
    pub realm: &'static str,
    /// Paths that need no credentials.
    pub public: [&'static str; 6],
    pub authenticated: bool,
    /// The other way in: an API key (`POST /keys`), scoped and revocable.
    pub key_header: &'static str,
    /// With valid credentials: who the caller is and what the plan grants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<AccountInfo>,
    /// With a valid API key: which one, what it may do and its mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<KeyInfo>,
    /// With credentials that were not accepted: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct AccountInfo {
    pub email: String,
    /// The plan's code.
    pub plan: String,
    pub plan_name: String,
    /// The services the plan grants.
    #[schema(value_type = Vec<String>)]
    pub services: Vec<platform::accounts::Service>,
    pub trial: bool,
}

#[derive(Serialize, ToSchema)]
pub struct KeyInfo {
    /// `mlk_<mode>_<id>`.
    pub prefix: String,
    pub name: String,
    pub scopes: Vec<platform::keys::Scope>,
    pub mode: platform::keys::Mode,
}

fn account_info(a: &platform::accounts::Account) -> AccountInfo {
    AccountInfo {
        email: a.email.clone(),
        plan: a.plan.code.to_string(),
        plan_name: a.plan.name.to_string(),
        services: a.plan.services.to_vec(),
        trial: a.plan.trial,
    }
}

/// How to authenticate; with valid credentials, also who the caller is and
/// what their plan grants.
#[utoipa::path(get, path = "/auth-info", tag = "public", security(()), responses((status = 200, description = "Authentication scheme and, with valid credentials, the account", body = AuthInfo)))]
pub async fn auth_info(
    State(state): Shared,
    client: Option<Extension<crate::serve::ClientIp>>,
    headers: HeaderMap,
) -> Json<AuthInfo> {
    let mut info = AuthInfo {
        scheme: "basic",
        header: "Authorization: Basic base64(email:password)",
        realm: "marketlab",
        public: [
            "/health",
            "/auth-info",
            "/docs",
            "/redoc",
            "/openapi.json",
            "/backtest/tutorial",
        ],
        authenticated: false,
        key_header: "Authorization: Bearer <API key>",
        account: None,
        key: None,
        error: None,
    };
    let client = client.map(|c| c.0.0);
    if let Some(key) = crate::auth::bearer_key(&headers) {
        match state.auth.verify_key(key, client).await {
            Ok(KeyLogin::Valid(a, k)) => {
                info.authenticated = true;
                info.account = Some(account_info(&a));
                info.key = Some(KeyInfo {
                    prefix: k.prefix(),
                    name: k.name.clone(),
                    scopes: k.scopes.clone(),
                    mode: k.mode,
                });
            }
            Ok(KeyLogin::Denied(why)) => info.error = Some(why.into()),
            Ok(KeyLogin::Locked(wait)) => info.error = Some(crate::auth::locked(wait).message),
            Ok(KeyLogin::Disabled) => {
                info.error = Some("this deployment does not accept API keys".into());
            }
            Err(_) => info.error = Some("keys are unavailable; retry shortly".into()),
        }
        return Json(info);
    }
    if let Some((email, password)) = basic_credentials(&headers) {
        match state.auth.verify(&email, &password, client).await {
            Ok(Verdict::Valid(a)) => {
                info.authenticated = true;
                info.account = Some(account_info(&a));
            }
            Ok(Verdict::Denied) => info.error = Some("invalid e-mail or password".into()),
            Ok(Verdict::Locked(wait)) => {
                info.error = Some(crate::auth::locked(wait).message);
            }
            Err(_) => info.error = Some("accounts are unavailable; retry shortly".into()),
        }
    }
    Json(info)
}
