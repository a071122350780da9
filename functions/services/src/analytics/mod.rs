//! The analytics tools service (analytics-service.md): seasonality and
//! correlation over the market data port, and the home of the views to come.
//! Requests are typed and validated here; answers are the types serialized
//! as each envelope's `data`.

pub mod company;
pub mod correlation;
pub mod cpm;
pub mod options;
pub mod reports;
pub mod scanner;
pub mod screens;
pub mod seasonality;
pub mod trade_stats;

use crate::error::{Error, Result};
use engine::Bars;
use platform::PortError;
use platform::marketdata::MarketData;
use std::sync::Arc;

/// A ticker's daily bars; an unknown (or unusable) ticker is not found,
/// naming `field`, the request field that sent it.
pub async fn daily(market: &dyn MarketData, field: &str, ticker: &str) -> Result<Arc<Bars>> {
    market.daily(ticker).await.map_err(|e| match e {
        PortError::NotFound(_) | PortError::Invalid(_) => Error::unknown_symbol(field, ticker),
        other => other.into(),
    })
}

/// `f` of every item, in order, the items shared among the current rayon
/// pool's threads one at a time: their costs differ (a stock listed in 1990
/// against one listed last year), and work stealing keeps both cores busy.
pub(crate) fn on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use rayon::prelude::*;
    items.par_iter().with_max_len(1).map(&f).collect()
}

/// A ticker as clients may write it (any case). Attribute literals that
/// cannot name a const (`Years::ticker`) repeat it.
pub const TICKER_PATTERN: &str = "^[A-Za-z0-9._^-]{1,32}$";

/// The schema of a ticker in a request.
#[cfg(feature = "openapi")]
pub struct TickerText;

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for TickerText {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .pattern(Some(TICKER_PATTERN))
            .description(Some("A ticker, any case."))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for TickerText {}

/// A ticker as the store keys it.
pub fn ticker(raw: &str) -> String {
    raw.trim().to_uppercase()
}
