//! The analytics tools service (analytics-service.md): seasonality and
//! correlation views over the market data port, in the minimal envelope
//! `{code, data}` of its section 2.1.

mod body;
pub mod correlation;
pub mod docs;
pub mod seasonality;

use crate::error::ApiError;
use crate::state::AppState;
use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use engine::Bars;
use serde::Serialize;
use std::sync::Arc;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/seasonality", get(seasonality::all_in_one))
        .route(
            "/seasonality/get-predefined-holidays",
            get(seasonality::predefined_holidays),
        )
        .route(
            "/seasonality/performance-by-week",
            get(seasonality::by_week),
        )
        .route(
            "/seasonality/performance-by-month",
            get(seasonality::by_month),
        )
        .route(
            "/seasonality/performance-by-day-of-month",
            get(seasonality::by_day_of_month),
        )
        .route(
            "/seasonality/performance-by-day-of-year",
            get(seasonality::by_day_of_year),
        )
        .route(
            "/seasonality/performance-around-holiday",
            get(seasonality::around_holiday),
        )
        .route(
            "/seasonality/performance-around-specific-days",
            get(seasonality::around_specific_days),
        )
        .route(
            "/seasonality/performance-by-day-of-single-month",
            get(seasonality::by_day_of_single_month),
        )
        .route(
            "/seasonality/one-dollar-curve",
            get(seasonality::one_dollar_curve),
        )
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
        .route("/symbol_corr", post(correlation::symbol_corr))
        .route("/asset_corr", post(correlation::asset_corr))
        .route("/pattern_corr", post(correlation::pattern_corr))
        .route("/symbol_beta", post(correlation::symbol_beta))
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
