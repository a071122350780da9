//! The pattern-match request (analytics 4.3): the parameters as sent (JSON
//! numbers or text, so the same type reads a JSON body and a query string),
//! and their validation into a [`CpmQuery`] whose errors name the field.

use crate::analytics::ticker;
use crate::error::{Error, Result};
use chrono::NaiveDate;
use engine::Frequency;
use engine::cpm::{SHAPES, Shape, shape};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Declares a request type with the common parameters of 4.3 and the
/// given extra fields, so the two request types cannot drift apart.
macro_rules! pattern_params {
    ($(#[$outer:meta])* $name:ident { $($extra:tt)* }) => {
        $(#[$outer])*
        #[derive(Debug, Clone, Default, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// The ticker whose closes are searched (and, in Customize mode, hold the template).
            #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^[A-Za-z0-9._^-]{1,32}$", example = "SPX"))]
            pub symbol: String,
            /// Minimum `Corr`, 0-100; below 75 runs with a warning.
            #[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 0, maximum = 100, example = 85))]
            pub corr_per: Int,
            /// Bars held after each match, 3-252.
            #[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 3, maximum = 252, example = 21))]
            pub time_in_market: Int,
            /// Template start (Customize mode: required). Ignored with `system_pattern`.
            #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date, example = "2026-06-01"))]
            pub start_date: Option<String>,
            /// Template end, on or after `start_date` (Customize mode: required).
            #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date, example = "2026-08-31"))]
            pub end_date: Option<String>,
            /// `Daily` (default), `Weekly` or `Monthly`.
            #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, pattern = "^(Daily|Weekly|Monthly|daily|weekly|monthly|DAILY|WEEKLY|MONTHLY)$", example = "Daily"))]
            pub timeframe: Option<String>,
            /// Years searched back from the latest date: `20` (default), `10` or `All`.
            #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, pattern = "^(20|10|All|all|ALL)$", example = "20"))]
            pub lookback_period: Option<Text>,
            /// Moving-average period, 1-252; required when `ma_condition` is 1 or 2.
            #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 1, maximum = 252, example = 50))]
            pub ma: Option<Int>,
            /// 0 no filter (default); 1 the match's last close above the average; 2 below.
            #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 0, maximum = 2, example = 0))]
            pub ma_condition: Option<Int>,
            /// `Long` (default) or `Short`.
            #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, pattern = "^(Long|Short|long|short|LONG|SHORT)$", example = "Long"))]
            pub direction: Option<String>,
            /// A predefined pattern (`/cpm/get-predefined-patterns`): Common Pattern mode.
            #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, pattern = "^(head_and_shoulder_top|head_and_shoulder_bottom|double_top|double_bottom|triple_tap|rounding_bottom|ascending_channel|descending_channel)$", example = "double_bottom"))]
            pub system_pattern: Option<String>,
            /// 1 (default): best matches first, none sharing a bar with a better one; 0: every window at or above `corr_per`.
            #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 0, maximum = 1, example = 1))]
            pub exclude_overlap: Option<Int>,
            /// A name for the backtest (at most 200 characters).
            #[cfg_attr(
                feature = "openapi",
                schema(max_length = 200, example = "summer template")
            )]
            pub name: Option<String>,
            $($extra)*
        }
    };
}

pattern_params! {
    /// The common parameters: the synchronous forms and backtest tasks.
    #[cfg_attr(feature = "openapi", derive(ToSchema))]
    #[cfg_attr(feature = "openapi", schema(example = json!({"symbol": "SPX", "corr_per": 85, "time_in_market": 21, "start_date": "2024-03-01", "end_date": "2024-05-31"})))]
    PatternParams {}
}

pattern_params! {
    /// A scan task's parameters: the common ones, and a universe to search.
    #[cfg_attr(feature = "openapi", derive(ToSchema))]
    #[cfg_attr(feature = "openapi", schema(example = json!({"symbol": "SPX", "corr_per": 85, "time_in_market": 21, "start_date": "2024-03-01", "end_date": "2024-05-31", "universe": "sp500"})))]
    CpmParams {
    /// Scan tasks only: search every stock of a universe (`sp500`, `sp400`,
    /// `sp600`, `sp1500`, `nasdaq100`, `russell3000`, `etf`, `commodity`) or
    /// of a comma-separated list of tickers (a JSON array too).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, pattern = "^[A-Za-z0-9._^=, -]{1,20000}$", example = "sp500"))]
    pub universe: Option<Universe>,
    /// Universe searches: the best matches kept across symbols, 1-1000 (default 100).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 1, maximum = 1000, example = 100))]
    pub max_matches: Option<Int>,
    }
}

#[cfg(feature = "openapi")]
crate::query_params::query_params_from_schema!(PatternParams, CpmParams);

impl From<PatternParams> for CpmParams {
    fn from(p: PatternParams) -> CpmParams {
        CpmParams {
            symbol: p.symbol,
            corr_per: p.corr_per,
            time_in_market: p.time_in_market,
            start_date: p.start_date,
            end_date: p.end_date,
            timeframe: p.timeframe,
            lookback_period: p.lookback_period,
            ma: p.ma,
            ma_condition: p.ma_condition,
            direction: p.direction,
            system_pattern: p.system_pattern,
            exclude_overlap: p.exclude_overlap,
            name: p.name,
            universe: None,
            max_matches: None,
        }
    }
}

/// An integer sent as a JSON number (`85`, `85.0`) or as text (`"85"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Int(pub i64);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Int, E> {
                Ok(Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Int, E> {
                i64::try_from(v)
                    .map(Int)
                    .map_err(|_| E::custom(format!("{v} is out of range")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Int, E> {
                if v.fract() == 0.0 && v.abs() < 1e15 {
                    Ok(Int(v as i64))
                } else {
                    Err(E::custom(format!("expected an integer, got {v}")))
                }
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Int, E> {
                Ok(Int(v as i64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Int, E> {
                let t = v.trim();
                match t.to_ascii_lowercase().as_str() {
                    "true" => return Ok(Int(1)),
                    "false" => return Ok(Int(0)),
                    _ => {}
                }
                if let Ok(i) = t.parse::<i64>() {
                    return Ok(Int(i));
                }
                match t.parse::<f64>() {
                    Ok(f) => self.visit_f64(f),
                    Err(_) => Err(E::custom(format!("expected an integer, got '{v}'"))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Text sent as a JSON string or number (`"20"` or `20`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => Ok(Text(s)),
            serde_json::Value::Number(n) => Ok(Text(n.to_string())),
            other => Err(de::Error::custom(format!(
                "expected text or a number, got {other}"
            ))),
        }
    }
}

/// A universe name or tickers: text (comma-separated) or a JSON array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Universe(pub Vec<String>);

impl<'de> Deserialize<'de> for Universe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let items = match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => s.split(',').map(str::to_string).collect(),
            serde_json::Value::Array(a) => a
                .into_iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => Ok(s),
                    other => Err(de::Error::custom(format!(
                        "expected ticker text, got {other}"
                    ))),
                })
                .collect::<std::result::Result<Vec<_>, _>>()?,
            other => Err(de::Error::custom(format!(
                "expected a universe name or tickers, got {other}"
            )))?,
        };
        Ok(Universe(
            items
                .into_iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        ))
    }
}

/// Scan or backtest: what a request answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Scan,
    Backtest,
}

/// Where the template comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum TemplateSpec {
    /// Customize: the symbol's own closes between these dates.
    Range { start: NaiveDate, end: NaiveDate },
    /// Common Pattern: a predefined shape.
    Pattern(&'static Shape),
}

/// What a universe search covers, before the catalog resolves it.
#[derive(Debug, Clone, PartialEq)]
pub enum UniverseSpec {
    /// A universe of the symbol catalog (lower case).
    Named(String),
    /// Tickers as the store keys them.
    Tickers(Vec<String>),
}

/// Universe names the symbol catalog uses.
pub const UNIVERSES: [&str; 8] = [
    "sp500",
    "sp400",
    "sp600",
    "sp1500",
    "nasdaq100",
    "russell3000",
    "etf",
    "commodity",
];

/// The most tickers a listed universe may name.
pub const MAX_TICKERS: usize = 2000;
/// Template lengths allowed, in bars of the timeframe.
pub const MIN_TEMPLATE_BARS: usize = 5;
pub const MAX_TEMPLATE_BARS: usize = 1260;
/// Below this `corr_per` a request runs with a warning.
pub const EFFECTIVE_CORR: i64 = 75;

/// A validated request.
#[derive(Debug, Clone, PartialEq)]
pub struct CpmQuery {
    pub mode: Mode,
    pub symbol: String,
    /// Percent.
    pub min_corr: f64,
    pub hold: usize,
    pub template: TemplateSpec,
    pub freq: Frequency,
    /// Years searched; `None` is all.
    pub lookback_years: Option<u32>,
    /// (period, condition 1 above or 2 below).
    pub ma: Option<(usize, u8)>,
    pub short: bool,
    pub exclude_overlap: bool,
    pub name: Option<String>,
    pub universe: Option<UniverseSpec>,
    pub max_matches: usize,
    pub warnings: Vec<String>,
}

fn range(field: &str, v: Int, min: i64, max: i64) -> Result<i64> {
    Error::check_range(field, v.0, min, max)
}

fn date(field: &str, v: &str) -> Result<NaiveDate> {
    crate::dates::field(field, v)
}

/// A Customize-mode template date: required there.
fn template_date(field: &str, v: &Option<String>) -> Result<NaiveDate> {
    present(v)
        .ok_or_else(|| Error::invalid(field, "is required without system_pattern (Customize mode)"))
        .and_then(|v| date(field, v))
}

fn present(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

impl CpmParams {
    /// Checks every field; dates, symbols and universes are checked against
    /// the market data later, by the use case.
    pub fn validate(&self, mode: Mode) -> Result<CpmQuery> {
        let symbol = self.ticker()?;
        let corr = range("corr_per", self.corr_per, 0, 100)?;
        let hold = range("time_in_market", self.time_in_market, 3, 252)? as usize;
        let mut warnings = Vec::new();
        if corr < EFFECTIVE_CORR {
            warnings.push(format!(
                "corr_per {corr} is below {EFFECTIVE_CORR}: such weak correlations match shapes that look little alike"
            ));
        }
        let freq = self.frequency()?;
        let lookback_years = self.lookback_years()?;
        let ma = self.moving_average()?;
        let short = self.short()?;
        let exclude_overlap = self
            .exclude_overlap
            .map(|v| range("exclude_overlap", v, 0, 1))
            .transpose()?
            .unwrap_or(1)
            == 1;
        let template = self.template()?;
        let name = present(&self.name).map(str::to_string);
        if name.as_ref().is_some_and(|n| n.chars().count() > 200) {
            return Err(Error::invalid("name", "must be at most 200 characters"));
        }
        let universe = self.universe_for(mode)?;
        let max_matches = self
            .max_matches
            .map(|v| range("max_matches", v, 1, 1000))
            .transpose()?
            .unwrap_or(100) as usize;
        Ok(CpmQuery {
            mode,
            symbol,
            min_corr: corr as f64,
            hold,
            template,
            freq,
            lookback_years,
            ma,
            short,
            exclude_overlap,
            name,
            universe,
            max_matches,
            warnings,
        })
    }

    fn ticker(&self) -> Result<String> {
        let symbol = ticker(&self.symbol);
        if symbol.is_empty() {
            return Err(Error::invalid("symbol", "is required"));
        }
        if !symbol
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._^-=".contains(c))
            || symbol.len() > 32
        {
            return Err(Error::invalid(
                "symbol",
                format!("'{}' is not a ticker", self.symbol.trim()),
            ));
        }
        Ok(symbol)
    }

    fn frequency(&self) -> Result<Frequency> {
        match present(&self.timeframe)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("daily") => Ok(Frequency::Daily),
            Some("weekly") => Ok(Frequency::Weekly),
            Some("monthly") => Ok(Frequency::Monthly),
            Some(_) => Err(Error::invalid(
                "timeframe",
                format!(
                    "must be Daily, Weekly or Monthly, got '{}'",
                    self.timeframe.as_deref().unwrap_or("").trim()
                ),
            )),
        }
    }

    /// Years searched; `None` is all.
    fn lookback_years(&self) -> Result<Option<u32>> {
        match self
            .lookback_period
            .as_ref()
            .map(|t| t.0.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("") | Some("20") => Ok(Some(20)),
            Some("10") => Ok(Some(10)),
            Some("all") => Ok(None),
            Some(other) => Err(Error::invalid(
                "lookback_period",
                format!("must be 20, 10 or All, got '{other}'"),
            )),
        }
    }

    /// (period, condition 1 above or 2 below), when a condition is set.
    fn moving_average(&self) -> Result<Option<(usize, u8)>> {
        let condition = self
            .ma_condition
            .map(|v| range("ma_condition", v, 0, 2))
            .transpose()?
            .unwrap_or(0) as u8;
        let period = self.ma.map(|v| range("ma", v, 1, 252)).transpose()?;
        match (condition, period) {
            (0, _) => Ok(None),
            (c, Some(p)) => Ok(Some((p as usize, c))),
            (c, None) => Err(Error::invalid(
                "ma",
                format!("is required when ma_condition is {c}"),
            )),
        }
    }

    fn short(&self) -> Result<bool> {
        match present(&self.direction)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("long") => Ok(false),
            Some("short") => Ok(true),
            Some(_) => Err(Error::invalid(
                "direction",
                format!(
                    "must be Long or Short, got '{}'",
                    self.direction.as_deref().unwrap_or("").trim()
                ),
            )),
        }
    }

    /// A predefined pattern, or the symbol's own dates (Customize mode).
    fn template(&self) -> Result<TemplateSpec> {
        let Some(p) = present(&self.system_pattern) else {
            let start = template_date("start_date", &self.start_date)?;
            let end = template_date("end_date", &self.end_date)?;
            if start > end {
                return Err(Error::invalid(
                    "start_date",
                    format!("({start}) is after 'end_date' ({end})"),
                ));
            }
            return Ok(TemplateSpec::Range { start, end });
        };
        let pattern = shape(&p.to_ascii_lowercase()).ok_or_else(|| {
            Error::invalid(
                "system_pattern",
                format!(
                    "'{p}' is not a predefined pattern ({})",
                    SHAPES.map(|s| s.name).join(", ")
                ),
            )
        })?;
        // Common Pattern mode ignores the dates, but a malformed one is still a mistake.
        for (field, v) in [
            ("start_date", &self.start_date),
            ("end_date", &self.end_date),
        ] {
            if let Some(v) = present(v) {
                date(field, v)?;
            }
        }
        Ok(TemplateSpec::Pattern(pattern))
    }

    fn universe_for(&self, mode: Mode) -> Result<Option<UniverseSpec>> {
        match &self.universe {
            None => Ok(None),
            Some(u) if u.0.is_empty() => Ok(None),
            Some(_) if mode == Mode::Backtest => Err(Error::invalid(
                "universe",
                "is for scans only: a backtest trades the symbol's own matches",
            )),
            Some(u) => Ok(Some(universe(u)?)),
        }
    }
}

fn universe(u: &Universe) -> Result<UniverseSpec> {
    if let [one] = u.0.as_slice()
        && let Some(name) = UNIVERSES.iter().find(|n| n.eq_ignore_ascii_case(one))
    {
        return Ok(UniverseSpec::Named(name.to_string()));
    }
    if u.0.len() > MAX_TICKERS {
        return Err(Error::invalid(
            "universe",
            format!("names {} tickers; at most {MAX_TICKERS}", u.0.len()),
        ));
    }
    let mut tickers: Vec<String> = Vec::with_capacity(u.0.len());
    for raw in &u.0 {
        let t = ticker(raw);
        if t.len() > 32
            || !t
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._^-=".contains(c))
        {
            return Err(Error::invalid(
                "universe",
                format!(
                    "'{raw}' is neither a universe ({}) nor a ticker",
                    UNIVERSES.join(", ")
                ),
            ));
        }
        if !tickers.contains(&t) {
            tickers.push(t);
        }
    }
    Ok(UniverseSpec::Tickers(tickers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> std::result::Result<CpmParams, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    fn base() -> serde_json::Value {
        json!({"symbol": "spx", "corr_per": 80, "time_in_market": 10,
               "start_date": "2024-01-02", "end_date": "2024-03-28"})
    }

    fn field_of(e: Error) -> String {
        match e {
            Error::Invalid(e) => e.field,
            other => panic!("not a field error: {other}"),
        }
    }

    #[test]
    fn defaults_and_spellings() {
        let q = parse(base()).unwrap().validate(Mode::Scan).unwrap();
        assert_eq!(q.symbol, "SPX");
        assert_eq!(q.min_corr, 80.0);
        assert_eq!(q.hold, 10);
        assert_eq!(q.freq, Frequency::Daily);
        assert_eq!(q.lookback_years, Some(20));
        assert_eq!((q.ma, q.short, q.exclude_overlap), (None, false, true));
        assert!(q.warnings.is_empty() && q.universe.is_none());
        // Text numbers, as a query string sends them, and other spellings.
        let q = parse(
            json!({"symbol": "SPX", "corr_per": "70", "time_in_market": "5.0",
            "system_pattern": "Double_Top", "timeframe": "weekly", "lookback_period": "all",
            "ma": "20", "ma_condition": 2, "direction": "SHORT", "exclude_overlap": false,
            "universe": "SP500"}),
        )
        .unwrap()
        .validate(Mode::Scan)
        .unwrap();
        assert_eq!(
            q.template,
            TemplateSpec::Pattern(shape("double_top").unwrap())
        );
        assert_eq!((q.freq, q.lookback_years), (Frequency::Weekly, None));
        assert_eq!(
            (q.ma, q.short, q.exclude_overlap),
            (Some((20, 2)), true, false)
        );
        assert_eq!(q.universe, Some(UniverseSpec::Named("sp500".into())));
        assert_eq!(q.warnings.len(), 1, "corr_per below 75 warns");
        let mut v = base();
        v["lookback_period"] = json!(10);
        v["universe"] = json!(["aapl", "MSFT", "aapl"]);
        let q = parse(v).unwrap().validate(Mode::Scan).unwrap();
        assert_eq!(q.lookback_years, Some(10));
        assert_eq!(
            q.universe,
            Some(UniverseSpec::Tickers(vec!["AAPL".into(), "MSFT".into()]))
        );
    }

    #[test]
    fn each_bad_value_names_its_field() {
        let cases = [
            ("corr_per", json!(101)),
            ("corr_per", json!(-1)),
            ("time_in_market", json!(2)),
            ("time_in_market", json!(253)),
            ("timeframe", json!("Hourly")),
            ("lookback_period", json!("5")),
            ("ma", json!(0)),
            ("ma", json!(253)),
            ("ma_condition", json!(3)),
            ("direction", json!("Sideways")),
            ("system_pattern", json!("wedge")),
            ("exclude_overlap", json!(2)),
            ("start_date", json!("2024-13-01")),
            ("end_date", json!("yesterday")),
            ("symbol", json!("S P X")),
            ("name", json!("n".repeat(201))),
            ("universe", json!("not a ticker!")),
            ("max_matches", json!(0)),
        ];
        for (field, value) in cases {
            let mut v = base();
            v[field] = value.clone();
            let e = parse(v).unwrap().validate(Mode::Scan).unwrap_err();
            assert_eq!(field_of(e), field, "{field} = {value}");
        }
        // Missing or inverted template dates; ma without a period; a
        // backtest over a universe.
        let mut v = base();
        v.as_object_mut().unwrap().remove("end_date");
        assert_eq!(
            field_of(parse(v).unwrap().validate(Mode::Scan).unwrap_err()),
            "end_date"
        );
        let mut v = base();
        v["start_date"] = json!("2024-04-01");
        assert_eq!(
            field_of(parse(v).unwrap().validate(Mode::Scan).unwrap_err()),
            "start_date"
        );
        let mut v = base();
        v["ma_condition"] = json!(1);
        assert_eq!(
            field_of(parse(v).unwrap().validate(Mode::Scan).unwrap_err()),
            "ma"
        );
        let mut v = base();
        v["universe"] = json!("sp500");
        assert_eq!(
            field_of(parse(v).unwrap().validate(Mode::Backtest).unwrap_err()),
            "universe"
        );
        // Type errors come from deserialization and name the field there.
        let mut v = base();
        v["corr_per"] = json!("high");
        assert!(parse(v).unwrap_err().contains("integer"));
        let mut v = base();
        v["corr_percent"] = json!(80);
        assert!(parse(v).unwrap_err().contains("corr_percent"));
    }
}
