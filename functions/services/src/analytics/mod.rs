//! The analytics tools service (analytics-service.md): seasonality and
//! correlation over the market data port, and the home of the views to come.
//! Requests are typed and validated here; answers are the types serialized
//! as each envelope's `data`.

pub mod correlation;
pub mod seasonality;

use crate::error::{Error, Result};
use engine::Bars;
use platform::PortError;
use platform::marketdata::MarketData;
use std::sync::Arc;

/// A ticker's daily bars; an unknown (or unusable) ticker is not found, named.
pub async fn daily(market: &dyn MarketData, ticker: &str) -> Result<Arc<Bars>> {
    market.daily(ticker).await.map_err(|e| match e {
        PortError::NotFound(_) | PortError::Invalid(_) => {
            Error::NotFound(format!("ticker '{ticker}' not found"))
        }
        other => other.into(),
    })
}

/// A ticker as the store keys it.
pub fn ticker(raw: &str) -> String {
    raw.trim().to_uppercase()
}
