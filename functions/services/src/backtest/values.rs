//! JSON values of a strategy request read as numbers, counts, text, dates
//! and objects, each error naming the field and quoting the value as sent.

use super::params::{FieldError, Result};
use chrono::NaiveDate;
use serde_json::Value;

/// The largest magnitude any number in a request may have: far beyond any
/// price, capital or threshold, and small enough that sums and products of a
/// few such numbers stay finite and integers stay exact in an f64.
pub const MAX_MAGNITUDE: f64 = 1e15;

/// The largest starting capital: keeps the compounded equity of any realistic
/// strategy finite.
pub const MAX_CAPITAL: f64 = 1e12;

/// The largest count (periods, delays, bar limits) a rule may give.
pub const MAX_COUNT: i64 = 1_000_000;

/// A finite number of at most [`MAX_MAGNITUDE`]; errors quote the value as sent.
pub(super) fn number(v: &Value, path: &str) -> Result<f64> {
    let x = match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| FieldError::new(path, format!("{n} is not a number")))?,
        Value::String(s) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| FieldError::new(path, format!("'{s}' is not a number")))?,
        other => {
            return Err(FieldError::new(
                path,
                format!("expected a number or a numeric string, got {other}"),
            ));
        }
    };
    if !x.is_finite() || x.abs() > MAX_MAGNITUDE {
        return Err(FieldError::new(
            path,
            format!("{} is out of range (at most 1e15 in magnitude)", sent(v)),
        ));
    }
    Ok(x)
}

/// A value as the client wrote it, for error messages.
pub(super) fn sent(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

pub(super) fn integer(v: &Value, path: &str) -> Result<i64> {
    let x = number(v, path)?;
    if x.fract() != 0.0 {
        return Err(FieldError::new(
            path,
            format!("{} is not a whole number", sent(v)),
        ));
    }
    // Exact: |x| <= MAX_MAGNITUDE < 2^53.
    Ok(x as i64)
}

pub(super) fn count(v: &Value, path: &str) -> Result<usize> {
    let x = integer(v, path)?;
    if x > MAX_COUNT {
        return Err(FieldError::new(
            path,
            format!("{} is too large (at most {MAX_COUNT})", sent(v)),
        ));
    }
    usize::try_from(x)
        .map_err(|_| FieldError::new(path, format!("{} must not be negative", sent(v))))
}

pub(super) fn text(v: &Value, path: &str) -> Result<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(FieldError::new(
            path,
            format!("expected a string, got {other}"),
        )),
    }
}

pub(super) fn date(v: &Value, path: &str) -> Result<NaiveDate> {
    let s = text(v, path)?;
    crate::dates::parse(&s).map_err(|why| FieldError::new(path, why))
}
