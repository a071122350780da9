//! The scanner backtest's parameters (analytics 4.5), as sent and as checked.
//! Numbers may come as JSON numbers or as text; each bad value is an error
//! naming its field.

use crate::error::{Error, Result};
use chrono::NaiveDate;
use engine::scanner::portfolio::Allocation;
use engine::scanner::{SIGNALS, signal};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// A `min-max` filter as sent: two numbers joined by a hyphen. One schema
/// for the six `*_range` fields, which take the same text.
#[cfg(feature = "openapi")]
pub struct MinMax;

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for MinMax {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
                utoipa::openapi::schema::Type::String,
                utoipa::openapi::schema::Type::Null,
            ]))
            .examples(["0-50"])
            .pattern(Some(
                r"^[0-9]{1,6}(\.[0-9]{1,6})?-[0-9]{1,6}(\.[0-9]{1,6})?$",
            ))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl ToSchema for MinMax {}

/// `POST /smart-scanner-backtest/start` body.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ScannerBacktestParams {
    /// First session, YYYY-MM-DD.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2025-01-02"))]
    pub start_date: Option<Value>,
    /// Last session, YYYY-MM-DD; not before `start_date`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2026-11-20"))]
    pub end_date: Option<Value>,
    /// `stock`, `etf` or both (`stock/etf`).
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^(stock|etf|stock/etf|etf/stock)$", example = "stock"))]
    pub find_type: Option<Value>,
    /// Signal names of `get-predefined-signals`, or `["All"]`.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, min_items = 1, example = json!(["All"])))]
    pub signals: Option<Value>,
    /// Starting capital, above 0.
    #[cfg_attr(feature = "openapi", schema(value_type = f64, exclusive_minimum = 0.0, maximum = 1e12, example = 100000))]
    pub total_capital: Option<Value>,
    /// `long/short` shares of the capital, each 0-1, summing to at most 1
    /// and more than 0: `1.0/0.0` is all long.
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = r"^(0(\.[0-9]+)?|1(\.0+)?)/(0(\.[0-9]+)?|1(\.0+)?)$", example = "1.0/0.0"))]
    pub long_short_ratio: Option<Value>,
    /// Percent of the traded value paid on entry and on exit (default 0), 0-10.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, minimum = 0.0, maximum = 10.0, example = 0.1))]
    pub commission: Option<Value>,
    /// The task's name in the task list.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, max_length = 200, example = "all signals, 2025"))]
    pub name: Option<Value>,
    /// `min-max` of the items' profit target, percent.
    #[cfg_attr(feature = "openapi", schema(value_type = MinMax, inline, required = false))]
    pub profit_target_range: Option<Value>,
    /// `min-max` of the items' stop loss, percent.
    #[cfg_attr(feature = "openapi", schema(value_type = MinMax, inline, required = false))]
    pub stop_loss_range: Option<Value>,
    /// `min-max` of the items' holding period, sessions.
    #[cfg_attr(feature = "openapi", schema(value_type = MinMax, inline, required = false))]
    pub time_in_market_range: Option<Value>,
    /// `min-max` of the items' TrendScore.
    #[cfg_attr(feature = "openapi", schema(value_type = MinMax, inline, required = false))]
    pub trend_range: Option<Value>,
    /// `min-max` of the items' RelTrendScore.
    #[cfg_attr(feature = "openapi", schema(value_type = MinMax, inline, required = false))]
    pub reltrend_range: Option<Value>,
    /// `min-max` of the items' Optix reading.
    #[cfg_attr(feature = "openapi", schema(value_type = MinMax, inline, required = false))]
    pub optix_range: Option<Value>,
    /// `Kelly` (default) or a fixed fraction of the side's capital per trade, above 0 and at most 1.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, pattern = r"^(Kelly|kelly|KELLY|0?\.[0-9]*[1-9][0-9]*|1(\.0+)?)$", example = "Kelly"))]
    pub capital_allocate: Option<Value>,
    /// New trades a session at most, 1-100 (default 3).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 1, maximum = 100, example = 3))]
    pub daily_limit: Option<Value>,
    /// The daily ranking: `StdDev` (default, lowest first), `WinRate`,
    /// `Z_Score`, `Expected Return`, `SharpeRatio` (highest first).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, pattern = "^(WinRate|Z_Score|StdDev|Expected Return|SharpeRatio)$", example = "StdDev"))]
    pub rank_condition: Option<Value>,
}

/// What the items are ranked by each session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    WinRate,
    ZScore,
    StdDev,
    ExpectedReturn,
    SharpeRatio,
}

impl Rank {
    /// Lower is better only for the standard deviation (a steadier history).
    pub fn lower_is_better(self) -> bool {
        self == Rank::StdDev
    }
}

/// An inclusive filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub min: f64,
    pub max: f64,
}

impl Span {
    pub fn holds(&self, x: Option<f64>) -> bool {
        x.is_some_and(|x| self.min <= x && x <= self.max)
    }
}

/// The checked request.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannerBacktest {
    pub start: NaiveDate,
    pub end: NaiveDate,
    pub stocks: bool,
    pub etfs: bool,
    /// Indices into the signal registry, in its order.
    pub signals: Vec<usize>,
    pub capital: f64,
    pub long_share: f64,
    pub short_share: f64,
    pub commission: f64,
    pub name: Option<String>,
    pub profit_target: Option<Span>,
    pub stop_loss: Option<Span>,
    pub time_in_market: Option<Span>,
    pub trend: Option<Span>,
    pub reltrend: Option<Span>,
    pub optix: Option<Span>,
    pub allocation: Allocation,
    pub daily_limit: usize,
    pub rank: Rank,
}

fn required<'a>(field: &str, v: &'a Option<Value>) -> Result<&'a Value> {
    match v {
        None | Some(Value::Null) => Err(Error::invalid(field, "is required")),
        Some(v) => Ok(v),
    }
}

/// A value as text (numbers keep their JSON spelling); blank is absent.
fn text(field: &str, v: &Option<Value>) -> Result<Option<String>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(_) => Err(Error::invalid(field, "must be text or a number")),
    }
}

fn number(field: &str, v: &Option<Value>) -> Result<Option<f64>> {
    text(field, v)?
        .map(|s| {
            s.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| Error::invalid(field, format!("must be a number, got '{s}'")))
        })
        .transpose()
}

fn date(field: &str, v: &Option<Value>) -> Result<NaiveDate> {
    let s = text(field, v)?.ok_or_else(|| Error::invalid(field, "is required"))?;
    crate::dates::field(field, &s)
}

fn span(field: &str, v: &Option<Value>) -> Result<Option<Span>> {
    let Some(s) = text(field, v)? else {
        return Ok(None);
    };
    let bad = || {
        Error::invalid(
            field,
            format!("must be 'min-max' with 0 <= min <= max, got '{s}'"),
        )
    };
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    let (min, max) = (
        a.trim().parse::<f64>().map_err(|_| bad())?,
        b.trim().parse::<f64>().map_err(|_| bad())?,
    );
    if !(min.is_finite() && max.is_finite() && 0.0 <= min && min <= max) {
        return Err(bad());
    }
    Ok(Some(Span { min, max }))
}

impl ScannerBacktestParams {
    pub fn validate(&self) -> Result<ScannerBacktest> {
        let start = date("start_date", &self.start_date)?;
        let end = date("end_date", &self.end_date)?;
        if start > end {
            return Err(Error::invalid(
                "start_date",
                format!("must not be after end_date ({start} > {end})"),
            ));
        }
        let (stocks, etfs) = self.find_type()?;
        let signals = self.signals()?;
        let capital = number("total_capital", &self.total_capital)?
            .ok_or_else(|| Error::invalid("total_capital", "is required"))?;
        if !(capital > 0.0 && capital <= 1e12) {
            return Err(Error::invalid(
                "total_capital",
                format!("must be above 0 and at most 1e12, got {capital}"),
            ));
        }
        let (long_share, short_share) = self.long_short()?;
        let commission = number("commission", &self.commission)?.unwrap_or(0.0);
        if !(0.0..=10.0).contains(&commission) {
            return Err(Error::invalid(
                "commission",
                format!("must be a percent from 0 to 10, got {commission}"),
            ));
        }
        let name = text("name", &self.name)?;
        if name.as_ref().is_some_and(|n| n.chars().count() > 200) {
            return Err(Error::invalid("name", "must be at most 200 characters"));
        }
        let allocation = self.allocation()?;
        let daily_limit = match number("daily_limit", &self.daily_limit)? {
            None => 3,
            Some(x) if x.fract() == 0.0 && (1.0..=100.0).contains(&x) => x as usize,
            Some(x) => {
                return Err(Error::invalid(
                    "daily_limit",
                    format!("must be an integer from 1 to 100, got {x}"),
                ));
            }
        };
        let rank = self.rank()?;
        Ok(ScannerBacktest {
            start,
            end,
            stocks,
            etfs,
            signals,
            capital,
            long_share,
            short_share,
            commission,
            name,
            profit_target: span("profit_target_range", &self.profit_target_range)?,
            stop_loss: span("stop_loss_range", &self.stop_loss_range)?,
            time_in_market: span("time_in_market_range", &self.time_in_market_range)?,
            trend: span("trend_range", &self.trend_range)?,
            reltrend: span("reltrend_range", &self.reltrend_range)?,
            optix: span("optix_range", &self.optix_range)?,
            allocation,
            daily_limit,
            rank,
        })
    }

    /// (stocks, ETFs) from `stock`, `etf` or `stock/etf`.
    fn find_type(&self) -> Result<(bool, bool)> {
        let find = text("find_type", &self.find_type)?
            .ok_or_else(|| Error::invalid("find_type", "is required"))?
            .to_ascii_lowercase();
        let kinds: Vec<&str> = find.split('/').map(str::trim).collect();
        if kinds.is_empty()
            || kinds.len() > 2
            || kinds.iter().any(|k| !["stock", "etf"].contains(k))
        {
            return Err(Error::invalid(
                "find_type",
                format!("must be stock, etf or stock/etf, got '{find}'"),
            ));
        }
        Ok((kinds.contains(&"stock"), kinds.contains(&"etf")))
    }

    /// The signals' indexes in `SIGNALS`, sorted and without repeats.
    fn signals(&self) -> Result<Vec<usize>> {
        let Value::Array(names) = required("signals", &self.signals)? else {
            return Err(none_named());
        };
        if names.is_empty() {
            return Err(none_named());
        }
        let mut picked = Vec::new();
        for n in names {
            let Some(name) = n.as_str().map(str::trim) else {
                return Err(Error::invalid(
                    "signals",
                    "must be an array of signal names",
                ));
            };
            if name.eq_ignore_ascii_case("all") {
                picked.extend(0..SIGNALS.len());
                continue;
            }
            let k = signal(name)
                .and_then(|s| SIGNALS.iter().position(|x| x.name == s.name))
                .ok_or_else(|| {
                    Error::invalid(
                        "signals",
                        format!("unknown signal '{name}' (see GET /smart-stock-scanner/get-predefined-signals)"),
                    )
                })?;
            picked.push(k);
        }
        picked.sort_unstable();
        picked.dedup();
        Ok(picked)
    }

    /// The long and short shares of the capital.
    fn long_short(&self) -> Result<(f64, f64)> {
        let ratio = text("long_short_ratio", &self.long_short_ratio)?
            .ok_or_else(|| Error::invalid("long_short_ratio", "is required"))?;
        let bad_ratio = || {
            Error::invalid(
                "long_short_ratio",
                format!(
                    "must be 'long/short' fractions 0-1 summing to more than 0 and at most 1, got '{ratio}'"
                ),
            )
        };
        let (l, s) = ratio.split_once('/').ok_or_else(bad_ratio)?;
        let (long_share, short_share) = (
            l.trim().parse::<f64>().map_err(|_| bad_ratio())?,
            s.trim().parse::<f64>().map_err(|_| bad_ratio())?,
        );
        let ok = |x: f64| (0.0..=1.0).contains(&x);
        if !(ok(long_share)
            && ok(short_share)
            && long_share + short_share > 0.0
            && long_share + short_share <= 1.0 + 1e-9)
        {
            return Err(bad_ratio());
        }
        Ok((long_share, short_share))
    }

    fn allocation(&self) -> Result<Allocation> {
        match text("capital_allocate", &self.capital_allocate)? {
            None => Ok(Allocation::Kelly),
            Some(k) if k.eq_ignore_ascii_case("kelly") => Ok(Allocation::Kelly),
            Some(f) => match f.parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 1.0 => Ok(Allocation::Fixed(x)),
                _ => Err(Error::invalid(
                    "capital_allocate",
                    format!("must be Kelly or a fraction above 0 and at most 1, got '{f}'"),
                )),
            },
        }
    }

    fn rank(&self) -> Result<Rank> {
        let Some(r) = text("rank_condition", &self.rank_condition)? else {
            return Ok(Rank::StdDev);
        };
        match r.to_ascii_lowercase().replace([' ', '_'], "").as_str() {
            "winrate" => Ok(Rank::WinRate),
            "zscore" => Ok(Rank::ZScore),
            "stddev" => Ok(Rank::StdDev),
            "expectedreturn" => Ok(Rank::ExpectedReturn),
            "sharperatio" => Ok(Rank::SharpeRatio),
            _ => Err(Error::invalid(
                "rank_condition",
                format!(
                    "must be WinRate, Z_Score, StdDev, Expected Return or SharpeRatio, got '{r}'"
                ),
            )),
        }
    }
}

fn none_named() -> Error {
    Error::invalid(
        "signals",
        "must be a non-empty array of signal names, or [\"All\"]",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<ScannerBacktest> {
        serde_json::from_value::<ScannerBacktestParams>(v)
            .unwrap()
            .validate()
    }

    fn base() -> Value {
        json!({"start_date": "2025-01-02", "end_date": "2025-12-31", "find_type": "stock",
            "signals": ["All"], "total_capital": 100000, "long_short_ratio": "1.0/0.0"})
    }

    fn field_of(v: Value) -> String {
        match parse(v).unwrap_err() {
            Error::Invalid(e) => e.field,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_and_spellings() {
        let q = parse(base()).unwrap();
        assert_eq!(q.signals.len(), 37);
        assert_eq!(
            (q.daily_limit, q.rank, q.commission),
            (3, Rank::StdDev, 0.0)
        );
        assert_eq!(q.allocation, Allocation::Kelly);
        assert!(q.stocks && !q.etfs);
        let mut v = base();
        v["find_type"] = json!("ETF/Stock");
        v["signals"] = json!(["MA", "Hammer", "MA"]);
        v["total_capital"] = json!("50000");
        v["long_short_ratio"] = json!("0.6/0.4");
        v["capital_allocate"] = json!("0.6");
        v["daily_limit"] = json!("5");
        v["rank_condition"] = json!("Expected Return");
        v["optix_range"] = json!("10-40");
        v["commission"] = json!(0.1);
        let q = parse(v).unwrap();
        assert!(q.stocks && q.etfs);
        assert_eq!(q.signals, vec![0, 8]);
        assert_eq!(
            (q.capital, q.long_share, q.short_share),
            (50000.0, 0.6, 0.4)
        );
        assert_eq!(q.allocation, Allocation::Fixed(0.6));
        assert_eq!((q.daily_limit, q.rank), (5, Rank::ExpectedReturn));
        assert_eq!(
            q.optix,
            Some(Span {
                min: 10.0,
                max: 40.0
            })
        );
        assert!(Rank::StdDev.lower_is_better() && !Rank::WinRate.lower_is_better());
    }

    #[test]
    fn each_bad_value_names_its_field() {
        for (field, value) in [
            ("start_date", json!("2025-13-01")),
            ("end_date", json!("2024-01-01")),
            ("find_type", json!("bond")),
            ("signals", json!([])),
            ("signals", json!(["Nope"])),
            ("signals", json!("MA")),
            ("total_capital", json!(0)),
            ("total_capital", json!("lots")),
            ("long_short_ratio", json!("0.8/0.5")),
            ("long_short_ratio", json!("0/0")),
            ("long_short_ratio", json!("all long")),
            ("commission", json!(-1)),
            ("profit_target_range", json!("5-2")),
            ("stop_loss_range", json!("x-2")),
            ("capital_allocate", json!("1.5")),
            ("daily_limit", json!(0)),
            ("daily_limit", json!(2.5)),
            ("rank_condition", json!("Luck")),
        ] {
            let mut v = base();
            v[field] = value;
            let named = if field == "end_date" {
                "start_date"
            } else {
                field
            };
            assert_eq!(field_of(v), named, "{field}");
        }
        let mut v = base();
        v.as_object_mut().unwrap().remove("total_capital");
        assert_eq!(field_of(v), "total_capital");
        assert!(serde_json::from_value::<ScannerBacktestParams>(json!({"nope": 1})).is_err());
    }
}
