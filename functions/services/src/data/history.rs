//! History answers: records keyed by date, in each indicator's shape.

use super::format::{push_key, push_num, push_str};
use super::{catalog, recent, series, subscribed, tail};
use crate::error::Result;
use chrono::NaiveDate;
use platform::accounts::Account;
use platform::marketdata::{IndicatorMeta, IndicatorSeries, MarketData};

/// `{key: {"close": x[, "sentiment": s][, "market_symbol": m]}}` for records `range`.
pub fn history(
    s: &IndicatorSeries,
    range: std::ops::Range<usize>,
    sentiment: bool,
    market: Option<&str>,
) -> String {
    let mut out = String::with_capacity(range.len() * 64 + 2);
    out.push('{');
    for i in range {
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
fn seasonality_history(s: &IndicatorSeries, range: std::ops::Range<usize>, symbol: &str) -> String {
    use chrono::Datelike;
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
    s: &IndicatorSeries,
    range: std::ops::Range<usize>,
    sentiment: bool,
    market: Option<&str>,
) -> String {
    if m.subtype == "seasonality_month" {
        seasonality_history(s, range, &m.market_symbol)
    } else {
        history(s, range, sentiment, market)
    }
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
    let tails = tails(market, &subscribed).await?;
    for (n, (m, s)) in subscribed.into_iter().zip(tails).enumerate() {
        let Some(i) = s.time.len().checked_sub(1) else {
            continue;
        };
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

/// What holds an indicator's reading on `d`: its tail for recent dates,
/// else its whole series.
async fn reading_source(
    market: &dyn MarketData,
    m: &IndicatorMeta,
    d: NaiveDate,
) -> Result<std::sync::Arc<IndicatorSeries>> {
    let t = tail(market, &m.url).await?;
    if t.time.first().is_some_and(|first| first.date() <= d) {
        Ok(t)
    } else {
        series(market, &m.url).await
    }
}

/// The tails of `metas`, in order, read a few at a time.
async fn tails(
    market: &dyn MarketData,
    metas: &[&IndicatorMeta],
) -> Result<Vec<std::sync::Arc<IndicatorSeries>>> {
    let mut out = Vec::with_capacity(metas.len());
    for chunk in metas.chunks(READ_AHEAD) {
        for t in futures::future::join_all(chunk.iter().map(|m| tail(market, &m.url))).await {
            out.push(t?);
        }
    }
    Ok(out)
}

pub fn on_date(s: &IndicatorSeries, d: NaiveDate) -> Option<usize> {
    let i = s.time.partition_point(|t| t.date() < d);
    (i < s.time.len() && s.time[i].date() == d).then_some(i)
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
        let reads = chunk.iter().map(|m| reading_source(market, m, d));
        readings.extend(futures::future::join_all(reads).await);
    }
    for (m, s) in subscribed.iter().zip(readings) {
        let s = s?;
        let Some(i) = on_date(&s, d) else { continue };
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
    let tails = tails(market, &subscribed).await?;
    for (m, s) in subscribed.into_iter().zip(tails) {
        if out.len() > 1 {
            out.push(',');
        }
        push_str(&mut out, &m.url);
        out.push_str(":[");
        for (k, i) in recent(account, n, s.time.len()).enumerate() {
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
