//! Public endpoints: liveness and how to authenticate.

use crate::auth::basic_credentials;
use crate::state::Shared;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::{Extension, Json};
use platform::accounts::Verdict;
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
    /// With valid credentials: who the caller is and what the plan grants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<AccountInfo>,
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
        account: None,
        error: None,
    };
    if let Some((email, password)) = basic_credentials(&headers) {
        match state
            .auth
            .verify(&email, &password, client.map(|c| c.0.0))
            .await
        {
            Ok(Verdict::Valid(a)) => {
                info.authenticated = true;
                info.account = Some(AccountInfo {
                    email: a.email.clone(),
                    plan: a.plan.code.to_string(),
                    plan_name: a.plan.name.to_string(),
                    services: a.plan.services.to_vec(),
                    trial: a.plan.trial,
                });
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
