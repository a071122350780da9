//! Daily bars in the JSON answers of two market-data APIs, saved to files:
//! Polygon's aggregates (`/v2/aggs/ticker/{T}/range/1/day/...`, one symbol)
//! and grouped daily bars (`/v2/aggs/grouped/...`, every symbol of a day),
//! and Alpaca's bars (`/v2/stocks/{symbol}/bars`, one symbol, or
//! `/v2/stocks/bars`, a map of symbols). A bar's date is the UTC date of its
//! timestamp: both label a daily bar at the session's midnight or its close
//! in New York, which fall on that date in UTC.

use super::report::{Finding, Severity};
use super::{ImportError, RawRow, SymbolRows};
use chrono::{DateTime, NaiveDate, Utc};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct PolygonAnswer {
    ticker: Option<String>,
    status: Option<String>,
    adjusted: Option<bool>,
    #[serde(default)]
    results: Vec<PolygonBar>,
}

#[derive(Deserialize)]
struct PolygonBar {
    #[serde(rename = "T")]
    ticker: Option<String>,
    o: f64,
    h: f64,
    l: f64,
    c: f64,
    #[serde(default)]
    v: f64,
    /// Milliseconds since the epoch.
    t: i64,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum AlpacaBars {
    One(Vec<AlpacaBar>),
    Many(BTreeMap<String, Vec<AlpacaBar>>),
}

#[derive(Deserialize)]
struct AlpacaAnswer {
    bars: AlpacaBars,
    symbol: Option<String>,
}

#[derive(Deserialize)]
struct AlpacaBar {
    /// RFC 3339 time.
    t: DateTime<Utc>,
    o: f64,
    h: f64,
    l: f64,
    c: f64,
    #[serde(default)]
    v: f64,
}

/// Parses a saved Polygon or Alpaca answer (told apart by its `results` or
/// `bars` member) into each symbol's rows; `symbol` names a single-symbol
/// answer that does not name itself, or overrides its name. Rows are
/// numbered from 1 in the answer's order (across symbols for a map). Also
/// answers warnings about the file as a whole.
pub fn read_json(
    file: &str,
    data: &[u8],
    symbol: Option<&str>,
) -> Result<(Vec<SymbolRows>, Vec<Finding>), ImportError> {
    let fail = super::failing(file);
    let value: serde_json::Value =
        serde_json::from_slice(data).map_err(|e| fail(e.line(), None, format!("not JSON: {e}")))?;
    let mut warnings = Vec::new();
    let parts = if value.get("results").is_some() || value.get("resultsCount").is_some() {
        let answer: PolygonAnswer = serde_json::from_value(value)
            .map_err(|e| fail(0, None, format!("not a Polygon aggregates answer: {e}")))?;
        if let Some(status) = &answer.status
            && !matches!(status.as_str(), "OK" | "DELAYED")
        {
            return Err(fail(0, None, format!("the answer's status is {status}")));
        }
        if answer.adjusted == Some(true) {
            warnings.push(Finding {
                severity: Severity::Warning,
                rule: "adjusted_prices",
                symbol: None,
                line: 0,
                column: None,
                message: "the answer's prices are split-adjusted (\"adjusted\": true); the store \
                          keeps prices as traded and adjusts them on read by the recorded splits, \
                          so request adjusted=false"
                    .into(),
            });
        }
        let named = symbol.map(str::to_string).or(answer.ticker);
        let mut by_symbol: BTreeMap<String, Vec<RawRow>> = BTreeMap::new();
        for (k, bar) in answer.results.into_iter().enumerate() {
            let line = k + 1;
            let name = match (&bar.ticker, &named) {
                (Some(t), _) => t.clone(),
                (None, Some(n)) => n.clone(),
                (None, None) => {
                    return Err(fail(
                        line,
                        Some("T"),
                        "the bar names no symbol and the answer no ticker; give --symbol".into(),
                    ));
                }
            };
            let date = utc_date(bar.t)
                .ok_or_else(|| fail(line, Some("t"), format!("{} is not a time", bar.t)))?;
            by_symbol.entry(name).or_default().push(RawRow {
                line,
                date,
                ohlcv: [bar.o, bar.h, bar.l, bar.c, bar.v],
            });
        }
        by_symbol
    } else if value.get("bars").is_some() {
        let answer: AlpacaAnswer = serde_json::from_value(value)
            .map_err(|e| fail(0, None, format!("not an Alpaca bars answer: {e}")))?;
        let row = |line, b: AlpacaBar| RawRow {
            line,
            date: b.t.date_naive(),
            ohlcv: [b.o, b.h, b.l, b.c, b.v],
        };
        match answer.bars {
            AlpacaBars::One(bars) => {
                let name = symbol
                    .map(str::to_string)
                    .or(answer.symbol)
                    .ok_or_else(|| {
                        fail(0, None, "the answer names no symbol; give --symbol".into())
                    })?;
                let rows = bars
                    .into_iter()
                    .enumerate()
                    .map(|(k, b)| row(k + 1, b))
                    .collect();
                BTreeMap::from([(name, rows)])
            }
            AlpacaBars::Many(map) => {
                let mut line = 0;
                map.into_iter()
                    .map(|(name, bars)| {
                        let rows = bars
                            .into_iter()
                            .map(|b| {
                                line += 1;
                                row(line, b)
                            })
                            .collect();
                        (name, rows)
                    })
                    .collect()
            }
        }
    } else {
        return Err(fail(
            0,
            None,
            "neither a Polygon aggregates answer (results) nor an Alpaca bars answer (bars)".into(),
        ));
    };
    if parts.values().all(Vec::is_empty) {
        return Err(fail(0, None, "the answer holds no bars".into()));
    }
    Ok((
        parts
            .into_iter()
            .map(|(symbol, rows)| SymbolRows { symbol, rows })
            .collect(),
        warnings,
    ))
}

/// The UTC date of a timestamp in milliseconds.
fn utc_date(millis: i64) -> Option<NaiveDate> {
    DateTime::<Utc>::from_timestamp_millis(millis).map(|t| t.date_naive())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_york_midnight_and_close_fall_on_their_utc_date() {
        // 2020-01-02 00:00 in New York (EST) and 2020-10-14 16:00 (EDT).
        assert_eq!(utc_date(1577941200000).unwrap().to_string(), "2020-01-02");
        assert_eq!(utc_date(1602705600000).unwrap().to_string(), "2020-10-14");
    }
}
