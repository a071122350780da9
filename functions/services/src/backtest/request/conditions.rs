//! Conditions (2.3-2.7): one type per kind of comparison, with their
//! signals, rules and qualifier, and the raw forms they are read from.

use super::*;

/// A condition as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCondition {
    pub(super) signal: RawSignal,
    pub(super) rule: RawRule,
    pub(super) qualifier: Option<RawQualifier>,
}

/// A signal as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSignal {
    #[serde(rename = "type")]
    pub(super) kind: Option<Loose>,
    pub(super) name: Loose,
    pub(super) params: Option<RawSignalParams>,
}

/// A signal's parameters as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSignalParams {
    pub(super) extreme_optimism: Option<Loose>,
    pub(super) extreme_pessimism: Option<Loose>,
    pub(super) period: Option<Loose>,
}

/// A rule as sent, with a qualifier written inside it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRule {
    pub(super) comparison_type: Option<Loose>,
    pub(super) type_name: Loose,
    pub(super) comparison_value: Option<Loose>,
    pub(super) period: Option<Loose>,
    pub(super) qualifier: Option<RawQualifier>,
}

/// A qualifier as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQualifier {
    pub(super) comparison_operator: Loose,
    pub(super) calculation_period: Loose,
    pub(super) ma_type: Option<Loose>,
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
    pub(super) fn read(v: &Value, at: &str, path: &str) -> Result<StrategyCondition> {
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
