//! Indicator data service (indicator-data-service.md), catalog endpoints.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/getAllSymbols", get(all_symbols))
        .route("/getAllSymbolswithIndexes", get(all_symbols_with_indexes))
}

/// Every public indicator, without internal and relative-trend records.
async fn all_symbols(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let catalog = state.market.indicator_catalog().await?;
    let items: Vec<Value> = catalog
        .iter()
        .filter(|m| !m.internal && m.kind != "reltrend")
        .map(|m| json!({ "chart_name": m.chart_name, "url": m.url }))
        .collect();
    Ok(Json(Value::Array(items)))
}

/// The full catalog with each indicator's market symbol (`SPX` when unset).
async fn all_symbols_with_indexes(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let catalog = state.market.indicator_catalog().await?;
    let items: Vec<Value> = catalog
        .iter()
        .map(|m| {
            let market = if m.market_symbol.is_empty() {
                "SPX"
            } else {
                m.market_symbol.as_str()
            };
            json!({ "chart_name": m.chart_name, "url": m.url, "market_symbol": market })
        })
        .collect();
    Ok(Json(Value::Array(items)))
}
