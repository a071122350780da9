//! The scanner's query parameters, as sent and as checked.

use crate::error::{Error, Result};
use chrono::NaiveDate;
use engine::scanner::Horizon;
use serde::Deserialize;

#[cfg(feature = "openapi")]
use utoipa::IntoParams;

/// Query of `GET /smart-stock-scanner/single/{ticker}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct SingleParams {
    /// First scan date, YYYY-MM-DD; default the latest scan date. At most `end_date`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, example = "2026-11-20"))]
    pub start_date: Option<String>,
    /// Last scan date, YYYY-MM-DD; default the latest scan date.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, example = "2026-11-20"))]
    pub end_date: Option<String>,
    /// `true` adds each item's `backtest_info` (default `false`).
    #[cfg_attr(feature = "openapi", param(value_type = Option<bool>))]
    pub include_backtest: Option<String>,
}

/// Query of `GET /smart-stock-scanner/latest-day-all`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct DayParams {
    /// Only this stock's items (any case).
    #[cfg_attr(
        feature = "openapi",
        param(pattern = "^[A-Za-z0-9._^-]{1,32}$", example = "S0001")
    )]
    pub ticker: Option<String>,
    /// The scan date, YYYY-MM-DD; default the latest scan date.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, example = "2026-11-20"))]
    pub date: Option<String>,
    /// `SwingAI` (default: technical, candlestick and CPM signals, held up to
    /// 5 sessions) or `MidTermAI` (Optix, high/low and trend-score signals,
    /// held up to 21). Any case.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, pattern = "^(SwingAI|MidTermAI)$"))]
    pub category: Option<String>,
    /// `true` adds each item's `backtest_info` (default `false`).
    #[cfg_attr(feature = "openapi", param(value_type = Option<bool>))]
    pub include_backtest: Option<String>,
    /// Items to answer from `offset` on: default all of them, or 20 with
    /// `include_backtest` (at most 10,000, or 50 with `include_backtest`).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 50))]
    pub limit: Option<i64>,
    /// Items to skip, in the answer's order (default 0).
    #[cfg_attr(feature = "openapi", param(minimum = 0))]
    pub offset: Option<i64>,
}

/// Items of one `latest-day-all` answer: the whole day's summary fits a
/// response; trade lists are long, so fewer items carry them.
pub const MAX_ITEMS: usize = 10_000;
pub const MAX_ITEMS_WITH_BACKTEST: usize = 50;
pub const DEFAULT_ITEMS_WITH_BACKTEST: usize = 20;

/// The checked query of `single/{ticker}`: dates absent stand for the latest scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Single {
    pub start: Option<NaiveDate>,
    pub end: Option<NaiveDate>,
    pub include_backtest: bool,
}

/// The checked query of `latest-day-all`.
#[derive(Debug, Clone, PartialEq)]
pub struct Day {
    pub ticker: Option<String>,
    pub date: Option<NaiveDate>,
    pub horizon: Horizon,
    pub include_backtest: bool,
    pub limit: usize,
    pub offset: usize,
}

fn present(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

fn date(field: &str, v: &Option<String>) -> Result<Option<NaiveDate>> {
    present(v)
        .map(|s| crate::dates::field(field, s))
        .transpose()
}

fn flag(field: &str, v: &Option<String>) -> Result<bool> {
    match present(v).map(str::to_ascii_lowercase).as_deref() {
        None | Some("false" | "0" | "no") => Ok(false),
        Some("true" | "1" | "yes") => Ok(true),
        Some(_) => Err(Error::invalid(field, "must be true or false")),
    }
}

impl SingleParams {
    pub fn validate(&self) -> Result<Single> {
        let (start, end) = (
            date("start_date", &self.start_date)?,
            date("end_date", &self.end_date)?,
        );
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            return Err(Error::invalid(
                "start_date",
                format!("must not be after end_date ({s} > {e})"),
            ));
        }
        Ok(Single {
            start,
            end,
            include_backtest: flag("include_backtest", &self.include_backtest)?,
        })
    }
}

impl DayParams {
    pub fn validate(&self) -> Result<Day> {
        let horizon = match present(&self.category) {
            None => Horizon::SwingAI,
            Some(c) => [Horizon::SwingAI, Horizon::MidTermAI]
                .into_iter()
                .find(|h| h.name().eq_ignore_ascii_case(c))
                .ok_or_else(|| {
                    Error::invalid(
                        "category",
                        format!("must be SwingAI or MidTermAI, got '{c}'"),
                    )
                })?,
        };
        let ticker = match present(&self.ticker) {
            None => None,
            Some(t) if regex_free_ticker(t) => Some(super::super::ticker(t)),
            Some(t) => {
                return Err(Error::invalid(
                    "ticker",
                    format!("'{t}' is not a ticker (letters, digits and . _ ^ -, 1-32)"),
                ));
            }
        };
        let include_backtest = flag("include_backtest", &self.include_backtest)?;
        let (default, max) = if include_backtest {
            (DEFAULT_ITEMS_WITH_BACKTEST, MAX_ITEMS_WITH_BACKTEST)
        } else {
            (MAX_ITEMS, MAX_ITEMS)
        };
        let limit = match self.limit {
            None => default,
            Some(l) => Error::check_range("limit", l, 1, max as i64)? as usize,
        };
        let offset = match self.offset {
            None => 0,
            Some(o) => Error::check_range("offset", o, 0, i64::MAX)? as usize,
        };
        Ok(Day {
            ticker,
            date: date("date", &self.date)?,
            horizon,
            include_backtest,
            limit,
            offset,
        })
    }
}

/// [`super::super::TICKER_PATTERN`] without a regex engine.
pub fn regex_free_ticker(t: &str) -> bool {
    (1..=32).contains(&t.len())
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._^-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(e: Error) -> String {
        match e {
            Error::Invalid(e) => e.field,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_spellings_and_bad_values() {
        let s = SingleParams::default().validate().unwrap();
        assert_eq!((s.start, s.end, s.include_backtest), (None, None, false));
        let s = SingleParams {
            start_date: Some("2026-11-02".into()),
            end_date: Some(" ".into()),
            include_backtest: Some("TRUE".into()),
        }
        .validate()
        .unwrap();
        assert_eq!(s.start, "2026-11-02".parse().ok());
        assert!(s.include_backtest && s.end.is_none());
        let bad = |p: SingleParams| field_of(p.validate().unwrap_err());
        assert_eq!(
            bad(SingleParams {
                start_date: Some("2026-13-01".into()),
                ..Default::default()
            }),
            "start_date"
        );
        assert_eq!(
            bad(SingleParams {
                start_date: Some("2026-11-20".into()),
                end_date: Some("2026-11-19".into()),
                ..Default::default()
            }),
            "start_date"
        );
        assert_eq!(
            bad(SingleParams {
                end_date: Some("yesterday".into()),
                ..Default::default()
            }),
            "end_date"
        );
        assert_eq!(
            bad(SingleParams {
                include_backtest: Some("maybe".into()),
                ..Default::default()
            }),
            "include_backtest"
        );

        let d = DayParams::default().validate().unwrap();
        assert_eq!(
            (d.horizon, d.ticker, d.date),
            (Horizon::SwingAI, None, None)
        );
        let d = DayParams {
            ticker: Some("aapl".into()),
            category: Some("midtermai".into()),
            date: Some("2026-11-20".into()),
            include_backtest: Some("1".into()),
            limit: None,
            offset: Some(3),
        }
        .validate()
        .unwrap();
        assert_eq!(d.horizon, Horizon::MidTermAI);
        assert_eq!((d.limit, d.offset), (20, 3));
        assert_eq!(DayParams::default().validate().unwrap().limit, MAX_ITEMS);
        assert_eq!(d.ticker.as_deref(), Some("AAPL"));
        assert!(d.include_backtest);
        let bad = |p: DayParams| field_of(p.validate().unwrap_err());
        assert_eq!(
            bad(DayParams {
                category: Some("LongTerm".into()),
                ..Default::default()
            }),
            "category"
        );
        assert_eq!(
            bad(DayParams {
                ticker: Some("A/B".into()),
                ..Default::default()
            }),
            "ticker"
        );
        assert_eq!(
            bad(DayParams {
                date: Some("20261120".into()),
                ..Default::default()
            }),
            "date"
        );
        assert_eq!(
            bad(DayParams {
                include_backtest: Some("true".into()),
                limit: Some(51),
                ..Default::default()
            }),
            "limit"
        );
        assert_eq!(
            bad(DayParams {
                limit: Some(0),
                ..Default::default()
            }),
            "limit"
        );
        assert_eq!(
            bad(DayParams {
                offset: Some(-1),
                ..Default::default()
            }),
            "offset"
        );
    }
}
