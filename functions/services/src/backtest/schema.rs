//! The documented schema of a strategy request (2.1-2.7). The request is
//! parsed by hand (`params`, `rules`, `signals`), because the service takes
//! every spelling the spec shows; this schema states the canonical form,
//! precisely enough that any request it admits is accepted: one shape per
//! rule type, the operators and qualifiers enumerated, the comparisons that
//! need a value or a period requiring it, qualifiers only where they apply.
//! Two things it cannot state are named in the descriptions: the symbol and
//! Sentiment signal names must exist in the data, and `end_date` is not
//! before `start_date`.

use super::signals::TECHNICALS;
use serde_json::{Value, json};
use utoipa::openapi::{RefOr, Schema};

/// The request body of `validate` and `start_backtest`.
pub struct StrategyParams;

const MAIN_OPERATORS: [&str; 7] = [">", "<", "=", ">=", "<=", "CrossAbove", "CrossBelow"];
pub(crate) const CONSECUTIVE: [&str; 2] = ["Consecutive Days Above", "Consecutive Days Below"];
pub(crate) const QUALIFIERS: [&str; 7] = [
    "Rate Of Change",
    "% of Previous Range",
    "MA Ratio",
    "Range Rank",
    "DrawDown %",
    "DrawUp %",
    "Net Change",
];
const SYMBOL_COLUMNS: [&str; 5] = [
    "Symbol Open",
    "Symbol High",
    "Symbol Low",
    "Symbol Close",
    "Symbol Volume",
];
/// Conditions per Scoring or TimeOrder block the schema admits.
const MAX_CONDITIONS: usize = 5;
/// Periods and counts the schema admits (the service takes up to 1,000,000).
const MAX_PERIOD: u32 = 1000;

fn number_text() -> Value {
    json!({"type": "string", "pattern": "^-?[0-9]{1,6}(\\.[0-9]{1,4})?$", "description": "A number, as text"})
}

fn period() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": MAX_PERIOD})
}

fn extremes() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "description": "Override the signal's extremes (Sentiment: the catalog's; Technical: 20/80)",
        "properties": {
            "extreme_optimism": {"type": "number", "minimum": -1e6, "maximum": 1e6},
            "extreme_pessimism": {"type": "number", "minimum": -1e6, "maximum": 1e6}
        }
    })
}

fn signal(kind: &str, names: Value, type_required: bool, params: &str) -> Value {
    let mut required = vec!["name"];
    if type_required {
        required.push("type");
    }
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": {
            "type": {"type": "string", "enum": [kind]},
            "name": names,
            "params": reference(params)
        }
    })
}

fn technical_names(filter: impl Fn(&super::signals::TechEntry) -> bool) -> Value {
    let names: Vec<&str> = TECHNICALS
        .iter()
        .filter(|t| filter(t))
        .map(|t| t.name)
        .collect();
    json!({"type": "string", "enum": names})
}

/// Indicators with one period a signal's `params.period` can set.
fn periodic(t: &super::signals::TechEntry) -> bool {
    t.indicator.with_period(1).is_some()
}

/// `{"$ref": ...}` to the component `name`.
fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn one_of(names: &[&str]) -> Value {
    json!({"oneOf": names.iter().map(|n| reference(n)).collect::<Vec<_>>()})
}

/// A rule block: one of `shapes`, told apart by `rule_type`.
fn block_union(shapes: &[(&str, &str)]) -> Value {
    let mapping: serde_json::Map<String, Value> = shapes
        .iter()
        .map(|(tag, name)| {
            (
                tag.to_string(),
                json!(format!("#/components/schemas/{name}")),
            )
        })
        .collect();
    let mut v = one_of(&shapes.iter().map(|(_, n)| *n).collect::<Vec<_>>());
    v["discriminator"] = json!({"propertyName": "rule_type", "mapping": mapping});
    v
}

/// Every named part of a strategy: each union member is a component of its
/// own with a title, so client generators name its model after it and keep
/// every member (rule blocks also carry a `rule_type` discriminator).
fn parts() -> Vec<(&'static str, Value)> {
    let value_rule = json!({
        "type": "object", "additionalProperties": false,
        "description": "The signal against a value",
        "required": ["type_name", "comparison_value"],
        "properties": {
            "comparison_type": {"type": "string", "enum": ["SV"]},
            "type_name": {"type": "string", "enum": MAIN_OPERATORS},
            "comparison_value": number_text()
        }
    });
    let consecutive_rule = json!({
        "type": "object", "additionalProperties": false,
        "description": "The signal above or below a value for `period` bars (default 3)",
        "required": ["type_name", "comparison_value"],
        "properties": {
            "comparison_type": {"type": "string", "enum": ["SV"]},
            "type_name": {"type": "string", "enum": CONSECUTIVE},
            "comparison_value": number_text(),
            "period": period()
        }
    });
    let extreme_rule = json!({
        "type": "object", "additionalProperties": false,
        "description": "The signal at its all-time high or low",
        "required": ["type_name"],
        "properties": {
            "comparison_type": {"type": "string", "enum": ["SV"]},
            "type_name": {"type": "string", "enum": ["All-time High", "All-time Low"]}
        }
    });
    let own_average_rule = json!({
        "type": "object", "additionalProperties": false,
        "description": "The signal against its own simple (SVMA) or exponential (SVEMA) average of `period` bars, offset by comparison_value percent",
        "required": ["comparison_type", "type_name", "period"],
        "properties": {
            "comparison_type": {"type": "string", "enum": ["SVMA", "SVEMA"]},
            "type_name": {"type": "string", "enum": MAIN_OPERATORS},
            "comparison_value": number_text(),
            "period": period()
        }
    });
    let moving_average_rule = json!({
        "type": "object", "additionalProperties": false,
        "description": "The close against the signal's moving average; with `period`, the signal's own average against one of `period` bars",
        "required": ["comparison_type", "type_name"],
        "properties": {
            "comparison_type": {"type": "string", "enum": ["MA"]},
            "type_name": {"type": "string", "enum": MAIN_OPERATORS},
            "comparison_value": number_text(),
            "period": period()
        }
    });
    let qualifier = json!({
        "type": "object", "additionalProperties": false,
        "description": "Transforms the signal before the comparison (Sentiment and Symbol signals only)",
        "required": ["comparison_operator", "calculation_period"],
        "properties": {
            "comparison_operator": {"type": "string", "enum": QUALIFIERS},
            "calculation_period": period(),
            "ma_type": {"type": "string", "enum": ["S", "E"]}
        }
    });
    let rules = one_of(&[
        "ValueRule",
        "ConsecutiveRule",
        "ExtremeRule",
        "OwnAverageRule",
    ]);
    let signal_condition = json!({
        "type": "object", "additionalProperties": false,
        "description": "A signal compared by a rule",
        "required": ["signal", "rule"],
        "properties": {
            "signal": one_of(&["SentimentSignal", "SymbolSignal", "TechnicalSignal", "FixedTechnicalSignal"]),
            "rule": rules
        }
    });
    let qualified_condition = json!({
        "type": "object", "additionalProperties": false,
        "description": "A Sentiment or Symbol signal, transformed by a qualifier, compared by a rule",
        "required": ["signal", "rule", "qualifier"],
        "properties": {
            "signal": one_of(&["SentimentSignal", "SymbolSignal"]),
            "rule": rules,
            "qualifier": reference("Qualifier")
        }
    });
    let moving_average_condition = json!({
        "type": "object", "additionalProperties": false,
        "description": "The close against a moving-average Technical signal; with the signal's own params.period and rule.period, that faster average against the slower one",
        "required": ["signal", "rule"],
        "properties": {
            "signal": reference("MovingAverageSignal"),
            "rule": reference("MovingAverageRule")
        }
    });
    let block_shape = |tag: &str, description: &str, required: &[&str], mut properties: Value| {
        properties["rule_type"] = json!({"type": "string", "enum": [tag]});
        let mut v = json!({
            "type": "object", "additionalProperties": false,
            "required": required,
            "properties": properties
        });
        if !description.is_empty() {
            v["description"] = json!(description);
        }
        v
    };
    let single = block_shape(
        "SingleCondition",
        "Fires when its one condition holds",
        &["rule_type", "condition"],
        json!({"condition": reference("StrategyCondition"), "delay_bars": delay()}),
    );
    let scoring = block_shape(
        "Scoring",
        "Fires when at least score_threshold (default all, at most the number of conditions) hold",
        &["rule_type", "condition"],
        json!({
            "condition": conditions(),
            "score_threshold": {"type": "integer", "minimum": 1, "maximum": MAX_CONDITIONS},
            "delay_bars": delay()
        }),
    );
    let time_order = block_shape(
        "TimeOrder",
        "Fires when the steps hold in order within signals_in_market bars",
        &["rule_type", "steps"],
        json!({
            "steps": conditions(),
            "signals_in_market": {"type": "integer", "minimum": 1, "maximum": 100000},
            "delay_bars": delay()
        }),
    );
    let risk_only = block_shape(
        "RiskControlOnly",
        "Exit by risk_control alone",
        &["rule_type"],
        json!({}),
    );
    let entry = [
        ("SingleCondition", "SingleConditionBlock"),
        ("Scoring", "ScoringBlock"),
        ("TimeOrder", "TimeOrderBlock"),
    ];
    let mut exit = entry.to_vec();
    exit.push(("RiskControlOnly", "RiskControlOnlyBlock"));
    let mut entry_block = block_union(&entry);
    entry_block["description"] = json!("When a position opens (2.3)");
    let mut exit_block = block_union(&exit);
    exit_block["description"] =
        json!("When a position closes (2.3); RiskControlOnly leaves it to risk_control");
    let mut extremes_period = extremes();
    extremes_period["description"] =
        json!("Override the signal's extremes (20/80) and set the indicator's own period");
    extremes_period["properties"]["period"] = period();
    vec![
        ("SignalExtremes", extremes()),
        ("SignalExtremesAndPeriod", extremes_period),
        (
            "SentimentSignal",
            signal(
                "Sentiment",
                json!({"type": "string", "minLength": 1, "maxLength": 200,
                       "description": "The chart name or code of an indicator of GET /backtest/indicators/list"}),
                false,
                "SignalExtremes",
            ),
        ),
        (
            "SymbolSignal",
            signal("Symbol", json!({"type": "string", "enum": SYMBOL_COLUMNS}), true, "SignalExtremes"),
        ),
        (
            "TechnicalSignal",
            signal("Technical", technical_names(periodic), true, "SignalExtremesAndPeriod"),
        ),
        (
            "FixedTechnicalSignal",
            signal("Technical", technical_names(|t| !periodic(t)), true, "SignalExtremes"),
        ),
        (
            "MovingAverageSignal",
            signal(
                "Technical",
                technical_names(|t| t.average.is_some()),
                true,
                "SignalExtremesAndPeriod",
            ),
        ),
        ("ValueRule", value_rule),
        ("ConsecutiveRule", consecutive_rule),
        ("ExtremeRule", extreme_rule),
        ("OwnAverageRule", own_average_rule),
        ("MovingAverageRule", moving_average_rule),
        ("Qualifier", qualifier),
        ("SignalCondition", signal_condition),
        ("QualifiedCondition", qualified_condition),
        ("MovingAverageCondition", moving_average_condition),
        ("StrategyCondition", condition()),
        ("SingleConditionBlock", single),
        ("ScoringBlock", scoring),
        ("TimeOrderBlock", time_order),
        ("RiskControlOnlyBlock", risk_only),
        ("EntryBlock", entry_block),
        ("ExitBlock", exit_block),
    ]
    .into_iter()
    .map(|(name, mut v)| {
        // utoipa's anyOf has no title; its name is the component's.
        if v.get("anyOf").is_none() {
            v["title"] = json!(name);
        }
        (name, v)
    })
    .collect()
}

/// One condition of a rule block.
fn condition() -> Value {
    json!({
        "description": "One condition of a rule block",
        // The most specific first: generators try the members in order.
        "anyOf": [reference("QualifiedCondition"), reference("MovingAverageCondition"), reference("SignalCondition")]
    })
}

fn delay() -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": MAX_PERIOD, "description": "Bars to wait after the rule fires"})
}

fn conditions() -> Value {
    json!({"type": "array", "items": reference("StrategyCondition"), "minItems": 1, "maxItems": MAX_CONDITIONS})
}

fn ticker(description: &str) -> Value {
    json!({"type": "string", "pattern": crate::analytics::TICKER_PATTERN, "description": description})
}

fn document() -> Value {
    let inert = json!({"type": "integer", "enum": [0], "description": "Accepted for compatibility; other values are reported as ignored"});
    json!({
        "type": "object",
        "additionalProperties": false,
        "description": "A strategy. Only symbol, entry and exit are required; numbers may also be sent as numeric text, a duplicate key's last value wins, and other spellings of the spec's examples are accepted (docs/backtest.md). CSV mode (csv_mode with csv_data rows) is described in docs/backtest.md.",
        "required": ["symbol", "entry", "exit"],
        "properties": {
            "symbol": ticker("The traded ticker; it must have daily prices"),
            "name": {"type": "string", "maxLength": 200},
            "description": {
                "type": "object", "maxProperties": 20,
                "additionalProperties": {"type": "string", "maxLength": 2000},
                "description": "Free-text entries such as Introduction and Rules, kept with the task"
            },
            "benchmark": ticker("Default SPX"),
            "direction": {"type": "string", "enum": ["Long", "Short"], "description": "Default Long"},
            "frequency": {"type": "string", "enum": ["Daily", "Hourly", "Weekly", "Monthly"], "description": "Default Daily"},
            "strategy": {"type": "string", "maxLength": 50, "description": "Default Single"},
            "model": {"type": "string", "maxLength": 50, "description": "Default cash"},
            "capital": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e12, "description": "Default 100000"},
            "capital_alloc": {"type": "string", "pattern": "^(0\\.[0-9]{0,5}[1-9]|1(\\.0{1,6})?)$", "description": "Fraction of equity per trade as text, above 0 and at most 1, default \"1.000000\" (a number is accepted too)"},
            "commission": {"type": "string", "pattern": "^0(\\.[0-4][0-9]{0,5})?$", "description": "Fraction of traded value per side as text, below 0.5, default \"0.0000\" (a number is accepted too)"},
            "slippage": {"type": "string", "pattern": "^0(\\.[0-4][0-9]{0,5})?$", "description": "Fraction of price per side as text, below 0.5, default \"0.0000\" (a number is accepted too)"},
            "start_date": {"type": "string", "format": "date", "description": "Default 1800-10-01"},
            "end_date": {"type": "string", "format": "date", "description": "Not before start_date; default the latest date in the data"},
            "trade_price": {"type": "integer", "enum": [0, 1, 2], "description": "0 next open, 1 next close, 2 current close (default)"},
            "risk_control": {
                "type": "string",
                "pattern": "^(-?([1-9][0-9]{0,2}(\\.[0-9]{1,2})?|0\\.[0-9]?[1-9]))?/([0-9]{1,3}(\\.[0-9]{1,2})?)?/([1-9][0-9]{0,3})?$",
                "description": "stop-loss %/take-profit %/max holding bars, each may be empty; default //21"
            },
            "exclude_oo": inert,
            "market_environment": inert,
            "index_moving_average_slope": inert,
            "opted": inert,
            "win_rate": {"type": "string", "pattern": "^0(\\.0{1,4})?$", "description": "Accepted for compatibility; other values are reported as ignored"},
            "entry": reference("EntryBlock"),
            "exit": reference("ExitBlock")
        },
        "example": {
            "symbol": "SPX", "start_date": "2005-01-01", "risk_control": "-8//63",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
            "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossAbove", "comparison_value": "70"}}}
        }
    })
}

impl utoipa::PartialSchema for StrategyParams {
    fn schema() -> RefOr<Schema> {
        RefOr::T(serde_json::from_value(document()).expect("a valid schema literal"))
    }
}

impl utoipa::ToSchema for StrategyParams {}

/// The named parts of a strategy (conditions, signals, rules, blocks) the
/// request's schema refers to: register them with the document's components.
pub fn components() -> Vec<(String, RefOr<Schema>)> {
    parts()
        .into_iter()
        .map(|(name, v)| {
            let schema = serde_json::from_value(v).expect("a valid schema literal");
            (name.to_string(), RefOr::T(schema))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths where two JSON values differ (numbers compared as f64).
    fn differences(a: &Value, b: &Value, at: &str) -> Vec<String> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut out = Vec::new();
                for k in x.keys().chain(y.keys()) {
                    match (x.get(k), y.get(k)) {
                        (Some(p), Some(q)) => out.extend(differences(p, q, &format!("{at}.{k}"))),
                        _ => out.push(format!("{at}.{k}")),
                    }
                }
                out.dedup();
                out
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
                .iter()
                .zip(y)
                .enumerate()
                .flat_map(|(i, (p, q))| differences(p, q, &format!("{at}[{i}]")))
                .collect(),
            (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => Vec::new(),
            _ if a == b => Vec::new(),
            _ => vec![format!("{at}: {a} != {b}")],
        }
    }

    #[test]
    fn the_literal_is_a_schema_unchanged_by_utoipa() {
        let RefOr::T(schema) = <StrategyParams as utoipa::PartialSchema>::schema() else {
            panic!("an inline schema");
        };
        // What the document serves is exactly the literal: no keyword lost or added.
        let served = serde_json::to_value(&schema).unwrap();
        let differs = differences(&served, &document(), "$");
        assert!(differs.is_empty(), "{differs:#?}");
        for ((name, literal), (named, schema)) in parts().into_iter().zip(components()) {
            assert_eq!(name, named);
            let served = serde_json::to_value(&schema).unwrap();
            let differs = differences(&served, &literal, name);
            assert!(differs.is_empty(), "{differs:#?}");
        }
        // Every technical name the schema offers resolves.
        for t in TECHNICALS {
            assert!(super::super::signals::technical(t.name).is_some());
        }
    }
}
