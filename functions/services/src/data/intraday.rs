//! Intraday answers (4.5): 30-minute readings, 13 a market day.

use super::format::{push_key, push_num, push_str};
use super::history::history;
use super::{catalog, full_range, indicator, recent, subscribed};
use crate::error::{Error, Result};
use platform::accounts::Account;
use platform::marketdata::{IndicatorMeta, IndicatorSeries, MarketData};
use std::sync::Arc;

/// Indicators with 30-minute series, keyed by chart name.
pub async fn symbols(market: &dyn MarketData, account: &Account) -> Result<String> {
    let c = catalog(market).await?;
    let mut out = String::from("{");
    for m in subscribed(account, &c).into_iter().filter(|m| m.intraday) {
        if out.len() > 1 {
            out.push(',');
        }
        push_str(&mut out, &m.chart_name);
        out.push_str(":{\"url\":");
        push_str(&mut out, &m.url);
        out.push_str(",\"market_symbol\":");
        push_str(&mut out, &m.market_symbol);
        out.push('}');
    }
    out.push('}');
    Ok(out)
}

/// A readable indicator with a 30-minute series, and that series.
async fn series_of<'a>(
    market: &dyn MarketData,
    account: &Account,
    c: &'a [IndicatorMeta],
    code: &str,
) -> Result<(&'a IndicatorMeta, Arc<IndicatorSeries>)> {
    let m = indicator(account, c, code)?;
    if !m.intraday {
        return Err(Error::NotFound(format!(
            "symbol '{code}' has no intraday data"
        )));
    }
    Ok((m, market.indicator_intraday(code).await?))
}

/// The full 30-minute history, keys with time of day.
pub async fn full_history(
    market: &dyn MarketData,
    account: &Account,
    code: &str,
) -> Result<String> {
    let c = catalog(market).await?;
    let (m, s) = series_of(market, account, &c, code).await?;
    Ok(history(
        &s,
        full_range(account, s.time.len()),
        false,
        Some(&m.market_symbol),
    ))
}

/// The last `n` market days of 30-minute readings.
pub async fn limit_days(
    market: &dyn MarketData,
    account: &Account,
    code: &str,
    n: usize,
) -> Result<String> {
    let c = catalog(market).await?;
    let (m, s) = series_of(market, account, &c, code).await?;
    // The last n market days present (about 13 records each).
    let mut start = s.time.len();
    let mut seen = 0;
    while start > 0 {
        let day = s.time[start - 1].date();
        if start == s.time.len() || s.time[start].date() != day {
            seen += 1;
            if seen > n {
                break;
            }
        }
        start -= 1;
    }
    let start = start.max(recent(account, usize::MAX, s.time.len()).start);
    Ok(history(
        &s,
        start..s.time.len(),
        false,
        Some(&m.market_symbol),
    ))
}

/// Every 30-minute reading of the latest date, keyed "0", "1", ...
pub async fn today(market: &dyn MarketData, account: &Account) -> Result<String> {
    let c = catalog(market).await?;
    let mut all = Vec::new();
    for m in subscribed(account, &c).into_iter().filter(|m| m.intraday) {
        all.push((m, market.indicator_intraday(&m.url).await?));
    }
    let latest = all
        .iter()
        .filter_map(|(_, s)| s.time.last().map(|t| t.date()))
        .max();
    let mut out = String::from("{");
    let mut n = 0;
    for (m, s) in &all {
        for i in 0..s.time.len() {
            if Some(s.time[i].date()) != latest {
                continue;
            }
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&format!("\"{n}\":{{\"datetime\":\""));
            push_key(&mut out, s.time[i]);
            out.push_str("\",\"close\":");
            push_num(&mut out, s.close[i]);
            out.push_str(",\"symbol\":");
            push_str(&mut out, &m.url);
            out.push_str(",\"market_symbol\":");
            push_str(&mut out, &m.market_symbol);
            out.push('}');
            n += 1;
        }
    }
    out.push('}');
    Ok(out)
}
