//! The encoded signals of 2.9 that validate returns (4.2 shape).

use super::params::RuleType;
use super::prepare::{Block, Prepared};
use serde_json::{Value, json};

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

fn block(b: &Block) -> Value {
    if b.rule_type == RuleType::RiskControlOnly {
        // RiskControlOnly encodes an always-false signal: operator 0, value 999999, EO 0.7, EP 0.3.
        return json!({
            "rule_type": b.rule_type.as_str(),
            "signals": [{"code": "SY:Symbol Close;IDS:EO0.7/EP0.3;SC:SV/0/999999", "signal_name": "Symbol Close"}],
            "cond": [{"newCondition": DEFAULT_COND.0, "conditionPeriod": DEFAULT_COND.1, "ma_type": DEFAULT_COND.2}],
        });
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
        signals.push(json!({
            "code": format!(
                "{}:{};IDS:EO{}/EP{};SC:{}/{}/{}",
                c.resolved.category.prefix(),
                c.resolved.name,
                num(c.resolved.optimism),
                num(c.resolved.pessimism),
                c.spec.rule.comparison_type,
                op,
                value
            ),
            "signal_name": c.resolved.name,
        }));
        let entry = match (&c.compiled.transform, c.spec.rule.comparison_type.as_str()) {
            (Some((code, _, period, ma)), _) => {
                json!({"newCondition": code, "conditionPeriod": period.to_string(), "ma_type": ma})
            }
            (None, "SVMA" | "SVEMA") => json!({
                "newCondition": 7,
                "conditionPeriod": c.spec.rule.period.map(|p| p.to_string()).unwrap_or_default(),
                "ma_type": if c.spec.rule.comparison_type == "SVMA" { "S" } else { "E" },
            }),
            _ => {
                json!({"newCondition": DEFAULT_COND.0, "conditionPeriod": DEFAULT_COND.1, "ma_type": DEFAULT_COND.2})
            }
        };
        cond.push(entry);
    }
    json!({ "rule_type": b.rule_type.as_str(), "signals": signals, "cond": cond })
}

/// The validate response of 4.2.
pub fn validate_response(p: &Prepared) -> Value {
    json!({
        "status": "valid",
        "user_supplied": p.parsed.user_supplied,
        "defaults_applied": p.defaults_applied(),
        "entry": block(&p.entry),
        "exit": block(&p.exit),
        "warnings": p.warnings,
    })
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
