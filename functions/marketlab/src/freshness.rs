//! What a start says about the market data's age. The generated sample set
//! ends on a fixed day, so it is always behind the calendar and a new user
//! can do nothing about it but import real data: that is said once, at
//! INFO, with what to do. The stale error is kept for real data that
//! stopped arriving.

use platform::marketdata::{MarketData, ParquetMarketData};

/// Logs, once at a start on the sample set as generated, the data's age
/// and what to do about it; whether the data are that sample set.
pub async fn announce(market: &ParquetMarketData) -> bool {
    let Ok(latest) = market.latest_date().await else {
        return false;
    };
    if !still_sample(market, latest).await {
        return false;
    }
    let now = chrono::Utc::now();
    tracing::info!(
        latest = %latest,
        age_days = (now.date_naive() - latest).num_days(),
        "market data: the generated sample set, which ends on a fixed day; \
         import real bars to serve current data (docs/data-updates.md)"
    );
    true
}

/// Whether data whose latest session is `latest` are still the sample set
/// as generated (no import brought a later session): behind the calendar
/// by design, never reported stale. Checked at each staleness, so real
/// data imported into a running server are reported again.
pub async fn still_sample(market: &ParquetMarketData, latest: chrono::NaiveDate) -> bool {
    match sample::mark::still_sample(market.blobs().as_ref(), latest).await {
        Ok(mark) => mark.is_some(),
        Err(e) => {
            tracing::warn!(error = %e, "market data: the sample set's mark was not read");
            false
        }
    }
}
