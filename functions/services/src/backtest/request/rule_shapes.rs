//! Rules (2.5, 2.6) and the qualifier (2.7): one shape per operator class.

use super::*;

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
    pub(super) fn from_raw(raw: RawRule, rp: &str) -> Result<(RuleData, Option<RawQualifier>)> {
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

    pub(super) fn spec(&self) -> RuleSpec {
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
    pub(super) fn of(r: RuleData) -> Rule {
        if matches!(r.comparison_type.as_str(), "SVMA" | "SVEMA") {
            return Rule::OwnAverage(rule_shape!(OwnAverageRule, r));
        }
        match signals::operator(&r.type_name) {
            Some((_, OpClass::Special(12 | 13))) => Rule::Extreme(rule_shape!(ExtremeRule, r)),
            Some((_, OpClass::Special(_))) => Rule::Consecutive(rule_shape!(ConsecutiveRule, r)),
            _ => Rule::Value(rule_shape!(ValueRule, r)),
        }
    }

    pub(super) fn data(&self) -> RuleData {
        match self {
            Rule::Value(r) => rule_data!(r),
            Rule::Consecutive(r) => rule_data!(r),
            Rule::Extreme(r) => rule_data!(r),
            Rule::OwnAverage(r) => rule_data!(r),
        }
    }
}

impl MovingAverageRule {
    pub(super) fn data(&self) -> RuleData {
        rule_data!(self)
    }
}

impl MovingAverageSignal {
    pub(super) fn data(&self) -> SignalData {
        signal_data!(self)
    }
}

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
    pub(super) fn from_raw(raw: RawQualifier, path: &str) -> Result<Qualifier> {
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

    pub(super) fn spec(&self) -> QualifierSpec {
        QualifierSpec {
            operator: self.comparison_operator.clone(),
            period: self.calculation_period,
            ma_type: self.ma_type.clone(),
        }
    }
}
