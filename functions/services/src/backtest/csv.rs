//! CSV mode rows (2.8): required Date, Open, High, Low, Close, Volume;
//! optional Entry1..5 / Exit1..5 (0 when missing); other columns dropped.

use super::params::{FieldError, Result, date, number, object};
use chrono::NaiveDate;
use serde_json::{Map, Value, json};

#[derive(Debug, Clone, PartialEq)]
pub struct CsvRow {
    pub date: NaiveDate,
    pub ohlcv: [f64; 5],
    /// Entry1..Entry5 then Exit1..Exit5; missing columns are 0.
    pub signals: [f64; 10],
}

/// CSV rows in the 16-column shape the worker receives (2.8): the six price
/// columns and Entry1..5/Exit1..5, other columns dropped.
pub fn csv_rows_json(rows: &[CsvRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                let mut o = Map::new();
                o.insert("Date".into(), json!(r.date.to_string()));
                for (k, col) in ["Open", "High", "Low", "Close", "Volume"]
                    .iter()
                    .enumerate()
                {
                    o.insert((*col).into(), json!(r.ohlcv[k]));
                }
                for (k, col) in SIGNAL_COLUMNS.iter().enumerate() {
                    o.insert((*col).into(), json!(r.signals[k]));
                }
                Value::Object(o)
            })
            .collect(),
    )
}

const SIGNAL_COLUMNS: [&str; 10] = [
    "Entry1", "Entry2", "Entry3", "Entry4", "Entry5", "Exit1", "Exit2", "Exit3", "Exit4", "Exit5",
];

/// CSV mode rows: required Date, Open, High, Low, Close, Volume; optional
/// Entry1..5 / Exit1..5 (0 when missing); other columns dropped.
pub(super) fn parse_csv(v: &Value) -> Result<Vec<CsvRow>> {
    let rows = v
        .as_array()
        .ok_or_else(|| FieldError::new("csv_data", "expected an array of row objects"))?;
    if rows.is_empty() {
        return Err(FieldError::new("csv_data", "needs at least one row"));
    }
    let mut out: Vec<CsvRow> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let path = format!("csv_data[{i}]");
        let o = object(row, &path)?;
        let get = |col: &str| -> Result<&Value> {
            o.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(col))
                .map(|(_, v)| v)
                .ok_or_else(|| FieldError::new(format!("{path}.{col}"), "is required"))
        };
        let d = date(get("Date")?, &format!("{path}.Date"))?;
        let mut ohlcv = [0.0; 5];
        for (k, col) in ["Open", "High", "Low", "Close", "Volume"]
            .iter()
            .enumerate()
        {
            ohlcv[k] = number(get(col)?, &format!("{path}.{col}"))?;
        }
        let [op, hi, lo, cl, vo] = ohlcv;
        if op <= 0.0 || hi <= 0.0 || lo <= 0.0 || cl <= 0.0 {
            return Err(FieldError::new(path, "prices must be positive"));
        }
        if hi < lo {
            return Err(FieldError::new(
                format!("{path}.High"),
                format!("High {hi} is below Low {lo}"),
            ));
        }
        if op > hi || op < lo || cl > hi || cl < lo {
            return Err(FieldError::new(
                path,
                format!("Open {op} and Close {cl} must lie within Low {lo} and High {hi}"),
            ));
        }
        if vo < 0.0 {
            return Err(FieldError::new(
                format!("{path}.Volume"),
                "must not be negative",
            ));
        }
        if let Some(prev) = out.last()
            && d <= prev.date
        {
            return Err(FieldError::new(
                format!("{path}.Date"),
                format!(
                    "{d} is not after the previous row's {}; rows must be in ascending date order",
                    prev.date
                ),
            ));
        }
        let mut signals = [0.0; 10];
        for (k, col) in SIGNAL_COLUMNS.iter().enumerate() {
            if let Some((_, v)) = o.iter().find(|(key, _)| key.eq_ignore_ascii_case(col))
                && !v.is_null()
            {
                signals[k] = number(v, &format!("{path}.{col}"))?;
            }
        }
        out.push(CsvRow {
            date: d,
            ohlcv,
            signals,
        });
    }
    Ok(out)
}
