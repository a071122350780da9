//! The scan follows the data: once every stock that traded the session
//! before the latest one has its bar of the latest session, that session is
//! complete and is scanned, once (a session already scanned is not scanned
//! again; the daily schedule is the deadline for a session some symbol
//! never completes). And how far behind the calendar the data are.

use super::nightly::{ScanSummary, run, tell};
use crate::error::Result;
use chrono::{DateTime, Datelike, NaiveDate, TimeDelta, Utc, Weekday};
use engine::calendar;
use platform::marketdata::MarketData;
use platform::scanner::ScannerStore;
use platform::webhooks::emit::Events;
use platform::worker::Progress;

/// The session before `date` on the exchange calendar.
fn session_before(date: NaiveDate) -> Option<NaiveDate> {
    calendar::sessions(date - TimeDelta::days(14), date - TimeDelta::days(1))
        .last()
        .copied()
}

/// The latest session in the data when it is complete: every stock whose
/// bars reach the session before it has a bar on it.
pub async fn complete_session(market: &dyn MarketData) -> Result<Option<NaiveDate>> {
    let symbols = market.symbols().await?;
    let stocks: Vec<_> = symbols
        .iter()
        .filter(|s| s.asset_class == "stock")
        .collect();
    let Some(latest) = stocks.iter().map(|s| s.last_date).max() else {
        return Ok(None);
    };
    let before = session_before(latest).unwrap_or(latest);
    let complete = stocks
        .iter()
        .filter(|s| s.last_date >= before)
        .all(|s| s.last_date >= latest);
    Ok(complete.then_some(latest))
}

/// Scans the latest session if it is complete and not yet scanned; its
/// webhook events follow. Answers what was scanned, if anything.
pub async fn follow(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    events: Option<&Events>,
) -> Result<Option<ScanSummary>> {
    let Some(date) = complete_session(market).await? else {
        return Ok(None);
    };
    if store.dates().await?.contains(&date) {
        return Ok(None);
    }
    let summary = run(market, store, Some(date), &Progress::default()).await?;
    tracing::info!(
        date = %summary.date, stocks = summary.stocks, items = summary.items,
        "scanner: the completed session scanned"
    );
    if let Some(events) = events {
        tell(events, store, date).await;
    }
    Ok(Some(summary))
}

/// When a session's bars can be had: its close in New York (16:00; 21:00
/// UTC in standard time, 20:00 in daylight time, second Sunday of March to
/// first Sunday of November).
pub fn close_utc(date: NaiveDate) -> DateTime<Utc> {
    let year = date.year();
    let summer = calendar::nth_weekday(year, 3, Weekday::Sun, 2)
        ..calendar::nth_weekday(year, 11, Weekday::Sun, 1);
    let hour = if summer.contains(&date) { 20 } else { 21 };
    date.and_hms_opt(hour, 0, 0).expect("a time").and_utc()
}

/// How far the data lag at `now`: the time since the close of the first
/// session after `latest` (zero while that session has not closed).
pub fn lag(latest: NaiveDate, now: DateTime<Utc>) -> std::time::Duration {
    let next = calendar::sessions(latest + TimeDelta::days(1), latest + TimeDelta::days(14))
        .first()
        .copied();
    match next {
        Some(d) => (now - close_utc(d)).to_std().unwrap_or_default(),
        None => std::time::Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M")
            .unwrap()
            .and_utc()
    }

    #[test]
    fn the_lag_counts_from_the_close_of_the_first_missing_session() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        // Friday 2026-11-20's bars; Monday the 23rd closes at 21:00 UTC.
        assert_eq!(lag(d("2026-11-20"), at("2026-11-23 20:59")).as_secs(), 0);
        assert_eq!(lag(d("2026-11-20"), at("2026-11-23 23:00")).as_secs(), 7200);
        // Wednesday the 25th's bars: Thanksgiving is closed, Friday the 27th next.
        assert_eq!(lag(d("2026-11-25"), at("2026-11-27 10:00")).as_secs(), 0);
        // In daylight time the close is 20:00 UTC.
        assert_eq!(close_utc(d("2026-07-01")), at("2026-07-01 20:00"));
        assert_eq!(close_utc(d("2026-03-06")), at("2026-03-06 21:00"));
    }
}
