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

mod blocks;
mod conditions;
#[cfg(feature = "openapi")]
mod leaves;
mod rule_shapes;
mod signal_shapes;

pub use blocks::*;
pub use conditions::*;
pub use rule_shapes::*;
pub use signal_shapes::*;

use super::rules::{
    ConditionSpec, MAX_CONDITIONS, QualifierSpec, RuleBlock, RuleSpec, RuleType, SignalRef,
};
use super::signals::{self, OpClass};
use super::values::{count, number, text};
use crate::error::FieldError;
#[cfg(feature = "openapi")]
use leaves::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

type Result<T> = std::result::Result<T, FieldError>;

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
    /// Trade split-adjusted prices (true, the default) or prices as traded
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(required = false))]
    pub adjusted: Option<bool>,
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
