//! Rule blocks (2.3): one type per rule type, told apart by `rule_type`.

use super::*;

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
