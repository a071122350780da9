//! The schemas of the answers written straight from the series columns
//! (`history`, `intraday`), described once here beside their writers and
//! checked against what is served by tests/schemathesis.

use serde_json::json;
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

fn schema(value: serde_json::Value) -> RefOr<Schema> {
    RefOr::T(serde_json::from_value(value).expect("a valid schema literal"))
}

const NUMBER_OR_NULL: [&str; 2] = ["number", "null"];

/// An object of `required` and other `properties`.
fn record(required: &[&str], properties: serde_json::Value) -> serde_json::Value {
    let mut r = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        r["required"] = json!(required);
    }
    r
}

/// An object whose every value is `value`.
fn keyed(value: serde_json::Value) -> serde_json::Value {
    json!({"type": "object", "additionalProperties": value})
}

/// Declares a column-written answer's schema under its name.
macro_rules! described {
    ($(#[$doc:meta])* $name:ident, $literal:expr) => {
        $(#[$doc])*
        pub struct $name;
        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                schema($literal)
            }
        }
        impl ToSchema for $name {}
    };
}

described!(
    /// Records keyed `YYYY-MM-DDTHH:MM:SS.000`: `close` (with `sentiment` and
    /// `market_symbol` where the operation adds them), or for seasonality-month
    /// indicators `symbol`, `month`, `TotReturn`, `AvgReturn`, `std`.
    History,
    keyed(record(&[], json!({
        "close": {"type": NUMBER_OR_NULL},
        "sentiment": {"type": NUMBER_OR_NULL},
        "market_symbol": {"type": "string"},
        "symbol": {"type": "string"},
        "month": {"type": "string"},
        "TotReturn": {"type": NUMBER_OR_NULL},
        "AvgReturn": {"type": NUMBER_OR_NULL},
        "std": {"type": NUMBER_OR_NULL}
    })))
);

described!(
    /// The latest reading of each subscribed indicator, keyed "0", "1", ...
    Snapshot,
    keyed(record(&["name", "indicator", "last_close", "update_date", "sentiment_value"], json!({
        "name": {"type": "string"},
        "indicator": {"type": "string"},
        "last_close": {"type": NUMBER_OR_NULL},
        "update_date": {"type": "string"},
        "sentiment_value": {"type": "string", "description": "Empty when the reading has none"},
        "market_symbol": {"type": "string"}
    })))
);

described!(
    /// Each subscribed indicator's reading on the date, keyed by code.
    DateSnapshot,
    keyed(record(&["name", "last_close", "update_date", "sentiment_value"], json!({
        "name": {"type": "string"},
        "last_close": {"type": NUMBER_OR_NULL},
        "update_date": {"type": "string", "format": "date"},
        "sentiment_value": {"type": NUMBER_OR_NULL}
    })))
);

described!(
    /// Each subscribed indicator's recent readings, keyed by code.
    Bulk,
    json!({
        "type": "object",
        "additionalProperties": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["date", "close"],
                "properties": {
                    "date": {"type": "string", "format": "date"},
                    "close": {"type": NUMBER_OR_NULL}
                }
            }
        }
    })
);

described!(
    /// Indicators with 30-minute series, keyed by chart name.
    IntradaySymbols,
    keyed(record(&["url", "market_symbol"], json!({"url": {"type": "string"}, "market_symbol": {"type": "string"}})))
);

described!(
    /// Every 30-minute reading of the latest date, keyed "0", "1", ...
    IntradayToday,
    keyed(record(&["datetime", "close", "symbol", "market_symbol"], json!({
        "datetime": {"type": "string"},
        "close": {"type": NUMBER_OR_NULL},
        "symbol": {"type": "string"},
        "market_symbol": {"type": "string"}
    })))
);

described!(
    /// One custom indicator's calculated series.
    CustomSeries,
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["DT", "close", "symbol"],
            "properties": {
                "DT": {"type": "string"},
                "close": {"type": NUMBER_OR_NULL},
                "symbol": {"type": "string"}
            }
        }
    })
);
