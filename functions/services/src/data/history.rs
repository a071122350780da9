//! History answers: records keyed by date, in each indicator's shape.

use super::format::{push_key, push_num, push_str};
use super::{Readable, Records, catalog, series, subscribed, tail};
use crate::error::Result;
use chrono::NaiveDate;
use platform::accounts::Account;
use platform::marketdata::{IndicatorMeta, MarketData};

/// `{key: {"close": x[, "sentiment": s][, "market_symbol": m]}}` for `records`.
pub fn history(r: &Readable, records: Records, sentiment: bool, market: Option<&str>) -> String {
    let s = r.series();
    let mut out = String::with_capacity(records.len() * 64 + 2);
    out.push('{');
    for i in records.range() {
        if out.len() > 1 {
            out.push(',');
        }
        out.push('"');
        push_key(&mut out, s.time[i]);
        out.push_str("\":{\"close\":");
        push_num(&mut out, s.close[i]);
        if sentiment {
            out.push_str(",\"sentiment\":");
            match s.sentiment[i] {
                Some(v) => push_num(&mut out, v),
                None => out.push_str("null"),
            }
        }
        if let Some(m) = market {
            out.push_str(",\"market_symbol\":");
            push_str(&mut out, m);
        }
        out.push('}');
    }
    out.push('}');
    out
}

/// Seasonality-month records: `{key: {symbol, month, TotReturn, AvgReturn, std}}`,
/// the month's return with the average and sample deviation of that calendar
/// month's returns up to and including it.
fn seasonality_history(r: &Readable, records: Records, symbol: &str) -> String {
    use chrono::Datelike;
    let (s, range) = (r.series(), records.range());
    let mut by_month: [Vec<f64>; 12] = Default::default();
    let mut out = String::from("{");
    for i in 0..range.end {
        let month = s.time[i].month();
        let seen = &mut by_month[month as usize - 1];
        seen.push(s.close[i]);
        if i < range.start {
            continue;
        }
        let avg = seen.iter().sum::<f64>() / seen.len() as f64;
        let std = engine::stats::std_dev(seen).unwrap_or(0.0);
        if out.len() > 1 {
            out.push(',');
        }
        out.push('"');
        push_key(&mut out, s.time[i]);
        out.push_str("\":{\"symbol\":");
        push_str(&mut out, symbol);
        out.push_str(&format!(",\"month\":\"{month:02}\",\"TotReturn\":"));
        push_num(&mut out, s.close[i]);
        out.push_str(",\"AvgReturn\":");
        push_num(&mut out, avg);
        out.push_str(",\"std\":");
        push_num(&mut out, std);
        out.push('}');
    }
    out.push('}');
    out
}

/// History records in the indicator's own shape.
pub fn records(
    m: &IndicatorMeta,
    r: &Readable,
    records: Records,
    sentiment: bool,
    market: Option<&str>,
) -> String {
    if m.subtype == "seasonality_month" {
        seasonality_history(r, records, &m.market_symbol)
    } else {
        history(r, records, sentiment, market)
    }
}

/// Which readings of one indicator a history answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// Every reading the caller may read (4.2, 4.3).
    All,
    /// The latest `n` of them (4.4, 4.5).
    Last(usize),
    /// The one on a date, if any (4.8).
    On(NaiveDate),
}

/// What a history answer adds to each reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extras {
    pub sentiment: bool,
    pub market_symbol: bool,
}

/// One indicator's history as the caller may read it: `code` from the
/// catalog (404 unknown, 405 not subscribed), the readings in `span` within
/// the trial's window.
pub async fn indicator_history(
    market: &dyn MarketData,
    account: &Account,
    code: &str,
    span: Span,
    extras: Extras,
) -> Result<String> {
    let c = catalog(market).await?;
    let (m, r) = super::readable(market, account, &c, code).await?;
    let readings = match span {
        Span::All => r.all(),
        Span::Last(n) => r.last(n),
        Span::On(d) => r.on(d),
    };
    let symbol = extras.market_symbol.then_some(m.market_symbol.as_str());
    Ok(records(m, &r, readings, extras.sentiment, symbol))
}

/// The latest reading of each subscribed indicator, keyed "0", "1", ...
pub async fn snapshot(
    market: &dyn MarketData,
    account: &Account,
    with_market: bool,
) -> Result<String> {
    let c = catalog(market).await?;
    let mut out = String::from("{");
    let subscribed = subscribed(account, &c);
    let tails = tails(market, account, &subscribed).await?;
    for (n, (m, r)) in subscribed.into_iter().zip(tails).enumerate() {
        let Some(i) = r.latest() else {
            continue;
        };
        let s = r.series();
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&format!("\"{n}\":{{\"name\":"));
        push_str(&mut out, &m.chart_name);
        out.push_str(",\"indicator\":");
        push_str(&mut out, &m.url);
        out.push_str(",\"last_close\":");
        push_num(&mut out, s.close[i]);
        out.push_str(",\"update_date\":\"");
        push_key(&mut out, s.time[i]);
        out.push_str("\",\"sentiment_value\":");
        push_str(
            &mut out,
            &s.sentiment[i].map(|v| format!("{v}")).unwrap_or_default(),
        );
        if with_market {
            out.push_str(",\"market_symbol\":");
            push_str(&mut out, &m.market_symbol);
        }
        out.push('}');
    }
    out.push('}');
    Ok(out)
}

/// Series read at once by the answers over every indicator.
const READ_AHEAD: usize = 16;

/// What holds an indicator's reading on `d`: its tail for recent dates (and
/// always for a trial, whose window the tail holds), else its whole series.
async fn reading_source(
    market: &dyn MarketData,
    account: &Account,
    m: &IndicatorMeta,
    d: NaiveDate,
) -> Result<Readable> {
    let t = tail(market, &m.url).await?;
    if account.plan.trial || t.time.first().is_some_and(|first| first.date() <= d) {
        Ok(Readable::new(account, t))
    } else {
        Ok(Readable::new(account, series(market, &m.url).await?))
    }
}

/// The tails of `metas` as `account` may read them, in order, read a few at a time.
async fn tails(
    market: &dyn MarketData,
    account: &Account,
    metas: &[&IndicatorMeta],
) -> Result<Vec<Readable>> {
    let mut out = Vec::with_capacity(metas.len());
    for chunk in metas.chunks(READ_AHEAD) {
        for t in futures::future::join_all(chunk.iter().map(|m| tail(market, &m.url))).await {
            out.push(Readable::new(account, t?));
        }
    }
    Ok(out)
}

/// Every subscribed indicator's reading on `d`, keyed by code.
pub async fn all_for_date(
    market: &dyn MarketData,
    account: &Account,
    d: NaiveDate,
) -> Result<String> {
    let c = catalog(market).await?;
    let mut out = String::from("{");
    let subscribed = subscribed(account, &c);
    // Recent dates are in every indicator's tail; older ones need the
    // series, read a few at a time (decoding runs on the blocking pool).
    let mut readings = Vec::with_capacity(subscribed.len());
    for chunk in subscribed.chunks(READ_AHEAD) {
        let reads = chunk.iter().map(|m| reading_source(market, account, m, d));
        readings.extend(futures::future::join_all(reads).await);
    }
    for (m, r) in subscribed.iter().zip(readings) {
        let r = r?;
        let Some(i) = r.on(d).range().next() else {
            continue;
        };
        let s = r.series();
        if out.len() > 1 {
            out.push(',');
        }
        push_str(&mut out, &m.url);
        out.push_str(":{\"name\":");
        push_str(&mut out, &m.chart_name);
        out.push_str(",\"last_close\":");
        push_num(&mut out, s.close[i]);
        out.push_str(&format!(
            ",\"update_date\":\"{}\",\"sentiment_value\":",
            s.time[i].date().format("%Y-%m-%d")
        ));
        match s.sentiment[i] {
            Some(v) => push_num(&mut out, v),
            None => out.push_str("null"),
        }
        out.push('}');
    }
    out.push('}');
    Ok(out)
}

/// The last `n` readings of every subscribed indicator, keyed by code.
pub async fn bulk(market: &dyn MarketData, account: &Account, n: usize) -> Result<String> {
    let c = catalog(market).await?;
    let mut out = String::from("{");
    let subscribed = subscribed(account, &c);
    let tails = tails(market, account, &subscribed).await?;
    for (m, r) in subscribed.into_iter().zip(tails) {
        if out.len() > 1 {
            out.push(',');
        }
        push_str(&mut out, &m.url);
        out.push_str(":[");
        let s = r.series();
        for (k, i) in r.last(n).range().enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push_str(&format!(
                "{{\"date\":\"{}\",\"close\":",
                s.time[i].date().format("%Y-%m-%d")
            ));
            push_num(&mut out, s.close[i]);
            out.push('}');
        }
        out.push(']');
    }
    out.push('}');
    Ok(out)
}
