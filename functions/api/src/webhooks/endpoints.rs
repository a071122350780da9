//! `/webhooks`: an account's endpoints and their delivery logs.

use super::{DeliveryList, WebhookList, configured};
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::extract::Params;
use crate::scopes::scoped;
use crate::state::AppState;
use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use services::webhooks::{self as hooks, DeliveryView, EndpointView};
use utoipa_axum::router::OpenApiRouter;

/// A JSON body, or null when there is none.
fn body_or_null(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    crate::extract::json_body(body)
}

const NOT_FOUND: &str = "Unknown endpoint (or another account's)";

/// Register an endpoint: the answer carries its signing secret, this once.
#[utoipa::path(post, path = "/webhooks", tag = "backtest", request_body = services::webhooks::EndpointRequest,
    responses((status = 201, description = "Registered; `secret` is shown only here", body = EndpointView,
            links(("endpoint" = (operation_id = "get_webhook", parameters(("webhook_id" = "$response.body#/id")))),
                ("deliveries" = (operation_id = "webhook_deliveries", parameters(("webhook_id" = "$response.body#/id")))),
                ("rotate" = (operation_id = "rotate_webhook", parameters(("webhook_id" = "$response.body#/id")))),
                ("enable" = (operation_id = "enable_webhook", parameters(("webhook_id" = "$response.body#/id")))),
                ("delete" = (operation_id = "delete_webhook", parameters(("webhook_id" = "$response.body#/id")))))),
        (status = 400, description = "A bad URL (not https, a private or unresolvable address) or an unknown event type; the message names the field", body = crate::openapi::ErrorDetail),
        (status = 409, description = "The account has the most endpoints it may have", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn create_webhook(
    Tenant { state, caller }: Tenant,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let body = crate::extract::json_body(&body)?;
    let view = hooks::register(configured(&state)?, &caller.owner(), body).await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// The account's endpoints (secrets are never listed).
#[utoipa::path(get, path = "/webhooks", tag = "backtest",
    responses((status = 200, description = "The endpoints", body = WebhookList)))]
pub(crate) async fn list_webhooks(
    Tenant { state, caller }: Tenant,
) -> Result<Json<WebhookList>, ApiError> {
    let endpoints = hooks::list(configured(&state)?, &caller.owner()).await?;
    Ok(Json(WebhookList { endpoints }))
}

/// One endpoint, with why it is disabled when it is.
#[utoipa::path(get, path = "/webhooks/{webhook_id}", tag = "backtest",
    params(("webhook_id" = String, Path, description = "The endpoint's id")),
    responses((status = 200, description = "The endpoint", body = EndpointView),
        (status = 404, description = NOT_FOUND, body = crate::openapi::ErrorDetail)))]
pub(crate) async fn get_webhook(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
) -> Result<Json<EndpointView>, ApiError> {
    Ok(Json(
        hooks::get(configured(&state)?, &caller.owner(), &id).await?,
    ))
}

/// Remove an endpoint and its delivery log; nothing more is sent to it.
#[utoipa::path(delete, path = "/webhooks/{webhook_id}", tag = "backtest",
    params(("webhook_id" = String, Path, description = "The endpoint's id")),
    responses((status = 204, description = "Removed"),
        (status = 404, description = NOT_FOUND, body = crate::openapi::ErrorDetail)))]
pub(crate) async fn delete_webhook(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    hooks::delete(configured(&state)?, &caller.owner(), &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A new signing secret; the previous one signs beside it for
/// `keep_previous_hours` (default 24), so receivers can switch over.
#[utoipa::path(post, path = "/webhooks/{webhook_id}/rotate", tag = "backtest",
    params(("webhook_id" = String, Path, description = "The endpoint's id")),
    request_body(content = Option<services::webhooks::RotateRequest>, description = "Optional"),
    responses((status = 200, description = "Rotated; the new `secret` is shown only here", body = EndpointView),
        (status = 400, description = "`keep_previous_hours` out of 0-168", body = crate::openapi::ErrorDetail),
        (status = 404, description = NOT_FOUND, body = crate::openapi::ErrorDetail)))]
pub(crate) async fn rotate_webhook(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<EndpointView>, ApiError> {
    let body = body_or_null(&body)?;
    Ok(Json(
        hooks::rotate(configured(&state)?, &caller.owner(), &id, body).await?,
    ))
}

/// Turn a disabled endpoint back on.
#[utoipa::path(post, path = "/webhooks/{webhook_id}/enable", tag = "backtest",
    params(("webhook_id" = String, Path, description = "The endpoint's id")),
    responses((status = 200, description = "Enabled", body = EndpointView),
        (status = 404, description = NOT_FOUND, body = crate::openapi::ErrorDetail)))]
pub(crate) async fn enable_webhook(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
) -> Result<Json<EndpointView>, ApiError> {
    Ok(Json(
        hooks::enable(configured(&state)?, &caller.owner(), &id).await?,
    ))
}

/// The delivery log: every event sent to the endpoint, its attempts and their answers.
#[utoipa::path(get, path = "/webhooks/{webhook_id}/deliveries", tag = "backtest",
    params(("webhook_id" = String, Path, description = "The endpoint's id"),
        ("limit" = Option<i64>, Query, description = "1-200, default 50", minimum = 1, maximum = 200)),
    responses((status = 200, description = "Newest first", body = DeliveryList),
        (status = 400, description = "Bad `limit`", body = crate::openapi::ErrorDetail),
        (status = 404, description = NOT_FOUND, body = crate::openapi::ErrorDetail)))]
pub(crate) async fn webhook_deliveries(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
    params: Params,
) -> Result<Json<DeliveryList>, ApiError> {
    let limit = params.int_in("limit", 50, 1, 200)? as usize;
    let deliveries = hooks::deliveries(configured(&state)?, &caller.owner(), &id, limit).await?;
    Ok(Json(DeliveryList { deliveries }))
}

/// Send a delivery again (same `webhook-id` and body), from the start of
/// the retry schedule.
#[utoipa::path(post, path = "/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", tag = "backtest",
    params(("webhook_id" = String, Path, description = "The endpoint's id"),
        ("delivery_id" = String, Path, description = "The delivery's `webhook-id`")),
    responses((status = 202, description = "Scheduled", body = DeliveryView),
        (status = 404, description = "Unknown endpoint or delivery", body = crate::openapi::ErrorDetail),
        (status = 409, description = "The endpoint is disabled; enable it first", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn redeliver(
    Tenant { state, caller }: Tenant,
    Path((id, delivery)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let view = hooks::redeliver(configured(&state)?, &caller.owner(), &id, &delivery).await?;
    Ok((StatusCode::ACCEPTED, Json(view)).into_response())
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(scoped!(Manage: create_webhook, list_webhooks))
        .routes(scoped!(Manage: get_webhook, delete_webhook))
        .routes(scoped!(Manage: rotate_webhook))
        .routes(scoped!(Manage: enable_webhook))
        .routes(scoped!(Manage: webhook_deliveries))
        .routes(scoped!(Manage: redeliver))
}
