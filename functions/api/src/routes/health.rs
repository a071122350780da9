//! Public endpoints: liveness and how to authenticate.

use crate::auth::basic_credentials;
use crate::state::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::{Extension, Json};
use platform::accounts::Verdict;
use serde_json::{Value, json};

/// Liveness: the process answers and its ports were wired.
#[utoipa::path(get, path = "/health", tag = "public", security(()), responses((status = 200, description = "Running", body = crate::openapi::Health)))]
pub async fn health() -> Json<crate::openapi::Health> {
    Json(crate::openapi::Health { status: "ok" })
}

/// How to authenticate; with valid credentials, also who the caller is and
/// what their plan grants.
#[utoipa::path(get, path = "/auth-info", tag = "public", security(()), responses((status = 200, description = "Authentication scheme and, with valid credentials, the account", body = Object)))]
pub async fn auth_info(
    State(state): State<AppState>,
    client: Option<Extension<crate::serve::ClientIp>>,
    headers: HeaderMap,
) -> Json<Value> {
    let mut info = json!({
        "scheme": "basic",
        "header": "Authorization: Basic base64(email:password)",
        "realm": "marketlab",
        "public": ["/health", "/auth-info", "/docs", "/redoc", "/openapi.json", "/backtest/tutorial"],
        "authenticated": false,
    });
    if let Some((email, password)) = basic_credentials(&headers) {
        match state
            .auth
            .verify(&email, &password, client.map(|c| c.0.0))
            .await
        {
            Ok(Verdict::Valid(a)) => {
                info["authenticated"] = json!(true);
                info["account"] = json!({
                    "email": a.email,
                    "plan": a.plan.code,
                    "plan_name": a.plan.name,
                    "services": a.plan.services,
                    "trial": a.plan.trial,
                });
            }
            Ok(Verdict::Denied) => info["error"] = json!("invalid e-mail or password"),
            Ok(Verdict::Locked(wait)) => {
                info["error"] = json!(crate::auth::locked(wait).message);
            }
            Err(_) => info["error"] = json!("accounts are unavailable; retry shortly"),
        }
    }
    Json(info)
}
