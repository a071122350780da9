//! A stored symbol's daily bars read back: what its backtests run on, over
//! a date range, as rows (JSON) or a table (CSV, Parquet, Arrow). A trial
//! account reads the last [`TRIAL_RECORDS`] bars, as it reads any series.

use super::TRIAL_RECORDS;
use crate::error::{Error, Result};
use chrono::NaiveDate;
use engine::Bars;
use platform::PortError;
use platform::accounts::Account;
use platform::marketdata::MarketData;
use platform::marketdata::columns::Column;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::sync::Arc;
#[cfg(feature = "openapi")]
use utoipa::{IntoParams, ToSchema};

/// Query of `GET /ws/prices/{ticker}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct PricesQuery {
    /// The first session, `YYYY-MM-DD` (default: the first stored).
    #[cfg_attr(feature = "openapi", param(format = Date, example = "2024-01-02"))]
    pub start: Option<String>,
    /// The last session, `YYYY-MM-DD` (default: the latest stored).
    #[cfg_attr(feature = "openapi", param(format = Date, example = "2024-06-28"))]
    pub end: Option<String>,
    /// `json` (rows), `csv`, `parquet` or `arrow` (an Arrow IPC stream);
    /// without it, `Accept` chooses (`text/csv`,
    /// `application/vnd.apache.parquet`,
    /// `application/vnd.apache.arrow.stream`; otherwise JSON).
    #[cfg_attr(
        feature = "openapi",
        param(pattern = "^(json|csv|parquet|arrow)$", example = "csv")
    )]
    pub format: Option<String>,
    /// `true` (the default): prices before each recorded split divided by
    /// its ratio, volumes multiplied; `false`: as traded.
    #[cfg_attr(feature = "openapi", param(example = false))]
    pub adjusted: Option<bool>,
}

/// One daily bar: the session's date, prices and volume as stored.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(rename_all = "PascalCase")]
pub struct PriceBar {
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2024-01-02"))]
    pub date: NaiveDate,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
    pub volume: f64,
}

/// The answer of `GET /ws/prices/{ticker}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PricesAnswer {
    #[cfg_attr(feature = "openapi", schema(example = "SPX"))]
    pub symbol: String,
    /// Whether the prices are split-adjusted (the default) or as traded.
    pub adjusted: bool,
    /// The sessions asked for, oldest first (a trial account: of the last 90).
    pub bars: Vec<PriceBar>,
}

/// A symbol's bars within a request's range and the account's window.
#[derive(Debug, Clone)]
pub struct Prices {
    pub symbol: String,
    pub adjusted: bool,
    bars: Arc<Bars>,
    rows: Range<usize>,
}

impl Prices {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table's columns: `Date` (dates), `Open`, `High`, `Low`,
    /// `Close`, `Volume`, as the JSON rows name them.
    pub fn columns(&self) -> Vec<(String, Column)> {
        let b = &self.bars;
        let r = self.rows.clone();
        let number = |v: &[f64]| Column::Number(v[r.clone()].iter().map(|x| Some(*x)).collect());
        vec![
            (
                "Date".into(),
                Column::Date(b.time[r.clone()].iter().map(|t| Some(t.date())).collect()),
            ),
            ("Open".into(), number(&b.open)),
            ("High".into(), number(&b.high)),
            ("Low".into(), number(&b.low)),
            ("Close".into(), number(&b.close)),
            ("Volume".into(), number(&b.volume)),
        ]
    }

    /// The rows, as JSON answers them.
    pub fn answer(&self) -> PricesAnswer {
        let b = &self.bars;
        PricesAnswer {
            symbol: self.symbol.clone(),
            adjusted: self.adjusted,
            bars: self
                .rows
                .clone()
                .map(|i| PriceBar {
                    date: b.time[i].date(),
                    open: b.open[i],
                    high: b.high[i],
                    low: b.low[i],
                    close: b.close[i],
                    volume: b.volume[i],
                })
                .collect(),
        }
    }
}

impl PricesQuery {
    /// The range asked for: each end a date in range, the start not after the end.
    pub fn range(&self) -> Result<(Option<NaiveDate>, Option<NaiveDate>)> {
        let date = |field: &str, v: &Option<String>| {
            v.as_deref()
                .map(|t| crate::dates::field(field, t))
                .transpose()
        };
        let (start, end) = (date("start", &self.start)?, date("end", &self.end)?);
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            return Err(Error::invalid("start", format!("{s} is after end {e}")));
        }
        Ok((start, end))
    }
}

/// `ticker`'s daily bars from `start` to `end` (each optional) as `account`
/// may read them, split-adjusted or as traded: 404 for a symbol with no bars.
pub async fn prices(
    market: &dyn MarketData,
    account: &Account,
    ticker: &str,
    (start, end): (Option<NaiveDate>, Option<NaiveDate>),
    adjusted: bool,
) -> Result<Prices> {
    let symbol = ticker.trim().to_ascii_uppercase();
    // A name no symbol can have is no stored symbol.
    if platform::marketdata::layout::check_name("symbol", &symbol).is_err() {
        return Err(Error::unknown_symbol("ticker", ticker));
    }
    let read = if adjusted {
        market.daily(&symbol).await
    } else {
        market.daily_raw(&symbol).await
    };
    let bars = match read {
        Ok(b) => b,
        Err(PortError::NotFound(_)) => return Err(Error::unknown_symbol("ticker", ticker)),
        Err(e) => return Err(e.into()),
    };
    Ok(Prices {
        adjusted,
        ..within(symbol, bars, account.plan.trial, start, end)
    })
}

/// The bars dated from `start` to `end`, and of a trial's only the last
/// [`TRIAL_RECORDS`].
fn within(
    symbol: String,
    bars: Arc<Bars>,
    trial: bool,
    start: Option<NaiveDate>,
    end: Option<NaiveDate>,
) -> Prices {
    let n = bars.len();
    let first = if trial {
        n.saturating_sub(TRIAL_RECORDS)
    } else {
        0
    };
    let from = start.map_or(0, |s| bars.time.partition_point(|t| t.date() < s));
    let to = end.map_or(n, |e| bars.time.partition_point(|t| t.date() <= e));
    let from = from.max(first);
    Prices {
        symbol,
        adjusted: true,
        bars,
        rows: from..to.max(from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(n: usize) -> Arc<Bars> {
        let mut b = Bars::default();
        let d0 = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
        for i in 0..n {
            let x = 100.0 + i as f64;
            b.push(
                (d0 + chrono::Days::new(i as u64))
                    .and_hms_opt(0, 0, 0)
                    .unwrap(),
                x,
                x + 2.0,
                x - 1.0,
                x + 1.0,
                1e6 + i as f64,
            );
        }
        Arc::new(b)
    }

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2024, 1, d).unwrap()
    }

    #[test]
    fn the_range_is_inclusive_and_a_trial_reads_the_last_ninety() {
        let p = within("X".into(), bars(200), false, Some(day(3)), Some(day(5)));
        let dates: Vec<_> = p.answer().bars.iter().map(|b| b.date).collect();
        assert_eq!(dates, vec![day(3), day(4), day(5)]);
        assert_eq!(p.answer().bars[0].close, 103.0);
        assert_eq!(within("X".into(), bars(200), false, None, None).len(), 200);
        let t = within("X".into(), bars(200), true, None, None);
        assert_eq!((t.len(), t.rows.start), (90, 110));
        // Asked for before the window: the window's part of it, or nothing.
        assert!(within("X".into(), bars(200), true, Some(day(3)), Some(day(5))).is_empty());
        // A range between sessions, or after the last: empty, not an error.
        assert!(within("X".into(), bars(5), false, Some(day(20)), None).is_empty());
    }

    #[test]
    fn the_table_holds_the_rows_values() {
        let p = within("X".into(), bars(10), false, Some(day(2)), Some(day(3)));
        let cols = p.columns();
        let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Date", "Open", "High", "Low", "Close", "Volume"]);
        assert_eq!(cols[0].1, Column::Date(vec![Some(day(2)), Some(day(3))]));
        assert_eq!(cols[4].1, Column::Number(vec![Some(102.0), Some(103.0)]));
    }

    #[test]
    fn a_start_after_the_end_names_start() {
        let q = PricesQuery {
            start: Some("2024-02-01".into()),
            end: Some("2024-01-01".into()),
            ..Default::default()
        };
        assert_eq!(q.range().unwrap_err().field(), Some("start"));
        let q = PricesQuery {
            start: Some("2024-13-01".into()),
            ..Default::default()
        };
        assert_eq!(q.range().unwrap_err().field(), Some("start"));
    }
}
