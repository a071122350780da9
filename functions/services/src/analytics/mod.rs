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

/// A ticker's daily bars; an unknown (or unusable) ticker is not found, named.
pub async fn daily(market: &dyn MarketData, ticker: &str) -> Result<Arc<Bars>> {
    market.daily(ticker).await.map_err(|e| match e {
        PortError::NotFound(_) | PortError::Invalid(_) => {
            Error::NotFound(format!("ticker '{ticker}' not found"))
        }
        other => other.into(),
    })
}

/// `f` of every item, the items split among the cores (scoped threads), in
/// order. For the engine's per-symbol work on the blocking pool.
pub(crate) fn on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    if threads <= 1 {
        return items.iter().map(&f).collect();
    }
    // Items are taken one at a time: their costs differ (a stock listed in
    // 1990 against one listed last year), so a fixed split would leave a
    // core idle while the other finishes its longer half.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (f, next) = (&f, &next);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        mine.push((i, f(item)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a worker thread panicked"))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
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
