//! `/keys`: an account's API keys, created, listed and revoked.

use crate::auth::Tenant;
use crate::error::ApiError;
use crate::scopes::scoped;
use crate::state::AppState;
use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use platform::keys::KeyChecker;
use services::keys::{CreatedKey, Creator, KeyList, KeyRequest, KeyView};
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;

/// The deployment's key checker: 404 where keys are off.
fn keys(state: &AppState) -> Result<&Arc<KeyChecker>, ApiError> {
    state
        .auth
        .keys()
        .ok_or_else(|| ApiError::not_found("API keys are not enabled in this deployment"))
}

/// Create a key: the answer carries the whole key, this once.
#[utoipa::path(post, path = "/keys", tag = "backtest", request_body = KeyRequest,
    responses((status = 201, description = "Created; `key` is shown only here", body = CreatedKey,
            links(("revoke" = (operation_id = "revoke_key", parameters(("key_id" = "$response.body#/id")))))),
        (status = 400, description = "A bad name, scope, mode or expiry; the message names the field", body = crate::openapi::ErrorDetail),
        (status = 403, description = "The key sent lacks a scope it asks for, or asks for another mode", body = crate::openapi::ErrorDetail),
        (status = 409, description = "The account holds the most live keys it may (20)", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn create_key(
    Tenant { state, caller }: Tenant,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let checker = keys(&state)?;
    let request: KeyRequest = crate::extract::json_body(&body)?;
    let creator = Creator {
        account: &caller.account.email,
        key: caller.key.as_deref(),
    };
    let created = services::keys::create(
        checker.store().as_ref(),
        checker.pepper(),
        creator,
        request,
        chrono::Utc::now(),
    )
    .await?;
    tracing::info!(key = %created.view.prefix, "API key created");
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// The account's keys, newest first (never their secrets).
#[utoipa::path(get, path = "/keys", tag = "backtest",
    responses((status = 200, description = "The keys", body = KeyList)))]
pub(crate) async fn list_keys(Tenant { state, caller }: Tenant) -> Result<Json<KeyList>, ApiError> {
    let checker = keys(&state)?;
    let list = services::keys::list(
        checker.store().as_ref(),
        &caller.account.email,
        chrono::Utc::now(),
    )
    .await?;
    Ok(Json(list))
}

/// Revoke a key: refused from then on, on every instance within 5 s.
#[utoipa::path(delete, path = "/keys/{key_id}", tag = "backtest", operation_id = "revoke_key",
    params(("key_id" = String, Path, description = "The key's id (12 hex digits)")),
    responses((status = 200, description = "Revoked", body = KeyView),
        (status = 404, description = "Unknown key (or another account's)", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn revoke_key(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
) -> Result<Json<KeyView>, ApiError> {
    let checker = keys(&state)?;
    let view = services::keys::revoke(
        checker.store().as_ref(),
        &caller.account.email,
        &id,
        chrono::Utc::now(),
    )
    .await?;
    checker.forget(&id);
    tracing::info!(key = %view.prefix, "API key revoked");
    Ok(Json(view))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(scoped!(Manage: create_key, list_keys))
        .routes(scoped!(Manage: revoke_key))
}
