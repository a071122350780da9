//! `/smart-stock-scanner/alerts`: which of the nightly scan's items an
//! account is told of.

use super::{AlertList, configured};
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::scopes::scoped;
use crate::state::AppState;
use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use services::webhooks::{self as hooks, AlertView};
use utoipa_axum::router::OpenApiRouter;

/// Subscribe to the nightly scan's items: one `scanner.alert` event per
/// alert and day with the items that match.
#[utoipa::path(post, path = "/smart-stock-scanner/alerts", tag = "analytics", request_body = services::webhooks::AlertRequest,
    responses((status = 201, description = "Created", body = crate::analytics::Standard<AlertView>,
            links(("delete" = (operation_id = "delete_alert", parameters(("alert_id" = "$response.body#/data/id")))))),
        (status = 409, description = "The account has the most alerts it may have", body = crate::error::AnalyticsError),
        crate::analytics::AnalyticsErrors))]
pub(crate) async fn create_alert(
    Tenant { state, caller }: Tenant,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let body = crate::extract::json_body(&body)?;
    let data = hooks::create_alert(configured(&state)?, &caller.owner(), body).await?;
    let answer = crate::analytics::Standard {
        code: 201,
        msg: "Alert created".into(),
        data,
    };
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

/// The account's scanner alerts.
#[utoipa::path(get, path = "/smart-stock-scanner/alerts", tag = "analytics",
    responses((status = 200, description = "The alerts", body = crate::analytics::Standard<AlertList>), crate::analytics::AnalyticsErrors))]
pub(crate) async fn list_alerts(
    Tenant { state, caller }: Tenant,
) -> Result<Json<crate::analytics::Standard<AlertList>>, ApiError> {
    let alerts = hooks::alerts(configured(&state)?, &caller.owner()).await?;
    Ok(Json(crate::analytics::Standard {
        code: 200,
        msg: "Alerts".into(),
        data: AlertList { alerts },
    }))
}

/// Remove an alert.
#[utoipa::path(delete, path = "/smart-stock-scanner/alerts/{alert_id}", tag = "analytics",
    params(("alert_id" = String, Path, description = "The alert's id")),
    responses((status = 204, description = "Removed"), crate::analytics::AnalyticsErrors))]
pub(crate) async fn delete_alert(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    hooks::delete_alert(configured(&state)?, &caller.owner(), &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(scoped!(Manage: create_alert, list_alerts))
        .routes(scoped!(Manage: delete_alert))
}
