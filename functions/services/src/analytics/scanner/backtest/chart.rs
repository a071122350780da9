//! What a scanner backtest's report draws beyond its result (which holds
//! the daily equity and every trade): each traded symbol's closes over the
//! backtest's sessions, to mark its trades on.

use crate::analytics::daily;
use crate::error::Result;
use chrono::NaiveDate;
use platform::marketdata::MarketData;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// The most traded symbols whose prices a report carries.
pub const CHARTED_SYMBOLS: usize = 100;

/// One symbol's sessions and closes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Closes {
    pub time: Vec<String>,
    pub close: Vec<f64>,
}

/// The closes of the result's traded symbols (the most traded first when
/// there are more than [`CHARTED_SYMBOLS`]) from its first session to its last.
pub async fn chart(market: &dyn MarketData, result: &Value) -> Result<BTreeMap<String, Closes>> {
    let data = &result["data"];
    let day = |v: &Value| {
        v.as_str()
            .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
    };
    let dates = data["dates"].as_array().cloned().unwrap_or_default();
    let (Some(first), Some(last)) = (dates.first().and_then(day), dates.last().and_then(day))
    else {
        return Ok(BTreeMap::new());
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for s in data["result"]["Symbol"].as_array().into_iter().flatten() {
        if let Some(s) = s.as_str() {
            *counts.entry(s.to_string()).or_default() += 1;
        }
    }
    let mut symbols: Vec<(String, usize)> = counts.into_iter().collect();
    symbols.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    symbols.truncate(CHARTED_SYMBOLS);
    let mut out = BTreeMap::new();
    for (symbol, _) in symbols {
        let bars = daily(market, "Symbol", &symbol).await?;
        let a = bars.time.partition_point(|t| t.date() < first);
        let b = bars.time.partition_point(|t| t.date() <= last);
        out.insert(
            symbol,
            Closes {
                time: (a..b)
                    .map(|i| bars.date(i).format("%Y-%m-%d").to_string())
                    .collect(),
                close: bars.close[a..b].to_vec(),
            },
        );
    }
    Ok(out)
}
