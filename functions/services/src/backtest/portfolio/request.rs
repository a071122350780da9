//! `POST /backtest/portfolio`'s body: one typed value is the parser and,
//! through `ToSchema`, the OpenAPI schema. [`PortfolioParams::check`] adds
//! what a type cannot say (ranges, sums, one mode of two), each error
//! naming its field; what needs the data (symbols, the schedule firing)
//! is checked where the data are read.

use crate::backtest::request::{EntryBlock, ExitBlock};
use crate::error::FieldError;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Symbols a portfolio may hold at most.
pub const MAX_UNIVERSE: usize = 500;
/// Bars a lookback may span at most (about 20 years of sessions).
pub const MAX_LOOKBACK: usize = 5_000;

/// A portfolio backtest: a universe traded from one pool of cash, either by
/// entry and exit rules per symbol (`signals`) or by target weights on a
/// schedule (`weights`); exactly one of the two.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({
    "universe": ["AAPL", "MSFT", "XOM", "JPM"], "benchmark": "SPX", "start_date": "2015-01-02",
    "weights": {"schedule": {"every": "month"}, "select": {"method": "top", "k": 2, "by": {"momentum": 63}}}
})))]
#[serde(deny_unknown_fields)]
pub struct PortfolioParams {
    /// The task's name in lists.
    #[cfg_attr(feature = "openapi", schema(max_length = 200))]
    pub name: Option<String>,
    /// Stored symbols, 1-500, each once.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::analytics::TickerText>, min_items = 1, max_items = 500))]
    pub universe: Vec<String>,
    /// Default SPX.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::analytics::TickerText>))]
    pub benchmark: Option<String>,
    /// First session traded; earlier bars feed signals and lookbacks. Default: the universe's first date.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub start_date: Option<NaiveDate>,
    /// Not before start_date; default the latest date in the data.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub end_date: Option<NaiveDate>,
    /// Starting cash, default 100000.
    #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 1e12))]
    pub capital: Option<f64>,
    /// Fraction of the traded value per side, default 0.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, exclusive_maximum = 0.5))]
    pub commission: Option<f64>,
    /// Fraction of the price per side, always against the trader; default 0.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, exclusive_maximum = 0.5))]
    pub slippage: Option<f64>,
    /// Where a decision on a bar's close fills; default `current_close`.
    pub trade_price: Option<Fill>,
    /// Fractional units (default true); false buys whole units, rounded down.
    pub fractional: Option<bool>,
    /// Gross exposure allowed over the account's value, 1-10; default 1
    /// (cash never negative).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10))]
    pub max_leverage: Option<f64>,
    /// Trade split-adjusted prices (true, the default) or prices as traded.
    pub adjusted: Option<bool>,
    pub signals: Option<SignalMode>,
    pub weights: Option<WeightMode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Fill {
    CurrentClose,
    NextOpen,
    NextClose,
}

/// Each symbol's entry and exit rules (the strategy language of
/// `start_backtest`), in at most `max_positions` slots.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SignalMode {
    pub entry: EntryBlock,
    pub exit: ExitBlock,
    /// stop-loss %/take-profit %/max holding bars as in `start_backtest`;
    /// default `//` (none).
    #[cfg_attr(
        feature = "openapi",
        schema(
            pattern = r"^(-?([1-9][0-9]{0,2}(\.[0-9]{1,2})?|0\.[0-9]?[1-9]))?/([0-9]{1,3}(\.[0-9]{1,2})?)?/([1-9][0-9]{0,3})?$"
        )
    )]
    pub risk_control: Option<String>,
    /// Positions held at once, 1-500.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 500))]
    #[serde(deserialize_with = "crate::error::whole_number")]
    pub max_positions: usize,
    /// Which entries of one bar go first when they outnumber the free slots;
    /// default the universe's order.
    pub rank_by: Option<RankBy>,
    /// Default `{"method": "equal"}`.
    pub sizing: Option<SizingParams>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RankBy {
    pub by: ScoreParams,
    /// Default `descending` (highest first).
    pub order: Option<Order>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Order {
    Descending,
    Ascending,
}

/// A figure per symbol and bar: `{"momentum": n}` (close over the close n
/// bars before, less 1), `{"volatility": n}` (sample deviation of the last
/// n returns) or `{"technical": {"name": ..., "period": ...}}` (a technical
/// signal of `start_backtest`, such as RSI).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ScoreParams {
    /// Bars, 1-5000.
    Momentum(#[serde(deserialize_with = "crate::error::whole_number")] usize),
    /// Bars, 2-5000.
    Volatility(#[serde(deserialize_with = "crate::error::whole_number")] usize),
    Technical(TechnicalScore),
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TechnicalScore {
    /// A technical signal's name or short name (`Relative Strength Index`, `RSI`).
    pub name: String,
    /// Its period where it has one; default its usual one.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 5000))]
    #[serde(default, deserialize_with = "crate::error::whole_number_or_null")]
    pub period: Option<usize>,
}

/// How a new position is sized.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizingParams {
    /// One slot: the account's value over max_positions (no other key
    /// beside `method`).
    // A struct variant, not a unit one: serde's internally tagged unit
    // variants ignore the other keys, where a key beside `method` must be
    // refused (so in every parameterless rule below).
    Equal {},
    /// This fraction of the cash free at the entry, (0, 1].
    FixedFraction {
        #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 1))]
        fraction: f64,
    },
    /// A slot scaled by the universe's median volatility over the symbol's
    /// (both over `bars` returns).
    InverseVolatility {
        #[cfg_attr(feature = "openapi", schema(minimum = 2, maximum = 5000))]
        #[serde(deserialize_with = "crate::error::whole_number")]
        bars: usize,
    },
    /// A slot's share of an annual volatility target: (annual_volatility /
    /// max_positions) / the symbol's annualised volatility over `bars`.
    VolatilityTarget {
        #[cfg_attr(feature = "openapi", schema(minimum = 2, maximum = 5000))]
        #[serde(deserialize_with = "crate::error::whole_number")]
        bars: usize,
        #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 5))]
        annual_volatility: f64,
    },
    /// The Kelly fraction of the symbol's closed trades in this run, at
    /// most `cap` (default 0.25); a slot until it has `min_trades` (default 10).
    Kelly {
        #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 1))]
        cap: Option<f64>,
        #[cfg_attr(feature = "openapi", schema(maximum = 1000))]
        #[serde(default, deserialize_with = "crate::error::whole_number_or_null")]
        min_trades: Option<usize>,
    },
}

/// Rebalancing to target weights on a schedule.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct WeightMode {
    pub schedule: ScheduleParams,
    /// Default `{"method": "all"}`.
    pub select: Option<SelectParams>,
    /// Default `{"method": "equal"}`.
    pub weighting: Option<WeightingParams>,
    /// A held symbol trades at a rebalance only when its weight is off its
    /// target by more than this, 0-1; default 0.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub drift_tolerance: Option<f64>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ScheduleParams {
    pub every: Every,
    /// The first (default) or last session of each period.
    pub on: Option<On>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Every {
    Day,
    Week,
    Month,
    Quarter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum On {
    First,
    Last,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub enum SelectParams {
    /// Every symbol (no other key beside `method`).
    All {},
    /// The k highest scores (k at most the universe's size).
    Top {
        #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 500))]
        #[serde(deserialize_with = "crate::error::whole_number")]
        k: usize,
        by: ScoreParams,
    },
    /// The k lowest.
    Bottom {
        #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 500))]
        #[serde(deserialize_with = "crate::error::whole_number")]
        k: usize,
        by: ScoreParams,
    },
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub enum WeightingParams {
    /// The same weight for each selected symbol (no other key beside
    /// `method`).
    Equal {},
    /// In proportion to 1 / volatility over `bars` returns.
    InverseVolatility {
        #[cfg_attr(feature = "openapi", schema(minimum = 2, maximum = 5000))]
        #[serde(deserialize_with = "crate::error::whole_number")]
        bars: usize,
    },
    /// A weight per universe symbol, summing to 1 (with `select` all).
    Fixed { weights: SymbolWeights },
}

/// Symbol to weight, each 0-1: a schema of its own, so that generated
/// clients make one model of it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(transparent)]
pub struct SymbolWeights(pub BTreeMap<String, f64>);

type Result<T> = std::result::Result<T, FieldError>;

fn within(field: &str, x: f64, lo: f64, hi: f64, lo_open: bool, hi_open: bool) -> Result<()> {
    let ok = x.is_finite()
        && (if lo_open { x > lo } else { x >= lo })
        && (if hi_open { x < hi } else { x <= hi });
    if ok {
        return Ok(());
    }
    let (l, h) = (
        if lo_open { "(" } else { "[" },
        if hi_open { ")" } else { "]" },
    );
    Err(FieldError::new(
        field,
        format!("{x} is outside {l}{lo}, {hi}{h}"),
    ))
}

fn bars(field: &str, n: usize, least: usize) -> Result<()> {
    if (least..=MAX_LOOKBACK).contains(&n) {
        Ok(())
    } else {
        Err(FieldError::new(
            field,
            format!("{n} is outside {least}-{MAX_LOOKBACK} bars"),
        ))
    }
}

impl ScoreParams {
    fn check(&self, field: &str) -> Result<()> {
        match self {
            ScoreParams::Momentum(n) => bars(&format!("{field}.momentum"), *n, 1),
            ScoreParams::Volatility(n) => bars(&format!("{field}.volatility"), *n, 2),
            ScoreParams::Technical(t) => {
                let Some(entry) = crate::backtest::signals::technical(&t.name) else {
                    return Err(FieldError::new(
                        format!("{field}.technical.name"),
                        format!("'{}' is not a technical signal", t.name),
                    ));
                };
                if let Some(p) = t.period {
                    bars(&format!("{field}.technical.period"), p, 1)?;
                    if entry.indicator.with_period(p).is_none() {
                        return Err(FieldError::new(
                            format!("{field}.technical.period"),
                            format!("'{}' takes no period", entry.name),
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// Bars of history the figure reads before its bar.
    pub fn lookback(&self) -> usize {
        match self {
            ScoreParams::Momentum(n) | ScoreParams::Volatility(n) => *n,
            ScoreParams::Technical(_) => 0,
        }
    }
}

impl PortfolioParams {
    /// What the type cannot say, and the defaults the request left to us
    /// (reported with the result).
    pub fn check(&self) -> Result<Map<String, Value>> {
        let mut defaults = Map::new();
        if self.universe.is_empty() || self.universe.len() > MAX_UNIVERSE {
            return Err(FieldError::new(
                "universe",
                format!(
                    "has {} symbols; 1-{MAX_UNIVERSE} are allowed",
                    self.universe.len()
                ),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, s) in self.universe.iter().enumerate() {
            if s.trim().is_empty() || !seen.insert(s.as_str()) {
                let why = if s.trim().is_empty() {
                    "is empty"
                } else {
                    "is listed twice"
                };
                return Err(FieldError::new(
                    format!("universe[{i}]"),
                    format!("'{s}' {why}"),
                ));
            }
        }
        if let Some(n) = &self.name
            && n.chars().count() > 200
        {
            return Err(FieldError::new("name", "is longer than 200 characters"));
        }
        for (field, d) in [("start_date", self.start_date), ("end_date", self.end_date)] {
            if let Some(d) = d
                && let Some(why) = crate::dates::why_not(&d.to_string(), Some(d), "YYYY-MM-DD")
            {
                return Err(FieldError::new(field, why));
            }
        }
        if let (Some(a), Some(b)) = (self.start_date, self.end_date)
            && b < a
        {
            return Err(FieldError::new(
                "end_date",
                format!("{b} is before start_date {a}"),
            ));
        }
        let mut default = |k: &str, v: Value, sent: bool| {
            if !sent {
                defaults.insert(k.into(), v);
            }
        };
        default("benchmark", json!("SPX"), self.benchmark.is_some());
        default("capital", json!(100_000.0), self.capital.is_some());
        default("commission", json!(0.0), self.commission.is_some());
        default("slippage", json!(0.0), self.slippage.is_some());
        default(
            "trade_price",
            json!("current_close"),
            self.trade_price.is_some(),
        );
        default("fractional", json!(true), self.fractional.is_some());
        default("max_leverage", json!(1.0), self.max_leverage.is_some());
        default("adjusted", json!(true), self.adjusted.is_some());
        if let Some(c) = self.capital {
            within("capital", c, 0.0, 1e12, true, false)?;
        }
        if let Some(c) = self.commission {
            within("commission", c, 0.0, 0.5, false, true)?;
        }
        if let Some(s) = self.slippage {
            within("slippage", s, 0.0, 0.5, false, true)?;
        }
        if let Some(l) = self.max_leverage {
            within("max_leverage", l, 1.0, 10.0, false, false)?;
        }
        match (&self.signals, &self.weights) {
            (Some(_), Some(_)) => Err(FieldError::new(
                "weights",
                "is sent with signals; a portfolio takes one of the two",
            )),
            (None, None) => Err(FieldError::new(
                "signals",
                "is required (or weights): a portfolio trades by signals or by target weights",
            )),
            (Some(s), None) => {
                s.check(&mut defaults)?;
                Ok(defaults)
            }
            (None, Some(w)) => {
                w.check(&self.universe, &mut defaults)?;
                Ok(defaults)
            }
        }
    }
}

impl SignalMode {
    fn check(&self, defaults: &mut Map<String, Value>) -> Result<()> {
        if !(1..=MAX_UNIVERSE).contains(&self.max_positions) {
            return Err(FieldError::new(
                "signals.max_positions",
                format!("{} is outside 1-{MAX_UNIVERSE}", self.max_positions),
            ));
        }
        if self.risk_control.is_none() {
            defaults.insert("signals.risk_control".into(), json!("//"));
        }
        if let Some(r) = &self.rank_by {
            r.by.check("signals.rank_by.by")?;
        } else {
            defaults.insert("signals.rank_by".into(), json!("universe order"));
        }
        match &self.sizing {
            None => {
                defaults.insert("signals.sizing".into(), json!({"method": "equal"}));
            }
            Some(SizingParams::Equal {}) => {}
            Some(SizingParams::FixedFraction { fraction }) => {
                within("signals.sizing.fraction", *fraction, 0.0, 1.0, true, false)?;
            }
            Some(SizingParams::InverseVolatility { bars: b }) => {
                bars("signals.sizing.bars", *b, 2)?;
            }
            Some(SizingParams::VolatilityTarget {
                bars: b,
                annual_volatility,
            }) => {
                bars("signals.sizing.bars", *b, 2)?;
                within(
                    "signals.sizing.annual_volatility",
                    *annual_volatility,
                    0.0,
                    5.0,
                    true,
                    false,
                )?;
            }
            Some(SizingParams::Kelly { cap, min_trades }) => {
                if let Some(c) = cap {
                    within("signals.sizing.cap", *c, 0.0, 1.0, true, false)?;
                } else {
                    defaults.insert("signals.sizing.cap".into(), json!(0.25));
                }
                if let Some(m) = min_trades {
                    if *m > 1_000 {
                        return Err(FieldError::new(
                            "signals.sizing.min_trades",
                            format!("{m} is above 1000"),
                        ));
                    }
                } else {
                    defaults.insert("signals.sizing.min_trades".into(), json!(10));
                }
            }
        }
        Ok(())
    }
}

impl WeightMode {
    fn check(&self, universe: &[String], defaults: &mut Map<String, Value>) -> Result<()> {
        if self.schedule.on.is_none() {
            defaults.insert("weights.schedule.on".into(), json!("first"));
        }
        if let Some(t) = self.drift_tolerance {
            within("weights.drift_tolerance", t, 0.0, 1.0, false, false)?;
        } else {
            defaults.insert("weights.drift_tolerance".into(), json!(0.0));
        }
        match &self.select {
            None => {
                defaults.insert("weights.select".into(), json!({"method": "all"}));
            }
            Some(SelectParams::All {}) => {}
            Some(SelectParams::Top { k, by } | SelectParams::Bottom { k, by }) => {
                if !(1..=universe.len()).contains(k) {
                    return Err(FieldError::new(
                        "weights.select.k",
                        format!("{k} is outside 1-{} (the universe's size)", universe.len()),
                    ));
                }
                if matches!(by, ScoreParams::Technical(_)) {
                    return Err(FieldError::new(
                        "weights.select.by",
                        "selects by momentum or volatility; technical signals rank entries in signal mode",
                    ));
                }
                by.check("weights.select.by")?;
            }
        }
        match &self.weighting {
            None => {
                defaults.insert("weights.weighting".into(), json!({"method": "equal"}));
            }
            Some(WeightingParams::Equal {}) => {}
            Some(WeightingParams::InverseVolatility { bars: b }) => {
                bars("weights.weighting.bars", *b, 2)?;
            }
            Some(WeightingParams::Fixed {
                weights: SymbolWeights(weights),
            }) => {
                if !matches!(self.select, None | Some(SelectParams::All {})) {
                    return Err(FieldError::new(
                        "weights.weighting",
                        "fixed weights take every symbol: select must be all",
                    ));
                }
                let mut sum = 0.0;
                for (sym, w) in weights {
                    let field = format!("weights.weighting.weights.{sym}");
                    if !universe.contains(sym) {
                        return Err(FieldError::new(
                            field,
                            format!("'{sym}' is not in the universe"),
                        ));
                    }
                    within(&field, *w, 0.0, 1.0, false, false)?;
                    sum += w;
                }
                if (sum - 1.0).abs() > 1e-6 {
                    return Err(FieldError::new(
                        "weights.weighting.weights",
                        format!("sum to {sum}, not 1"),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
