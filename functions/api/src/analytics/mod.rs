//! The analytics tools service (analytics-service.md): seasonality and
//! correlation views over the market data port, in the minimal envelope
//! `{code, data}` of its section 2.1.

mod body;
pub mod correlation;
pub mod seasonality;

use crate::error::ApiError;
use crate::state::AppState;
use axum::routing::{get, post};
use axum::{Json, Router};
use engine::Bars;
use serde_json::{Value, json};
use std::sync::Arc;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/seasonality", get(seasonality::all_in_one))
        .route(
            "/seasonality/get-predefined-holidays",
            get(seasonality::predefined_holidays),
        )
        .route("/seasonality/{view}", get(seasonality::standalone))
        .route("/symbol_corr", post(correlation::symbol_corr))
        .route("/asset_corr", post(correlation::asset_corr))
        .route("/pattern_corr", post(correlation::pattern_corr))
        .route("/symbol_beta", post(correlation::symbol_beta))
}

/// `{code, data}`: the success envelope of the seasonality and correlation endpoints.
fn envelope(code: u16, data: Value) -> Json<Value> {
    Json(json!({"code": code, "data": data}))
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
