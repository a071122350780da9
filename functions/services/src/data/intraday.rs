//! Intraday answers (4.5): 30-minute readings, 13 a market day.

use super::format::{push_key, push_num, push_str};
use super::history::history;
use super::{Readable, catalog, indicator, subscribed};
use crate::error::{Error, Result};
use platform::accounts::Account;
use platform::marketdata::{IndicatorMeta, MarketData};

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

/// A readable indicator with a 30-minute series, and that series as the
/// account may read it.
async fn series_of<'a>(
    market: &dyn MarketData,
    account: &Account,
    c: &'a [IndicatorMeta],
    code: &str,
) -> Result<(&'a IndicatorMeta, Readable)> {
    let m = indicator(account, c, code)?;
    if !m.intraday {
        return Err(Error::Unknown(crate::FieldError::new(
            "symbol",
            format!("'{code}' has no intraday data"),
        )));
    }
    let s = market.indicator_intraday(code).await?;
    Ok((m, Readable::new(account, s)))
}

/// The full 30-minute history, keys with time of day.
pub async fn full_history(
    market: &dyn MarketData,
    account: &Account,
    code: &str,
) -> Result<String> {
    let c = catalog(market).await?;
    let (m, r) = series_of(market, account, &c, code).await?;
    Ok(history(&r, r.all(), false, Some(&m.market_symbol)))
}

/// The last `n` market days of 30-minute readings.
pub async fn limit_days(
    market: &dyn MarketData,
    account: &Account,
    code: &str,
    n: usize,
) -> Result<String> {
    let c = catalog(market).await?;
    let (m, r) = series_of(market, account, &c, code).await?;
    let s = r.series();
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
    Ok(history(&r, r.from(start), false, Some(&m.market_symbol)))
}

/// Every 30-minute reading of the latest date, keyed "0", "1", ...
pub async fn today(market: &dyn MarketData, account: &Account) -> Result<String> {
    let c = catalog(market).await?;
    let mut all = Vec::new();
    for m in subscribed(account, &c).into_iter().filter(|m| m.intraday) {
        let s = market.indicator_intraday(&m.url).await?;
        all.push((m, Readable::new(account, s)));
    }
    let latest = all
        .iter()
        .filter_map(|(_, r)| r.latest().map(|i| r.series().time[i].date()))
        .max();
    let mut out = String::from("{");
    let mut n = 0;
    for (m, r) in &all {
        let s = r.series();
        for i in r.all().range() {
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
