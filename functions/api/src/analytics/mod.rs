//! The analytics tools service (analytics-service.md): seasonality and
//! correlation views over the market data port, in the minimal envelope
//! `{code, data}` of its section 2.1.

mod body;
pub mod correlation;
pub mod docs;
pub mod seasonality;

use crate::error::ApiError;
use crate::state::AppState;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use engine::Bars;
use serde::Serialize;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The analytics routes with their documentation.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(seasonality::all_in_one))
        .routes(routes!(seasonality::predefined_holidays))
        .routes(routes!(seasonality::by_week))
        .routes(routes!(seasonality::by_month))
        .routes(routes!(seasonality::by_day_of_month))
        .routes(routes!(seasonality::by_day_of_year))
        .routes(routes!(seasonality::around_holiday))
        .routes(routes!(seasonality::around_specific_days))
        .routes(routes!(seasonality::by_day_of_single_month))
        .routes(routes!(seasonality::one_dollar_curve))
        // Unknown views answer in this service's envelope on any deployment.
        .route(
            "/seasonality/{*view}",
            get(
                |axum::extract::Path(view): axum::extract::Path<String>| async move {
                    ApiError::not_found(format!(
                        "no such seasonality endpoint '/seasonality/{view}'"
                    ))
                },
            ),
        )
        .routes(routes!(correlation::symbol_corr))
        .routes(routes!(correlation::asset_corr))
        .routes(routes!(correlation::pattern_corr))
        .routes(routes!(correlation::symbol_beta))
}

/// `{code, data}`: the success envelope of the seasonality and correlation
/// endpoints, serialized at once so `data` may borrow from the handler.
fn envelope<T: Serialize>(code: u16, data: T) -> Result<Response, ApiError> {
    #[derive(Serialize)]
    struct Envelope<T> {
        code: u16,
        data: T,
    }
    let body = serde_json::to_vec(&Envelope { code, data }).map_err(|e| {
        tracing::error!(error = %e, "response serialization");
        ApiError::internal()
    })?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// A ticker's daily bars; an unknown ticker is 404 naming it.
async fn load_daily(state: &AppState, ticker: &str) -> Result<Arc<Bars>, ApiError> {
    state.market.daily(ticker).await.map_err(|e| match e {
        platform::PortError::NotFound(_) | platform::PortError::Invalid(_) => {
            ApiError::not_found(format!("ticker '{ticker}' not found"))
        }
        other => other.into(),
    })
}
