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

/// One condition of a rule block; a component of its own because every
/// block shape refers to it. Register it with the document's components.
pub struct StrategyCondition;

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

/// Extremes and the indicator's own period (Technical indicators with one).
fn extremes_and_period() -> Value {
    let mut v = extremes();
    v["description"] =
        json!("Override the signal's extremes (20/80) and set the indicator's own period");
    v["properties"]["period"] = period();
    v
}

fn signal(kind: &str, names: Value, type_required: bool) -> Value {
    signal_with(kind, names, type_required, extremes())
}

fn signal_with(kind: &str, names: Value, type_required: bool, params: Value) -> Value {
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
            "params": params
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

fn sentiment_signal() -> Value {
    signal(
        "Sentiment",
        json!({"type": "string", "minLength": 1, "maxLength": 200,
               "description": "The chart name or code of an indicator of GET /backtest/indicators/list"}),
        false,
    )
}

fn symbol_signal() -> Value {
    signal(
        "Symbol",
        json!({"type": "string", "enum": SYMBOL_COLUMNS}),
        true,
    )
}

fn technical_signal() -> Value {
    json!({"oneOf": [
        signal_with("Technical", technical_names(periodic), true, extremes_and_period()),
        signal("Technical", technical_names(|t| !periodic(t)), true),
    ]})
}

/// Indicators with one period a signal's `params.period` can set.
fn periodic(t: &super::signals::TechEntry) -> bool {
    t.indicator.with_period(1).is_some()
}

/// Rules other than `MA`: a value comparison, an all-time extreme, or a
/// comparison with the signal's own moving average.
fn rule() -> Value {
    json!({"oneOf": [
        {
            "type": "object", "additionalProperties": false,
            "description": "The signal against a value",
            "required": ["type_name", "comparison_value"],
            "properties": {
                "comparison_type": {"type": "string", "enum": ["SV"]},
                "type_name": {"type": "string", "enum": MAIN_OPERATORS},
                "comparison_value": number_text()
            }
        },
        {
            "type": "object", "additionalProperties": false,
            "description": "The signal above or below a value for `period` bars (default 3)",
            "required": ["type_name", "comparison_value"],
            "properties": {
                "comparison_type": {"type": "string", "enum": ["SV"]},
                "type_name": {"type": "string", "enum": CONSECUTIVE},
                "comparison_value": number_text(),
                "period": period()
            }
        },
        {
            "type": "object", "additionalProperties": false,
            "description": "The signal at its all-time high or low",
            "required": ["type_name"],
            "properties": {
                "comparison_type": {"type": "string", "enum": ["SV"]},
                "type_name": {"type": "string", "enum": ["All-time High", "All-time Low"]}
            }
        },
        {
            "type": "object", "additionalProperties": false,
            "description": "The signal against its own simple (SVMA) or exponential (SVEMA) average of `period` bars, offset by comparison_value percent",
            "required": ["comparison_type", "type_name", "period"],
            "properties": {
                "comparison_type": {"type": "string", "enum": ["SVMA", "SVEMA"]},
                "type_name": {"type": "string", "enum": MAIN_OPERATORS},
                "comparison_value": number_text(),
                "period": period()
            }
        }
    ]})
}

fn qualifier() -> Value {
    json!({
        "type": "object", "additionalProperties": false,
        "description": "Transforms the signal before the comparison (Sentiment and Symbol signals only)",
        "required": ["comparison_operator", "calculation_period"],
        "properties": {
            "comparison_operator": {"type": "string", "enum": QUALIFIERS},
            "calculation_period": period(),
            "ma_type": {"type": "string", "enum": ["S", "E"]}
        }
    })
}

fn condition() -> Value {
    json!({"anyOf": [
        {
            "type": "object", "additionalProperties": false,
            "required": ["signal", "rule"],
            "properties": {
                "signal": {"oneOf": [sentiment_signal(), symbol_signal(), technical_signal()]},
                "rule": rule()
            }
        },
        {
            "type": "object", "additionalProperties": false,
            "required": ["signal", "rule", "qualifier"],
            "properties": {
                "signal": {"oneOf": [sentiment_signal(), symbol_signal()]},
                "rule": rule(),
                "qualifier": qualifier()
            }
        },
        {
            "type": "object", "additionalProperties": false,
            "description": "The close against a moving-average Technical signal; with the signal's own params.period and rule.period, that faster average against the slower one",
            "required": ["signal", "rule"],
            "properties": {
                "signal": signal_with("Technical", technical_names(|t| t.average.is_some()), true, extremes_and_period()),
                "rule": {
                    "type": "object", "additionalProperties": false,
                    "required": ["comparison_type", "type_name"],
                    "properties": {
                        "comparison_type": {"type": "string", "enum": ["MA"]},
                        "type_name": {"type": "string", "enum": MAIN_OPERATORS},
                        "comparison_value": number_text(),
                        "period": period()
                    }
                }
            }
        }
    ]})
}

fn delay() -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": MAX_PERIOD, "description": "Bars to wait after the rule fires"})
}

/// Where the document keeps [`StrategyCondition`].
const CONDITION_REF: &str = "#/components/schemas/StrategyCondition";

fn conditions() -> Value {
    json!({"type": "array", "items": {"$ref": CONDITION_REF}, "minItems": 1, "maxItems": MAX_CONDITIONS})
}

fn block(exit: bool) -> Value {
    let mut shapes = vec![
        json!({
            "type": "object", "additionalProperties": false,
            "required": ["rule_type", "condition"],
            "properties": {"rule_type": {"type": "string", "enum": ["SingleCondition"]}, "condition": {"$ref": CONDITION_REF}, "delay_bars": delay()}
        }),
        json!({
            "type": "object", "additionalProperties": false,
            "description": "Fires when at least score_threshold (default all, at most the number of conditions) hold",
            "required": ["rule_type", "condition"],
            "properties": {
                "rule_type": {"type": "string", "enum": ["Scoring"]},
                "condition": conditions(),
                "score_threshold": {"type": "integer", "minimum": 1, "maximum": MAX_CONDITIONS},
                "delay_bars": delay()
            }
        }),
        json!({
            "type": "object", "additionalProperties": false,
            "description": "Fires when the steps hold in order within signals_in_market bars",
            "required": ["rule_type", "steps"],
            "properties": {
                "rule_type": {"type": "string", "enum": ["TimeOrder"]},
                "steps": conditions(),
                "signals_in_market": {"type": "integer", "minimum": 1, "maximum": 100000},
                "delay_bars": delay()
            }
        }),
    ];
    if exit {
        shapes.push(json!({
            "type": "object", "additionalProperties": false,
            "description": "Exit by risk_control alone",
            "required": ["rule_type"],
            "properties": {"rule_type": {"type": "string", "enum": ["RiskControlOnly"]}}
        }));
    }
    json!({"oneOf": shapes})
}

fn ticker(description: &str) -> Value {
    json!({"type": "string", "pattern": crate::analytics::TICKER_PATTERN, "description": description})
}

fn document() -> Value {
    let inert = json!({"type": "number", "enum": [0], "description": "Accepted for compatibility; other values are reported as ignored"});
    json!({
        "type": "object",
        "additionalProperties": false,
        "description": "A strategy. Only symbol, entry and exit are required; numbers may also be sent as numeric text, a duplicate key's last value wins, and other spellings of the spec's examples are accepted (docs/backtest.md). CSV mode (csv_mode with csv_data rows) is described in docs/backtest.md.",
        "required": ["symbol", "entry", "exit"],
        "properties": {
            "symbol": ticker("The traded ticker; it must have daily prices"),
            "name": {"type": "string", "maxLength": 200},
            "description": {"type": "string", "maxLength": 2000},
            "benchmark": ticker("Default SPX"),
            "direction": {"type": "string", "enum": ["Long", "Short"], "description": "Default Long"},
            "frequency": {"type": "string", "enum": ["Daily", "Hourly", "Weekly", "Monthly"], "description": "Default Daily"},
            "strategy": {"type": "string", "maxLength": 50, "description": "Default Single"},
            "model": {"type": "string", "maxLength": 50, "description": "Default cash"},
            "capital": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e12, "description": "Default 100000"},
            "capital_alloc": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "Fraction of equity per trade, default 1"},
            "commission": {"type": "number", "minimum": 0, "exclusiveMaximum": 0.5, "description": "Fraction of traded value per side, default 0"},
            "slippage": {"type": "number", "minimum": 0, "exclusiveMaximum": 0.5, "description": "Fraction of price per side, default 0"},
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
            "win_rate": inert,
            "entry": block(false),
            "exit": block(true)
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

impl utoipa::PartialSchema for StrategyCondition {
    fn schema() -> RefOr<Schema> {
        RefOr::T(serde_json::from_value(condition()).expect("a valid schema literal"))
    }
}

impl utoipa::ToSchema for StrategyCondition {}

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
        let RefOr::T(schema) = <StrategyCondition as utoipa::PartialSchema>::schema() else {
            panic!("an inline schema");
        };
        let served = serde_json::to_value(&schema).unwrap();
        let differs = differences(&served, &condition(), "$");
        assert!(differs.is_empty(), "{differs:#?}");
        // Every technical name the schema offers resolves.
        for t in TECHNICALS {
            assert!(super::super::signals::technical(t.name).is_some());
        }
    }
}
