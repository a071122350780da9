//! The encoded signals of 2.9 that validate returns (4.2 shape).

use super::answers::{EncodedBlock, EncodedCondition, EncodedSignal, ValidateResponse};
use super::params::RuleType;
use super::prepare::{Block, Prepared};

/// Numbers as the encoding writes them: integers without a decimal point.
pub fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The default condition entry when a condition has no qualifier.
const DEFAULT_COND: (u8, &str, &str) = (3, "21", "S");

fn default_cond() -> EncodedCondition {
    EncodedCondition {
        newCondition: DEFAULT_COND.0,
        conditionPeriod: DEFAULT_COND.1.into(),
        ma_type: DEFAULT_COND.2.into(),
    }
}

fn block(b: &Block) -> EncodedBlock {
    if b.rule_type == RuleType::RiskControlOnly {
        // RiskControlOnly encodes an always-false signal: operator 0, value 999999, EO 0.7, EP 0.3.
        return EncodedBlock {
            rule_type: b.rule_type.as_str(),
            signals: vec![EncodedSignal {
                code: "SY:Symbol Close;IDS:EO0.7/EP0.3;SC:SV/0/999999".into(),
                signal_name: "Symbol Close".into(),
            }],
            cond: vec![default_cond()],
        };
    }
    let mut signals = Vec::new();
    let mut cond = Vec::new();
    for c in &b.conditions {
        let op = match c.compiled.op_code {
            Some(code) => code.to_string(),
            None => c.spec.rule.type_name.trim().to_string(),
        };
        let value = c
            .spec
            .rule
            .comparison_value
            .as_deref()
            .map(str::trim)
            .unwrap_or("");
        signals.push(EncodedSignal {
            code: format!(
                "{}:{}{};IDS:EO{}/EP{};SC:{}/{}/{}",
                c.resolved.category.prefix(),
                c.resolved.name,
                // The spec's form with parameters inside the name segment.
                c.spec
                    .signal
                    .period
                    .map(|p| format!("=period={p}"))
                    .unwrap_or_default(),
                num(c.resolved.optimism),
                num(c.resolved.pessimism),
                c.spec.rule.comparison_type,
                op,
                value
            ),
            signal_name: c.resolved.name.clone(),
        });
        let entry = match (&c.compiled.transform, c.spec.rule.comparison_type.as_str()) {
            (Some((code, _, period, ma)), _) => EncodedCondition {
                newCondition: *code,
                conditionPeriod: period.to_string(),
                ma_type: ma.clone(),
            },
            (None, "SVMA" | "SVEMA") => EncodedCondition {
                newCondition: 7,
                conditionPeriod: c
                    .spec
                    .rule
                    .period
                    .map(|p| p.to_string())
                    .unwrap_or_default(),
                ma_type: if c.spec.rule.comparison_type == "SVMA" {
                    "S"
                } else {
                    "E"
                }
                .into(),
            },
            _ => default_cond(),
        };
        cond.push(entry);
    }
    EncodedBlock {
        rule_type: b.rule_type.as_str(),
        signals,
        cond,
    }
}

/// The validate response of 4.2.
pub fn validate_response(p: &Prepared) -> ValidateResponse {
    ValidateResponse {
        status: "valid",
        user_supplied: p.parsed.user_supplied.clone(),
        defaults_applied: p.defaults_applied(),
        entry: block(&p.entry),
        exit: block(&p.exit),
        warnings: p.warnings.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::num;

    #[test]
    fn numbers_print_like_the_spec() {
        assert_eq!(num(75.0), "75");
        assert_eq!(num(0.7), "0.7");
        assert_eq!(num(-5.0), "-5");
    }
}
