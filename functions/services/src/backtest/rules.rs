//! Rule blocks (2.3-2.7): entry and exit rules with their conditions, signals
//! and qualifiers, in every spelling the spec shows.

use super::params::{FieldError, Result, count, known_fields, number, object, text};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleType {
    SingleCondition,
    Scoring,
    TimeOrder,
    RiskControlOnly,
}

impl RuleType {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleType::SingleCondition => "SingleCondition",
            RuleType::Scoring => "Scoring",
            RuleType::TimeOrder => "TimeOrder",
            RuleType::RiskControlOnly => "RiskControlOnly",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SignalRef {
    pub kind: Option<String>,
    pub name: String,
    pub extreme_optimism: Option<f64>,
    pub extreme_pessimism: Option<f64>,
    /// `params.period`: a Technical indicator's own period.
    pub period: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RuleSpec {
    /// `SV`, `SVMA`, `SVEMA` or `MA`.
    pub comparison_type: String,
    pub type_name: String,
    /// As written by the caller (kept for the encoding).
    pub comparison_value: Option<String>,
    pub period: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct QualifierSpec {
    pub operator: String,
    pub period: usize,
    /// `S` or `E`.
    pub ma_type: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConditionSpec {
    /// Path of the condition in the request, for error messages.
    pub path: String,
    pub signal: SignalRef,
    pub rule: RuleSpec,
    pub qualifier: Option<QualifierSpec>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RuleBlock {
    pub rule_type: RuleType,
    pub delay_bars: usize,
    pub conditions: Vec<ConditionSpec>,
    pub score_threshold: Option<usize>,
    pub signals_in_market: usize,
}

fn parse_signal(v: &Value, path: &str) -> Result<SignalRef> {
    let o = object(v, path)?;
    known_fields(o, path, &["type", "name", "params"])?;
    let name = o
        .get("name")
        .ok_or_else(|| FieldError::new(format!("{path}.name"), "is required"))?;
    let name = text(name, &format!("{path}.name"))?.trim().to_string();
    if name.is_empty() {
        return Err(FieldError::new(format!("{path}.name"), "must not be empty"));
    }
    let kind = o
        .get("type")
        .filter(|t| !t.is_null())
        .map(|t| text(t, &format!("{path}.type")))
        .transpose()?;
    let (mut eo, mut ep, mut period) = (None, None, None);
    if let Some(p) = o.get("params").filter(|p| !p.is_null()) {
        let p = object(p, &format!("{path}.params"))?;
        known_fields(
            p,
            &format!("{path}.params"),
            &["extreme_optimism", "extreme_pessimism", "period"],
        )?;
        eo = p
            .get("extreme_optimism")
            .map(|x| number(x, &format!("{path}.params.extreme_optimism")))
            .transpose()?;
        ep = p
            .get("extreme_pessimism")
            .map(|x| number(x, &format!("{path}.params.extreme_pessimism")))
            .transpose()?;
        let at = format!("{path}.params.period");
        period = p
            .get("period")
            .filter(|x| !x.is_null())
            .map(|x| count(x, &at))
            .transpose()?;
        if period == Some(0) {
            return Err(FieldError::new(at, "must be at least 1"));
        }
    }
    Ok(SignalRef {
        kind,
        name,
        extreme_optimism: eo,
        extreme_pessimism: ep,
        period,
    })
}

fn parse_qualifier(v: &Value, path: &str) -> Result<QualifierSpec> {
    let o = object(v, path)?;
    known_fields(
        o,
        path,
        &["comparison_operator", "calculation_period", "ma_type"],
    )?;
    let operator = text(
        o.get("comparison_operator")
            .ok_or_else(|| FieldError::new(format!("{path}.comparison_operator"), "is required"))?,
        &format!("{path}.comparison_operator"),
    )?;
    let period = count(
        o.get("calculation_period")
            .ok_or_else(|| FieldError::new(format!("{path}.calculation_period"), "is required"))?,
        &format!("{path}.calculation_period"),
    )?;
    if period == 0 {
        return Err(FieldError::new(
            format!("{path}.calculation_period"),
            "must be at least 1",
        ));
    }
    let ma_type = match o.get("ma_type").filter(|m| !m.is_null()) {
        None => "S".to_string(),
        Some(m) => match text(m, &format!("{path}.ma_type"))?
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
    Ok(QualifierSpec {
        operator: operator.trim().to_string(),
        period,
        ma_type,
    })
}

fn parse_condition(v: &Value, path: &str) -> Result<ConditionSpec> {
    let o = object(v, path)?;
    known_fields(o, path, &["signal", "rule", "qualifier"])?;
    let signal = parse_signal(
        o.get("signal")
            .ok_or_else(|| FieldError::new(format!("{path}.signal"), "is required"))?,
        &format!("{path}.signal"),
    )?;
    let rp = format!("{path}.rule");
    let r = object(
        o.get("rule")
            .ok_or_else(|| FieldError::new(&rp, "is required"))?,
        &rp,
    )?;
    known_fields(
        r,
        &rp,
        &[
            "comparison_type",
            "type_name",
            "comparison_value",
            "period",
            "qualifier",
        ],
    )?;
    let comparison_type = match r.get("comparison_type").filter(|x| !x.is_null()) {
        None => "SV".to_string(),
        Some(x) => {
            let t = text(x, &format!("{rp}.comparison_type"))?
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
    let type_name = text(
        r.get("type_name")
            .ok_or_else(|| FieldError::new(format!("{rp}.type_name"), "is required"))?,
        &format!("{rp}.type_name"),
    )?
    .trim()
    .to_string();
    let comparison_value = r
        .get("comparison_value")
        .filter(|x| !x.is_null())
        .map(|x| text(x, &format!("{rp}.comparison_value")))
        .transpose()?;
    if let Some(cv) = &comparison_value
        && !cv.trim().is_empty()
    {
        number(
            &Value::String(cv.clone()),
            &format!("{rp}.comparison_value"),
        )?;
    }
    let period = r
        .get("period")
        .filter(|x| !x.is_null() && x.as_str() != Some(""))
        .map(|x| count(x, &format!("{rp}.period")))
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
    // The qualifier sits beside the rule, or (in one example) inside it.
    let qualifier = match (
        o.get("qualifier").filter(|q| !q.is_null()),
        r.get("qualifier").filter(|q| !q.is_null()),
    ) {
        (Some(q), _) => Some(parse_qualifier(q, &format!("{path}.qualifier"))?),
        (None, Some(q)) => Some(parse_qualifier(q, &format!("{rp}.qualifier"))?),
        (None, None) => None,
    };
    Ok(ConditionSpec {
        path: path.to_string(),
        signal,
        rule: RuleSpec {
            comparison_type,
            type_name,
            comparison_value,
            period,
        },
        qualifier,
    })
}

/// Conditions one rule block may hold: each is a signal computed over the
/// whole history, so the count bounds a backtest's work and memory.
pub const MAX_CONDITIONS: usize = 50;

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

pub(super) fn parse_block(v: &Value, side: &str) -> Result<RuleBlock> {
    let o = object(v, side)?;
    let rt_path = format!("{side}.rule_type");
    let rule_type = match text(
        o.get("rule_type")
            .ok_or_else(|| FieldError::new(&rt_path, "is required"))?,
        &rt_path,
    )?
    .trim()
    {
        "SingleCondition" => RuleType::SingleCondition,
        "Scoring" => RuleType::Scoring,
        "TimeOrder" => RuleType::TimeOrder,
        "RiskControlOnly" => RuleType::RiskControlOnly,
        other => {
            return Err(FieldError::new(
                rt_path,
                format!("'{other}' is not SingleCondition, Scoring, TimeOrder or RiskControlOnly"),
            ));
        }
    };
    if rule_type == RuleType::TimeOrder && o.get("condition").and_then(|c| c.get("steps")).is_some()
    {
        return Err(FieldError::new(
            format!("{side}.condition.steps"),
            "TimeOrder steps go directly on the block as 'steps', not under 'condition'",
        ));
    }
    known_fields(o, side, block_fields(rule_type))?;
    let delay_bars = o
        .get("delay_bars")
        .filter(|d| !d.is_null())
        .map(|d| count(d, &format!("{side}.delay_bars")))
        .transpose()?
        .unwrap_or(0);
    let signals_in_market = o
        .get("signals_in_market")
        .filter(|d| !d.is_null())
        .map(|d| count(d, &format!("{side}.signals_in_market")))
        .transpose()?
        .unwrap_or(100_000);
    let score_threshold = o
        .get("score_threshold")
        .filter(|d| !d.is_null())
        .map(|d| count(d, &format!("{side}.score_threshold")))
        .transpose()?;
    let list = |v: &Value, path: &str| -> Result<Vec<ConditionSpec>> {
        let items = v
            .as_array()
            .ok_or_else(|| FieldError::new(path, "expected an array of conditions"))?;
        if items.is_empty() {
            return Err(FieldError::new(path, "needs at least one condition"));
        }
        if items.len() > MAX_CONDITIONS {
            return Err(FieldError::new(
                path,
                format!("has {} conditions; at most {MAX_CONDITIONS}", items.len()),
            ));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, c)| parse_condition(c, &format!("{path}[{i}]")))
            .collect()
    };
    let conditions = match rule_type {
        RuleType::SingleCondition => {
            let c = o.get("condition").ok_or_else(|| {
                FieldError::new(
                    format!("{side}.condition"),
                    "is required for SingleCondition",
                )
            })?;
            if c.is_array() {
                return Err(FieldError::new(
                    format!("{side}.condition"),
                    "must be one object for SingleCondition (use Scoring for several)",
                ));
            }
            vec![parse_condition(c, &format!("{side}.condition"))?]
        }
        RuleType::Scoring => {
            let (key, c) = match (o.get("condition"), o.get("voters")) {
                (Some(c), _) => ("condition", c),
                (None, Some(v)) => ("voters", v),
                (None, None) => {
                    return Err(FieldError::new(
                        format!("{side}.condition"),
                        "is required for Scoring (an array of {signal, rule})",
                    ));
                }
            };
            if c.is_object() {
                return Err(FieldError::new(
                    format!("{side}.{key}"),
                    "must be an array for Scoring, not one object",
                ));
            }
            list(c, &format!("{side}.{key}"))?
        }
        RuleType::TimeOrder => {
            let steps = o.get("steps").ok_or_else(|| {
                FieldError::new(format!("{side}.steps"), "is required for TimeOrder")
            })?;
            list(steps, &format!("{side}.steps"))?
        }
        RuleType::RiskControlOnly => {
            if side == "entry" {
                return Err(FieldError::new(
                    rt_path,
                    "RiskControlOnly is for the exit only",
                ));
            }
            Vec::new()
        }
    };
    if rule_type == RuleType::Scoring {
        let t = score_threshold.unwrap_or(conditions.len());
        if t == 0 || t > conditions.len() {
            return Err(FieldError::new(
                format!("{side}.score_threshold"),
                format!(
                    "must be between 1 and the number of conditions ({})",
                    conditions.len()
                ),
            ));
        }
    }
    Ok(RuleBlock {
        rule_type,
        delay_bars,
        conditions,
        score_threshold,
        signals_in_market,
    })
}
