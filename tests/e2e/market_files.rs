//! Market data files as vendors deliver them, made from a sample set: what
//! the data update tests import.

use chrono::NaiveDate;
use platform::marketdata::{MarketData, ParquetMarketData};
use serde_json::json;

/// A Polygon grouped-daily answer of `date` for `symbols`: each symbol's
/// last stored bar moved up by 1%.
pub async fn grouped_daily(
    market: &ParquetMarketData,
    symbols: &[String],
    date: NaiveDate,
) -> Vec<u8> {
    let t = date
        .and_hms_opt(21, 0, 0)
        .expect("a time")
        .and_utc()
        .timestamp_millis();
    let mut results = Vec::new();
    for s in symbols {
        let b = market.daily_stored(s).await.unwrap();
        let i = b.len() - 1;
        results.push(
            json!({"T": s, "o": b.open[i] * 1.01, "h": b.high[i] * 1.01, "l": b.low[i] * 1.01,
                            "c": b.close[i] * 1.01, "v": b.volume[i], "t": t, "n": 10}),
        );
    }
    serde_json::to_vec(&json!({"adjusted": false, "queryCount": results.len(),
                               "resultsCount": results.len(), "status": "OK", "results": results}))
    .unwrap()
}

/// The symbols whose bars end on `last`, split in two: all but the last
/// stock in the catalog, and that stock (the one that completes a session).
pub async fn ending_on(market: &ParquetMarketData, last: NaiveDate) -> (Vec<String>, String) {
    let symbols = market.symbols().await.unwrap();
    let ending: Vec<_> = symbols.iter().filter(|i| i.last_date == last).collect();
    let stock = ending
        .iter()
        .rfind(|i| i.asset_class == "stock")
        .expect("a stock")
        .symbol
        .clone();
    let rest = ending
        .iter()
        .map(|i| i.symbol.clone())
        .filter(|s| *s != stock)
        .collect();
    (rest, stock)
}
