//! The strategy request (2.1-2.8) as typed values: what `validate`,
//! `start_backtest` and each strategy of a batch deserialise, and, through
//! `ToSchema`, the OpenAPI schema of those bodies.
//!
//! Each part is a type of its own: a rule block per rule type, a condition
//! per kind of comparison, a rule per operator class, a signal per category.
//! Their schemas state the canonical form, precisely enough that a request
//! they admit is accepted (operators, names and qualifiers enumerated, the
//! comparisons that need a value or a period requiring it). The parts are
//! read from a lenient wire form (`Raw*`: numbers as text, `voters`, the
//! qualifier inside the rule, a signal without `type`) and checked as they
//! are built, every error naming its path. Two things the schema cannot
//! state are said in its descriptions: the symbol and Sentiment names must
//! exist in the data, and `end_date` is not before `start_date`.

use super::rules::{
    ConditionSpec, MAX_CONDITIONS, QualifierSpec, RuleBlock, RuleSpec, RuleType, SignalRef,
};
use super::signals::{self, OpClass};
use super::values::{count, number, text};
use crate::error::FieldError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

type Result<T> = std::result::Result<T, FieldError>;

/// A signal's fields, whatever its shape.
macro_rules! signal_data {
    ($s:expr) => {
        SignalData {
            kind: $s.kind.clone(),
            name: $s.name.clone(),
            params: $s.params.clone(),
        }
    };
}

/// A rule's fields, whatever its shape.
macro_rules! rule_data {
    ($r:expr) => {
        RuleData {
            comparison_type: $r.comparison_type.clone(),
            type_name: $r.type_name.clone(),
            comparison_value: $r.comparison_value.clone(),
            period: $r.period,
        }
    };
}

/// Builds a rule shape from a rule's fields.
macro_rules! rule_shape {
    ($shape:ident, $r:expr) => {
        $shape {
            comparison_type: $r.comparison_type,
            type_name: $r.type_name,
            comparison_value: $r.comparison_value,
            period: $r.period,
        }
    };
}

/// A value the spec writes as a number or as text (`"0.0010"`, `5`), read
/// where it is checked, so that an error quotes it as sent.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(transparent)]
pub struct Loose(pub Value);

/// A strategy. Only symbol, entry and exit are required; numbers may also
/// be sent as numeric text, a duplicate key's last value wins, and other
/// spellings of the spec's examples are accepted (docs/backtest.md). CSV
/// mode (csv_mode with csv_data rows) is described in docs/backtest.md.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = StrategyParams, example = json!({
    "symbol": "SPX", "start_date": "2005-01-01", "risk_control": "-8//63",
    "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
    "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossAbove", "comparison_value": "70"}}}
})))]
pub struct Strategy {
    /// The traded ticker; it must have daily prices
    #[cfg_attr(feature = "openapi", schema(value_type = crate::analytics::TickerText))]
    pub symbol: Loose,
    #[cfg_attr(feature = "openapi", schema(value_type = String, max_length = 200, required = false))]
    pub name: Option<Loose>,
    /// Free-text entries such as Introduction and Rules, kept with the task
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = description_schema, required = false))]
    pub description: Option<BTreeMap<String, String>>,
    /// Default SPX
    #[cfg_attr(feature = "openapi", schema(value_type = crate::analytics::TickerText, required = false))]
    pub benchmark: Option<Loose>,
    /// Default Long
    #[cfg_attr(feature = "openapi", schema(schema_with = direction_schema, required = false))]
    pub direction: Option<Loose>,
    /// Default Daily
    #[cfg_attr(feature = "openapi", schema(schema_with = frequency_schema, required = false))]
    pub frequency: Option<Loose>,
    /// Default Single
    #[cfg_attr(feature = "openapi", schema(value_type = String, max_length = 50, required = false))]
    pub strategy: Option<Loose>,
    /// Default cash
    #[cfg_attr(feature = "openapi", schema(value_type = String, max_length = 50, required = false))]
    pub model: Option<Loose>,
    /// Default 100000
    #[cfg_attr(feature = "openapi", schema(value_type = f64, exclusive_minimum = 0, maximum = 1e12, required = false))]
    pub capital: Option<Loose>,
    /// Fraction of equity per trade as text, above 0 and at most 1, default "1.000000" (a number is accepted too)
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = r"^(0\.[0-9]{0,5}[1-9]|1(\.0{1,6})?)$", required = false))]
    pub capital_alloc: Option<Loose>,
    /// Fraction of traded value per side as text, below 0.5, default "0.0000" (a number is accepted too)
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = r"^0(\.[0-4][0-9]{0,5})?$", required = false))]
    pub commission: Option<Loose>,
    /// Fraction of price per side as text, below 0.5, default "0.0000" (a number is accepted too)
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = r"^0(\.[0-4][0-9]{0,5})?$", required = false))]
    pub slippage: Option<Loose>,
    /// Default 1800-10-01
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, required = false))]
    pub start_date: Option<Loose>,
    /// Not before start_date; default the latest date in the data
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, required = false))]
    pub end_date: Option<Loose>,
    /// 0 next open, 1 next close, 2 current close (default)
    #[cfg_attr(feature = "openapi", schema(schema_with = trade_price_schema, required = false))]
    pub trade_price: Option<Loose>,
    /// stop-loss %/take-profit %/max holding bars, each may be empty; default //21
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = r"^(-?([1-9][0-9]{0,2}(\.[0-9]{1,2})?|0\.[0-9]?[1-9]))?/([0-9]{1,3}(\.[0-9]{1,2})?)?/([1-9][0-9]{0,3})?$", required = false))]
    pub risk_control: Option<Loose>,
    /// Accepted for compatibility; other values are reported as ignored
    #[cfg_attr(feature = "openapi", schema(schema_with = inert_schema, required = false))]
    pub exclude_oo: Option<Loose>,
    /// Accepted for compatibility; other values are reported as ignored
    #[cfg_attr(feature = "openapi", schema(schema_with = inert_schema, required = false))]
    pub market_environment: Option<Loose>,
    /// Accepted for compatibility; other values are reported as ignored
    #[cfg_attr(feature = "openapi", schema(schema_with = inert_schema, required = false))]
    pub index_moving_average_slope: Option<Loose>,
    /// Accepted for compatibility; other values are reported as ignored
    #[cfg_attr(feature = "openapi", schema(schema_with = inert_schema, required = false))]
    pub opted: Option<Loose>,
    /// Accepted for compatibility; other values are reported as ignored
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = r"^0(\.0{1,4})?$", required = false))]
    pub win_rate: Option<Loose>,
    pub entry: EntryBlock,
    pub exit: ExitBlock,
    /// CSV mode (2.8, docs/backtest.md): the bars come with the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub csv_mode: Option<Loose>,
    /// CSV mode's rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub csv_data: Option<Value>,
}

// ---- rule blocks ----------------------------------------------------------

/// A rule block as sent: every field any rule type takes; the rule type
/// decides which it may hold.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBlock {
    rule_type: Option<Loose>,
    delay_bars: Option<Loose>,
    condition: Option<Value>,
    voters: Option<Value>,
    score_threshold: Option<Loose>,
    steps: Option<Value>,
    signals_in_market: Option<Loose>,
}

/// When a position opens (2.3)
#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged, try_from = "RawBlock")]
#[cfg_attr(feature = "openapi", schema(discriminator(property_name = "rule_type", mapping(
    ("SingleCondition" = "#/components/schemas/SingleConditionBlock"),
    ("Scoring" = "#/components/schemas/ScoringBlock"),
    ("TimeOrder" = "#/components/schemas/TimeOrderBlock"),
))))]
pub enum EntryBlock {
    SingleCondition(SingleConditionBlock),
    Scoring(ScoringBlock),
    TimeOrder(TimeOrderBlock),
}

/// When a position closes (2.3); RiskControlOnly leaves it to risk_control
#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged, try_from = "RawBlock")]
#[cfg_attr(feature = "openapi", schema(discriminator(property_name = "rule_type", mapping(
    ("SingleCondition" = "#/components/schemas/SingleConditionBlock"),
    ("Scoring" = "#/components/schemas/ScoringBlock"),
    ("TimeOrder" = "#/components/schemas/TimeOrderBlock"),
    ("RiskControlOnly" = "#/components/schemas/RiskControlOnlyBlock"),
))))]
pub enum ExitBlock {
    SingleCondition(SingleConditionBlock),
    Scoring(ScoringBlock),
    TimeOrder(TimeOrderBlock),
    RiskControlOnly(RiskControlOnlyBlock),
}

/// Fires when its one condition holds
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "SingleConditionBlock"))]
pub struct SingleConditionBlock {
    #[cfg_attr(feature = "openapi", schema(schema_with = single_condition_tag))]
    pub rule_type: &'static str,
    pub condition: Box<StrategyCondition>,
    /// Bars to wait after the rule fires
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1000, nullable = false)
    )]
    pub delay_bars: Option<usize>,
}

/// Fires when at least score_threshold (default all, at most the number of conditions) hold
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "ScoringBlock"))]
pub struct ScoringBlock {
    #[cfg_attr(feature = "openapi", schema(schema_with = scoring_tag))]
    pub rule_type: &'static str,
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 5))]
    pub condition: Vec<StrategyCondition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 1, maximum = 5, nullable = false)
    )]
    pub score_threshold: Option<usize>,
    /// Bars to wait after the rule fires
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1000, nullable = false)
    )]
    pub delay_bars: Option<usize>,
}

/// Fires when the steps hold in order within signals_in_market bars
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "TimeOrderBlock"))]
pub struct TimeOrderBlock {
    #[cfg_attr(feature = "openapi", schema(schema_with = time_order_tag))]
    pub rule_type: &'static str,
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 5))]
    pub steps: Vec<StrategyCondition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 1, maximum = 100000, nullable = false)
    )]
    pub signals_in_market: Option<usize>,
    /// Bars to wait after the rule fires
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1000, nullable = false)
    )]
    pub delay_bars: Option<usize>,
}

/// Exit by risk_control alone
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "RiskControlOnlyBlock"))]
pub struct RiskControlOnlyBlock {
    #[cfg_attr(feature = "openapi", schema(schema_with = risk_control_only_tag))]
    pub rule_type: &'static str,
}

/// A block of any rule type, before the side decides which it may be.
enum AnyBlock {
    SingleCondition(SingleConditionBlock),
    Scoring(ScoringBlock),
    TimeOrder(TimeOrderBlock),
    RiskControlOnly(RiskControlOnlyBlock),
}

/// The fields a block of each rule type holds (2.3): a field of another
/// type's block is refused rather than left without effect.
fn block_fields(rule_type: RuleType) -> &'static [&'static str] {
    match rule_type {
        RuleType::SingleCondition => &["rule_type", "delay_bars", "condition"],
        RuleType::Scoring => &[
            "rule_type",
            "delay_bars",
            "condition",
            "voters",
            "score_threshold",
        ],
        RuleType::TimeOrder => &["rule_type", "delay_bars", "steps", "signals_in_market"],
        RuleType::RiskControlOnly => &["rule_type"],
    }
}

impl RawBlock {
    /// The fields sent, by name.
    fn sent(&self) -> impl Iterator<Item = &'static str> + '_ {
        [
            ("rule_type", self.rule_type.is_some()),
            ("delay_bars", self.delay_bars.is_some()),
            ("condition", self.condition.is_some()),
            ("voters", self.voters.is_some()),
            ("score_threshold", self.score_threshold.is_some()),
            ("steps", self.steps.is_some()),
            ("signals_in_market", self.signals_in_market.is_some()),
        ]
        .into_iter()
        .filter(|(_, sent)| *sent)
        .map(|(name, _)| name)
    }

    /// The block, its paths relative to it; `side` (`entry`, `exit`) only
    /// names the conditions for later messages.
    fn build(self, side: &str) -> Result<AnyBlock> {
        let rule_type = match &self.rule_type {
            None => return Err(FieldError::required("rule_type")),
            Some(Loose(v)) => match text(v, "rule_type")?.trim() {
                "SingleCondition" => RuleType::SingleCondition,
                "Scoring" => RuleType::Scoring,
                "TimeOrder" => RuleType::TimeOrder,
                "RiskControlOnly" => RuleType::RiskControlOnly,
                other => {
                    return Err(FieldError::new(
                        "rule_type",
                        format!(
                            "'{other}' is not SingleCondition, Scoring, TimeOrder or RiskControlOnly"
                        ),
                    ));
                }
            },
        };
        if rule_type == RuleType::TimeOrder
            && self
                .condition
                .as_ref()
                .and_then(|c| c.get("steps"))
                .is_some()
        {
            return Err(FieldError::new(
                "condition.steps",
                "TimeOrder steps go directly on the block as 'steps', not under 'condition'",
            ));
        }
        let known = block_fields(rule_type);
        if let Some(extra) = self.sent().find(|f| !known.contains(f)) {
            return Err(FieldError::unknown(extra, known.iter().copied()));
        }
        let counted = |v: &Option<Loose>, at: &str| -> Result<Option<usize>> {
            v.as_ref().map(|Loose(x)| count(x, at)).transpose()
        };
        let delay_bars = counted(&self.delay_bars, "delay_bars")?;
        let list = |v: &Value, at: &str| -> Result<Vec<StrategyCondition>> {
            let items = v
                .as_array()
                .ok_or_else(|| FieldError::new(at, "expected an array of conditions"))?;
            if items.is_empty() {
                return Err(FieldError::new(at, "needs at least one condition"));
            }
            if items.len() > MAX_CONDITIONS {
                return Err(FieldError::new(
                    at,
                    format!("has {} conditions; at most {MAX_CONDITIONS}", items.len()),
                ));
            }
            items
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let at = format!("{at}[{i}]");
                    StrategyCondition::read(c, &at, &format!("{side}.{at}"))
                })
                .collect()
        };
        Ok(match rule_type {
            RuleType::SingleCondition => {
                let c = self.condition.as_ref().ok_or_else(|| {
                    FieldError::new("condition", "is required for SingleCondition")
                })?;
                if c.is_array() {
                    return Err(FieldError::new(
                        "condition",
                        "must be one object for SingleCondition (use Scoring for several)",
                    ));
                }
                AnyBlock::SingleCondition(SingleConditionBlock {
                    rule_type: RuleType::SingleCondition.as_str(),
                    condition: Box::new(StrategyCondition::read(
                        c,
                        "condition",
                        &format!("{side}.condition"),
                    )?),
                    delay_bars,
                })
            }
            RuleType::Scoring => {
                let (key, c) = match (&self.condition, &self.voters) {
                    (Some(c), _) => ("condition", c),
                    (None, Some(v)) => ("voters", v),
                    (None, None) => {
                        return Err(FieldError::new(
                            "condition",
                            "is required for Scoring (an array of {signal, rule})",
                        ));
                    }
                };
                if c.is_object() {
                    return Err(FieldError::new(
                        key,
                        "must be an array for Scoring, not one object",
                    ));
                }
                let condition = list(c, key)?;
                let score_threshold = counted(&self.score_threshold, "score_threshold")?;
                let t = score_threshold.unwrap_or(condition.len());
                if t == 0 || t > condition.len() {
                    return Err(FieldError::new(
                        "score_threshold",
                        format!(
                            "must be between 1 and the number of conditions ({})",
                            condition.len()
                        ),
                    ));
                }
                AnyBlock::Scoring(ScoringBlock {
                    rule_type: RuleType::Scoring.as_str(),
                    condition,
                    score_threshold,
                    delay_bars,
                })
            }
            RuleType::TimeOrder => {
                let steps = self
                    .steps
                    .as_ref()
                    .ok_or_else(|| FieldError::new("steps", "is required for TimeOrder"))?;
                AnyBlock::TimeOrder(TimeOrderBlock {
                    rule_type: RuleType::TimeOrder.as_str(),
                    steps: list(steps, "steps")?,
                    signals_in_market: counted(&self.signals_in_market, "signals_in_market")?,
                    delay_bars,
                })
            }
            RuleType::RiskControlOnly => AnyBlock::RiskControlOnly(RiskControlOnlyBlock {
                rule_type: RuleType::RiskControlOnly.as_str(),
            }),
        })
    }
}

/// A block's mistake as a serde error: its field relative to the block, so
/// the reader's path (`entry`) completes it ([`FieldError::from_serde`]).
#[derive(Debug)]
pub struct Nested(pub FieldError);

impl std::fmt::Display for Nested {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl TryFrom<RawBlock> for EntryBlock {
    type Error = Nested;

    fn try_from(raw: RawBlock) -> std::result::Result<Self, Nested> {
        match raw.build("entry").map_err(Nested)? {
            AnyBlock::SingleCondition(b) => Ok(EntryBlock::SingleCondition(b)),
            AnyBlock::Scoring(b) => Ok(EntryBlock::Scoring(b)),
            AnyBlock::TimeOrder(b) => Ok(EntryBlock::TimeOrder(b)),
            AnyBlock::RiskControlOnly(_) => Err(Nested(FieldError::new(
                "rule_type",
                "RiskControlOnly is for the exit only",
            ))),
        }
    }
}

impl TryFrom<RawBlock> for ExitBlock {
    type Error = Nested;

    fn try_from(raw: RawBlock) -> std::result::Result<Self, Nested> {
        Ok(match raw.build("exit").map_err(Nested)? {
            AnyBlock::SingleCondition(b) => ExitBlock::SingleCondition(b),
            AnyBlock::Scoring(b) => ExitBlock::Scoring(b),
            AnyBlock::TimeOrder(b) => ExitBlock::TimeOrder(b),
            AnyBlock::RiskControlOnly(b) => ExitBlock::RiskControlOnly(b),
        })
    }
}

impl EntryBlock {
    /// The block as the engine's rules read it.
    pub fn rules(&self) -> RuleBlock {
        match self {
            EntryBlock::SingleCondition(b) => b.rules(),
            EntryBlock::Scoring(b) => b.rules(),
            EntryBlock::TimeOrder(b) => b.rules(),
        }
    }
}

impl ExitBlock {
    /// The block as the engine's rules read it.
    pub fn rules(&self) -> RuleBlock {
        match self {
            ExitBlock::SingleCondition(b) => b.rules(),
            ExitBlock::Scoring(b) => b.rules(),
            ExitBlock::TimeOrder(b) => b.rules(),
            ExitBlock::RiskControlOnly(_) => RuleBlock {
                rule_type: RuleType::RiskControlOnly,
                delay_bars: 0,
                conditions: Vec::new(),
                score_threshold: None,
                signals_in_market: DEFAULT_SIGNALS_IN_MARKET,
            },
        }
    }
}

/// `signals_in_market` when not given: no limit (2.3).
const DEFAULT_SIGNALS_IN_MARKET: usize = 100_000;

impl SingleConditionBlock {
    fn rules(&self) -> RuleBlock {
        RuleBlock {
            rule_type: RuleType::SingleCondition,
            delay_bars: self.delay_bars.unwrap_or(0),
            conditions: vec![self.condition.spec()],
            score_threshold: None,
            signals_in_market: DEFAULT_SIGNALS_IN_MARKET,
        }
    }
}

impl ScoringBlock {
    fn rules(&self) -> RuleBlock {
        RuleBlock {
            rule_type: RuleType::Scoring,
            delay_bars: self.delay_bars.unwrap_or(0),
            conditions: self.condition.iter().map(StrategyCondition::spec).collect(),
            score_threshold: self.score_threshold,
            signals_in_market: DEFAULT_SIGNALS_IN_MARKET,
        }
    }
}

impl TimeOrderBlock {
    fn rules(&self) -> RuleBlock {
        RuleBlock {
            rule_type: RuleType::TimeOrder,
            delay_bars: self.delay_bars.unwrap_or(0),
            conditions: self.steps.iter().map(StrategyCondition::spec).collect(),
            score_threshold: None,
            signals_in_market: self.signals_in_market.unwrap_or(DEFAULT_SIGNALS_IN_MARKET),
        }
    }
}

// ---- conditions -----------------------------------------------------------

/// A condition as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCondition {
    signal: RawSignal,
    rule: RawRule,
    qualifier: Option<RawQualifier>,
}

/// A signal as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignal {
    #[serde(rename = "type")]
    kind: Option<Loose>,
    name: Loose,
    params: Option<RawSignalParams>,
}

/// A signal's parameters as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignalParams {
    extreme_optimism: Option<Loose>,
    extreme_pessimism: Option<Loose>,
    period: Option<Loose>,
}

/// A rule as sent, with a qualifier written inside it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    comparison_type: Option<Loose>,
    type_name: Loose,
    comparison_value: Option<Loose>,
    period: Option<Loose>,
    qualifier: Option<RawQualifier>,
}

/// A qualifier as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQualifier {
    comparison_operator: Loose,
    calculation_period: Loose,
    ma_type: Option<Loose>,
}

/// One condition of a rule block
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum StrategyCondition {
    Qualified(QualifiedCondition),
    MovingAverage(MovingAverageCondition),
    Signal(SignalCondition),
}

/// A Sentiment or Symbol signal, transformed by a qualifier, compared by a rule
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "QualifiedCondition"))]
pub struct QualifiedCondition {
    pub signal: QualifiableSignal,
    pub rule: Rule,
    pub qualifier: Qualifier,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub path: String,
}

/// The close against a moving-average Technical signal; with the signal's own params.period and rule.period, that faster average against the slower one
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "MovingAverageCondition"))]
pub struct MovingAverageCondition {
    pub signal: MovingAverageSignal,
    pub rule: MovingAverageRule,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub path: String,
}

/// A signal compared by a rule
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "SignalCondition"))]
pub struct SignalCondition {
    pub signal: AnySignal,
    pub rule: Rule,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub path: String,
}

impl StrategyCondition {
    /// A condition from its JSON at `at` (relative to the block, for
    /// errors); `path` is its path in the request, kept for later messages.
    fn read(v: &Value, at: &str, path: &str) -> Result<StrategyCondition> {
        if !v.is_object() {
            return Err(FieldError::new(at, "expected an object"));
        }
        let raw: RawCondition = crate::error::from_json(v.clone()).map_err(|e| e.within(at))?;
        let signal = SignalData::from_raw(raw.signal, &format!("{at}.signal"))?;
        let rp = format!("{at}.rule");
        let (rule, inner_qualifier) = RuleData::from_raw(raw.rule, &rp)?;
        // The qualifier sits beside the rule, or (in one example) inside it.
        let qualifier = match (raw.qualifier, inner_qualifier) {
            (Some(q), _) => Some(Qualifier::from_raw(q, &format!("{at}.qualifier"))?),
            (None, Some(q)) => Some(Qualifier::from_raw(q, &format!("{rp}.qualifier"))?),
            (None, None) => None,
        };
        let path = path.to_string();
        Ok(match qualifier {
            Some(qualifier) => StrategyCondition::Qualified(QualifiedCondition {
                signal: QualifiableSignal::of(signal),
                rule: Rule::of(rule),
                qualifier,
                path,
            }),
            None if rule.comparison_type == "MA" => {
                StrategyCondition::MovingAverage(MovingAverageCondition {
                    signal: MovingAverageSignal {
                        kind: signal.kind,
                        name: signal.name,
                        params: signal.params,
                    },
                    rule: rule_shape!(MovingAverageRule, rule),
                    path,
                })
            }
            None => StrategyCondition::Signal(SignalCondition {
                signal: AnySignal::of(signal),
                rule: Rule::of(rule),
                path,
            }),
        })
    }

    /// The condition as signal resolution and compilation read it.
    pub fn spec(&self) -> ConditionSpec {
        let (path, signal, rule, qualifier) = match self {
            StrategyCondition::Qualified(c) => (
                &c.path,
                c.signal.data(),
                c.rule.data(),
                Some(c.qualifier.spec()),
            ),
            StrategyCondition::MovingAverage(c) => (&c.path, c.signal.data(), c.rule.data(), None),
            StrategyCondition::Signal(c) => (&c.path, c.signal.data(), c.rule.data(), None),
        };
        ConditionSpec {
            path: path.clone(),
            signal: signal.spec(),
            rule: rule.spec(),
            qualifier,
        }
    }
}

// ---- signals --------------------------------------------------------------

/// A signal as sent: its category (`type`, detected from the name when
/// left out), name and parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignalData {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<SignalParams>,
}

/// A signal's parameters: its extremes, and a Technical indicator's own period.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(
    feature = "openapi",
    schema(
        title = "SignalExtremesAndPeriod",
        as = SignalExtremesAndPeriod,
        description = "Override the signal's extremes (20/80) and set the indicator's own period"
    )
)]
pub struct SignalParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = -1e6, maximum = 1e6, nullable = false))]
    pub extreme_optimism: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = -1e6, maximum = 1e6, nullable = false))]
    pub extreme_pessimism: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 1, maximum = 1000, nullable = false)
    )]
    pub period: Option<usize>,
}

/// Override the signal's extremes (Sentiment: the catalog's; Technical: 20/80)
#[cfg(feature = "openapi")]
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(title = "SignalExtremes")]
#[allow(dead_code)]
pub struct SignalExtremes {
    #[schema(minimum = -1e6, maximum = 1e6, nullable = false)]
    extreme_optimism: Option<f64>,
    #[schema(minimum = -1e6, maximum = 1e6, nullable = false)]
    extreme_pessimism: Option<f64>,
}

impl SignalData {
    fn from_raw(raw: RawSignal, path: &str) -> Result<SignalData> {
        let name = text(&raw.name.0, &format!("{path}.name"))?
            .trim()
            .to_string();
        if name.is_empty() {
            return Err(FieldError::new(format!("{path}.name"), "must not be empty"));
        }
        let kind = raw
            .kind
            .map(|Loose(t)| text(&t, &format!("{path}.type")))
            .transpose()?;
        let params = match raw.params {
            None => None,
            Some(p) => {
                let at = format!("{path}.params");
                let extreme = |x: Option<Loose>, k: &str| {
                    x.map(|Loose(x)| number(&x, &format!("{at}.{k}")))
                        .transpose()
                };
                let period_at = format!("{at}.period");
                let period = p.period.map(|Loose(x)| count(&x, &period_at)).transpose()?;
                if period == Some(0) {
                    return Err(FieldError::new(period_at, "must be at least 1"));
                }
                Some(SignalParams {
                    extreme_optimism: extreme(p.extreme_optimism, "extreme_optimism")?,
                    extreme_pessimism: extreme(p.extreme_pessimism, "extreme_pessimism")?,
                    period,
                })
            }
        };
        Ok(SignalData { kind, name, params })
    }

    fn spec(&self) -> SignalRef {
        let p = self.params.as_ref();
        SignalRef {
            kind: self.kind.clone(),
            name: self.name.clone(),
            extreme_optimism: p.and_then(|p| p.extreme_optimism),
            extreme_pessimism: p.and_then(|p| p.extreme_pessimism),
            period: p.and_then(|p| p.period),
        }
    }

    /// The category `type` names, lower-cased (none: detected later).
    fn category(&self) -> Option<String> {
        self.kind.as_deref().map(|k| k.trim().to_ascii_lowercase())
    }
}

/// An indicator of the catalog (`GET /backtest/indicators/list`); `type` may be left out
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "SentimentSignal"))]
pub struct SentimentSignal {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = sentiment_kind, required = false))]
    pub kind: Option<String>,
    /// The chart name or code of an indicator of GET /backtest/indicators/list
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalExtremes, required = false))]
    pub params: Option<SignalParams>,
}

/// A column of the traded symbol's bars
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "SymbolSignal"))]
pub struct SymbolSignal {
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(schema_with = symbol_kind, required = true))]
    pub kind: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = symbol_columns))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalExtremes, required = false))]
    pub params: Option<SignalParams>,
}

/// A technical indicator with one period that `params.period` can set
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "TechnicalSignal"))]
pub struct TechnicalSignal {
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(schema_with = technical_kind, required = true))]
    pub kind: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = periodic_technicals))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalParams, required = false))]
    pub params: Option<SignalParams>,
}

/// A technical indicator whose parameters are fixed
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "FixedTechnicalSignal"))]
pub struct FixedTechnicalSignal {
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(schema_with = technical_kind, required = true))]
    pub kind: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = fixed_technicals))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalExtremes, required = false))]
    pub params: Option<SignalParams>,
}

/// A moving-average technical indicator (the `MA` comparison's signal)
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "MovingAverageSignal"))]
pub struct MovingAverageSignal {
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(schema_with = technical_kind, required = true))]
    pub kind: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = average_technicals))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalParams, required = false))]
    pub params: Option<SignalParams>,
}

/// A signal a qualifier may transform: Sentiment or Symbol
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum QualifiableSignal {
    Sentiment(SentimentSignal),
    Symbol(SymbolSignal),
}

/// A signal of any category
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum AnySignal {
    Sentiment(SentimentSignal),
    Symbol(SymbolSignal),
    Technical(TechnicalSignal),
    FixedTechnical(FixedTechnicalSignal),
}

/// The shape a signal takes: by its `type`, and a technical's by whether
/// it has one period to set. A signal without `type` is a Sentiment's
/// shape here; its category is detected from the name when it is resolved
/// against the catalog (2.4).
fn shape(s: SignalData) -> AnySignal {
    match s.category().as_deref() {
        Some("symbol") => AnySignal::Symbol(SymbolSignal {
            kind: s.kind,
            name: s.name,
            params: s.params,
        }),
        Some("technical") if signals::technical(&s.name).is_some_and(|t| !periodic(t)) => {
            AnySignal::FixedTechnical(FixedTechnicalSignal {
                kind: s.kind,
                name: s.name,
                params: s.params,
            })
        }
        Some("technical") => AnySignal::Technical(TechnicalSignal {
            kind: s.kind,
            name: s.name,
            params: s.params,
        }),
        _ => AnySignal::Sentiment(SentimentSignal {
            kind: s.kind,
            name: s.name,
            params: s.params,
        }),
    }
}

impl AnySignal {
    fn of(s: SignalData) -> AnySignal {
        shape(s)
    }

    fn data(&self) -> SignalData {
        match self {
            AnySignal::Sentiment(s) => signal_data!(s),
            AnySignal::Symbol(s) => signal_data!(s),
            AnySignal::Technical(s) => signal_data!(s),
            AnySignal::FixedTechnical(s) => signal_data!(s),
        }
    }
}

impl QualifiableSignal {
    /// A Symbol signal, or any other in a Sentiment's shape (a Technical
    /// one is refused with its qualifier when it is compiled).
    fn of(s: SignalData) -> QualifiableSignal {
        match shape(s) {
            AnySignal::Symbol(s) => QualifiableSignal::Symbol(s),
            AnySignal::Sentiment(s) => QualifiableSignal::Sentiment(s),
            AnySignal::Technical(TechnicalSignal { kind, name, params })
            | AnySignal::FixedTechnical(FixedTechnicalSignal { kind, name, params }) => {
                QualifiableSignal::Sentiment(SentimentSignal { kind, name, params })
            }
        }
    }

    fn data(&self) -> SignalData {
        match self {
            QualifiableSignal::Sentiment(s) => signal_data!(s),
            QualifiableSignal::Symbol(s) => signal_data!(s),
        }
    }
}

/// Indicators with one period a signal's `params.period` can set.
fn periodic(t: &signals::TechEntry) -> bool {
    t.indicator.with_period(1).is_some()
}

// ---- rules ----------------------------------------------------------------

/// A rule as sent, checked field by field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleData {
    /// `SV`, `SVMA`, `SVEMA` or `MA`.
    pub comparison_type: String,
    pub type_name: String,
    pub comparison_value: Option<String>,
    pub period: Option<usize>,
}

impl RuleData {
    /// The rule at `rp`, and a qualifier written inside it.
    fn from_raw(raw: RawRule, rp: &str) -> Result<(RuleData, Option<RawQualifier>)> {
        let comparison_type = match raw.comparison_type {
            None => "SV".to_string(),
            Some(Loose(x)) => {
                let t = text(&x, &format!("{rp}.comparison_type"))?
                    .trim()
                    .to_ascii_uppercase();
                if !["SV", "SVMA", "SVEMA", "MA"].contains(&t.as_str()) {
                    return Err(FieldError::new(
                        format!("{rp}.comparison_type"),
                        format!("'{t}' is not SV, SVMA, SVEMA or MA"),
                    ));
                }
                t
            }
        };
        let type_name = text(&raw.type_name.0, &format!("{rp}.type_name"))?
            .trim()
            .to_string();
        let comparison_value = raw
            .comparison_value
            .map(|Loose(x)| text(&x, &format!("{rp}.comparison_value")))
            .transpose()?;
        if let Some(cv) = &comparison_value
            && !cv.trim().is_empty()
        {
            number(
                &Value::String(cv.clone()),
                &format!("{rp}.comparison_value"),
            )?;
        }
        // An empty period is no period (forms send empty fields).
        let period = raw
            .period
            .filter(|Loose(x)| x.as_str() != Some(""))
            .map(|Loose(x)| count(&x, &format!("{rp}.period")))
            .transpose()?;
        if period == Some(0) {
            return Err(FieldError::new(
                format!("{rp}.period"),
                "must be at least 1",
            ));
        }
        if matches!(comparison_type.as_str(), "SVMA" | "SVEMA") && period.is_none() {
            return Err(FieldError::new(
                format!("{rp}.period"),
                format!("is required with comparison_type {comparison_type}"),
            ));
        }
        let rule = RuleData {
            comparison_type,
            type_name,
            comparison_value,
            period,
        };
        Ok((rule, raw.qualifier))
    }

    fn spec(&self) -> RuleSpec {
        RuleSpec {
            comparison_type: self.comparison_type.clone(),
            type_name: self.type_name.clone(),
            comparison_value: self.comparison_value.clone(),
            period: self.period,
        }
    }
}

/// The signal against a value
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "ValueRule"))]
pub struct ValueRule {
    #[cfg_attr(feature = "openapi", schema(schema_with = sv, required = false))]
    pub comparison_type: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = main_operators))]
    pub type_name: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = number_text, required = true))]
    pub comparison_value: Option<String>,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub period: Option<usize>,
}

/// The signal above or below a value for `period` bars (default 3)
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "ConsecutiveRule"))]
pub struct ConsecutiveRule {
    #[cfg_attr(feature = "openapi", schema(schema_with = sv, required = false))]
    pub comparison_type: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = consecutive_operators))]
    pub type_name: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = number_text, required = true))]
    pub comparison_value: Option<String>,
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 1, maximum = 1000, nullable = false)
    )]
    pub period: Option<usize>,
}

/// The signal at its all-time high or low
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "ExtremeRule"))]
pub struct ExtremeRule {
    #[cfg_attr(feature = "openapi", schema(schema_with = sv, required = false))]
    pub comparison_type: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = extreme_operators))]
    pub type_name: String,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub comparison_value: Option<String>,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub period: Option<usize>,
}

/// The signal against its own simple (SVMA) or exponential (SVEMA) average of `period` bars, offset by comparison_value percent
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "OwnAverageRule"))]
pub struct OwnAverageRule {
    #[cfg_attr(feature = "openapi", schema(schema_with = own_average))]
    pub comparison_type: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = main_operators))]
    pub type_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = number_text, required = false))]
    pub comparison_value: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = u32, minimum = 1, maximum = 1000))]
    pub period: Option<usize>,
}

/// The close against the signal's moving average; with `period`, the signal's own average against one of `period` bars
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "MovingAverageRule"))]
pub struct MovingAverageRule {
    #[cfg_attr(feature = "openapi", schema(schema_with = ma))]
    pub comparison_type: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = main_operators))]
    pub type_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = number_text, required = false))]
    pub comparison_value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 1, maximum = 1000, nullable = false)
    )]
    pub period: Option<usize>,
}

/// A rule of a condition without the `MA` comparison
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum Rule {
    Value(ValueRule),
    Consecutive(ConsecutiveRule),
    Extreme(ExtremeRule),
    OwnAverage(OwnAverageRule),
}

impl Rule {
    /// The shape of a rule: by its comparison, then by its operator's class.
    /// An operator outside 2.6 keeps the value rule's shape and is refused,
    /// by name, when the condition is compiled.
    fn of(r: RuleData) -> Rule {
        if matches!(r.comparison_type.as_str(), "SVMA" | "SVEMA") {
            return Rule::OwnAverage(rule_shape!(OwnAverageRule, r));
        }
        match signals::operator(&r.type_name) {
            Some((_, OpClass::Special(12 | 13))) => Rule::Extreme(rule_shape!(ExtremeRule, r)),
            Some((_, OpClass::Special(_))) => Rule::Consecutive(rule_shape!(ConsecutiveRule, r)),
            _ => Rule::Value(rule_shape!(ValueRule, r)),
        }
    }

    fn data(&self) -> RuleData {
        match self {
            Rule::Value(r) => rule_data!(r),
            Rule::Consecutive(r) => rule_data!(r),
            Rule::Extreme(r) => rule_data!(r),
            Rule::OwnAverage(r) => rule_data!(r),
        }
    }
}

impl MovingAverageRule {
    fn data(&self) -> RuleData {
        rule_data!(self)
    }
}

impl MovingAverageSignal {
    fn data(&self) -> SignalData {
        signal_data!(self)
    }
}

// ---- qualifier ------------------------------------------------------------

/// Transforms the signal before the comparison (Sentiment and Symbol signals only)
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "Qualifier"))]
pub struct Qualifier {
    #[cfg_attr(feature = "openapi", schema(schema_with = qualifier_operators))]
    pub comparison_operator: String,
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1000))]
    pub calculation_period: usize,
    #[cfg_attr(feature = "openapi", schema(schema_with = ma_types, required = false))]
    pub ma_type: String,
}

impl Qualifier {
    fn from_raw(raw: RawQualifier, path: &str) -> Result<Qualifier> {
        let operator = text(
            &raw.comparison_operator.0,
            &format!("{path}.comparison_operator"),
        )?;
        let period = count(
            &raw.calculation_period.0,
            &format!("{path}.calculation_period"),
        )?;
        if period == 0 {
            return Err(FieldError::new(
                format!("{path}.calculation_period"),
                "must be at least 1",
            ));
        }
        let ma_type = match raw.ma_type {
            None => "S".to_string(),
            Some(Loose(m)) => match text(&m, &format!("{path}.ma_type"))?
                .to_ascii_uppercase()
                .as_str()
            {
                "S" | "SMA" | "SIMPLE" => "S".to_string(),
                "E" | "EMA" | "EXPONENTIAL" => "E".to_string(),
                other => {
                    return Err(FieldError::new(
                        format!("{path}.ma_type"),
                        format!("'{other}' is not S or E"),
                    ));
                }
            },
        };
        Ok(Qualifier {
            comparison_operator: operator.trim().to_string(),
            calculation_period: period,
            ma_type,
        })
    }

    fn spec(&self) -> QualifierSpec {
        QualifierSpec {
            operator: self.comparison_operator.clone(),
            period: self.calculation_period,
            ma_type: self.ma_type.clone(),
        }
    }
}

// ---- schemas of single values ----------------------------------------------

/// The operators of 2.6 a value rule takes (and `>=`, `<=`).
pub const MAIN_OPERATORS: [&str; 7] = [">", "<", "=", ">=", "<=", "CrossAbove", "CrossBelow"];
pub const CONSECUTIVE: [&str; 2] = ["Consecutive Days Above", "Consecutive Days Below"];
pub const EXTREMES: [&str; 2] = ["All-time High", "All-time Low"];
pub const QUALIFIERS: [&str; 7] = [
    "Rate Of Change",
    "% of Previous Range",
    "MA Ratio",
    "Range Rank",
    "DrawDown %",
    "DrawUp %",
    "Net Change",
];
pub const SYMBOL_COLUMNS: [&str; 5] = [
    "Symbol Open",
    "Symbol High",
    "Symbol Low",
    "Symbol Close",
    "Symbol Volume",
];

#[cfg(feature = "openapi")]
mod leaves {
    //! Leaf schemas the derived ones refer to by `schema_with`: enums of
    //! the spec's names (some built from the technical map), patterns.
    use super::*;
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    use utoipa::openapi::{Object, RefOr, Schema};

    fn strings<'a>(names: impl IntoIterator<Item = &'a str>) -> Object {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .enum_values(Some(names.into_iter().collect::<Vec<_>>()))
            .build()
    }

    macro_rules! one_name {
        ($($f:ident = $name:expr),+ $(,)?) => {
            $(pub fn $f() -> Object {
                strings([$name])
            })+
        };
    }
    one_name!(
        single_condition_tag = "SingleCondition",
        scoring_tag = "Scoring",
        time_order_tag = "TimeOrder",
        risk_control_only_tag = "RiskControlOnly",
        sentiment_kind = "Sentiment",
        symbol_kind = "Symbol",
        technical_kind = "Technical",
        sv = "SV",
        ma = "MA",
    );

    pub fn own_average() -> Object {
        strings(["SVMA", "SVEMA"])
    }
    pub fn main_operators() -> Object {
        strings(MAIN_OPERATORS)
    }
    pub fn consecutive_operators() -> Object {
        strings(CONSECUTIVE)
    }
    pub fn extreme_operators() -> Object {
        strings(EXTREMES)
    }
    pub fn qualifier_operators() -> Object {
        strings(QUALIFIERS)
    }
    pub fn ma_types() -> Object {
        strings(["S", "E"])
    }
    pub fn symbol_columns() -> Object {
        strings(SYMBOL_COLUMNS)
    }
    /// A field's schema with its description (`schema_with` takes no doc comment).
    fn described(mut o: Object, text: &str) -> Object {
        o.description = Some(text.to_string());
        o
    }
    pub fn direction_schema() -> Object {
        described(strings(["Long", "Short"]), "Default Long")
    }
    pub fn frequency_schema() -> Object {
        described(
            strings(["Daily", "Hourly", "Weekly", "Monthly"]),
            "Default Daily",
        )
    }

    fn technicals(keep: impl Fn(&signals::TechEntry) -> bool) -> Object {
        strings(
            signals::TECHNICALS
                .iter()
                .filter(|t| keep(t))
                .map(|t| t.name),
        )
    }
    pub fn periodic_technicals() -> Object {
        technicals(periodic)
    }
    pub fn fixed_technicals() -> Object {
        technicals(|t| !periodic(t))
    }
    pub fn average_technicals() -> Object {
        technicals(|t| t.average.is_some())
    }

    /// A number, as text.
    pub fn number_text() -> Object {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .pattern(Some(r"^-?[0-9]{1,6}(\.[0-9]{1,4})?$"))
            .description(Some("A number, as text"))
            .build()
    }

    pub fn trade_price_schema() -> Object {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Integer))
            .enum_values(Some([0, 1, 2]))
            .description(Some("0 next open, 1 next close, 2 current close (default)"))
            .build()
    }

    pub fn inert_schema() -> Object {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Integer))
            .enum_values(Some([0]))
            .description(Some(
                "Accepted for compatibility; other values are reported as ignored",
            ))
            .build()
    }

    pub fn description_schema() -> Object {
        let text: RefOr<Schema> = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .max_length(Some(2000))
            .into();
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .max_properties(Some(20))
            .additional_properties(Some(text))
            .description(Some(
                "Free-text entries such as Introduction and Rules, kept with the task",
            ))
            .build()
    }
}
#[cfg(feature = "openapi")]
use leaves::*;

#[cfg(all(test, feature = "openapi"))]
mod tests {
    use super::*;
    use serde_json::json;
    use utoipa::PartialSchema;

    fn schema_of<T: PartialSchema>() -> Value {
        serde_json::to_value(T::schema()).unwrap()
    }

    #[test]
    fn the_blocks_are_told_apart_by_rule_type_and_names_are_enumerated() {
        let entry = schema_of::<EntryBlock>();
        assert_eq!(entry["discriminator"]["propertyName"], "rule_type");
        assert_eq!(entry["oneOf"].as_array().unwrap().len(), 3);
        let exit = schema_of::<ExitBlock>();
        assert_eq!(
            exit["discriminator"]["mapping"]["RiskControlOnly"],
            "#/components/schemas/RiskControlOnlyBlock"
        );
        let scoring = schema_of::<ScoringBlock>();
        assert_eq!(
            scoring["properties"]["rule_type"]["enum"],
            json!(["Scoring"])
        );
        assert_eq!(scoring["additionalProperties"], json!(false));
        // Every technical name the schemas offer resolves, and each is in
        // exactly one of the periodic and fixed lists.
        let names = |v: Value| -> Vec<String> {
            serde_json::from_value(v["properties"]["name"]["enum"].clone()).unwrap()
        };
        let periodic = names(schema_of::<TechnicalSignal>());
        let fixed = names(schema_of::<FixedTechnicalSignal>());
        assert_eq!(periodic.len() + fixed.len(), signals::TECHNICALS.len());
        for n in periodic
            .iter()
            .chain(&fixed)
            .chain(&names(schema_of::<MovingAverageSignal>()))
        {
            assert!(signals::technical(n).is_some(), "{n}");
        }
        // What the schema requires, the reader requires.
        let value_rule = schema_of::<ValueRule>();
        assert_eq!(
            value_rule["required"],
            json!(["type_name", "comparison_value"])
        );
    }

    #[test]
    fn each_condition_takes_the_shape_of_its_comparison() {
        let read = |c: Value| StrategyCondition::read(&c, "condition", "entry.condition");
        let ma = json!({"signal": {"type": "Technical", "name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove"}});
        assert!(matches!(
            read(ma).unwrap(),
            StrategyCondition::MovingAverage(_)
        ));
        let qualified = json!({"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "<", "comparison_value": 30, "qualifier": {"comparison_operator": "Range Rank", "calculation_period": "252"}}});
        let StrategyCondition::Qualified(q) = read(qualified).unwrap() else {
            panic!("a qualified condition");
        };
        assert_eq!(
            (q.qualifier.calculation_period, q.qualifier.ma_type.as_str()),
            (252, "S")
        );
        let plain = json!({"signal": {"type": "Symbol", "name": "Symbol Close"}, "rule": {"type_name": "All-time High"}});
        let StrategyCondition::Signal(c) = read(plain).unwrap() else {
            panic!("a plain condition");
        };
        assert!(matches!(c.signal, AnySignal::Symbol(_)) && matches!(c.rule, Rule::Extreme(_)));
        let e = read(json!({"signal": {"name": "X"}, "rule": {"type_nam": ">"}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter 'condition.rule.type_nam': unknown field (did you mean 'type_name'?)"
        );
        let e = read(json!({"signal": "X", "rule": {"type_name": ">"}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter 'condition.signal': expected an object, got string \"X\""
        );
    }
}
