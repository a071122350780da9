//! A reference table from CSV (a header row, comma-separated) or Parquet,
//! with the columns of docs/data-layout.md (`schema::TABLES`): every column
//! present (any order; others are ignored), each value of its column's type
//! or empty. The table replaces the served one whole.

use super::ImportError;
use crate::schema::{Columns, TABLES};
use crate::table::{Kind, TableBuilder, V};
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use bytes::Bytes;
use chrono::{NaiveDate, NaiveDateTime};
use platform::marketdata::codec::{days_to_date, from_parquet};

/// The columns of a served table, or `None` for a name that is not served.
pub fn columns(table: &str) -> Option<Columns> {
    TABLES.iter().find(|(n, _)| *n == table).map(|(_, c)| *c)
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Str => "text",
        Kind::F64 => "a number",
        Kind::I64 => "a whole number",
        Kind::Date => "a date YYYY-MM-DD",
        Kind::Time => "a time YYYY-MM-DD HH:MM:SS",
    }
}

fn parse_date(s: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(s, "%Y%m%d"))
        .ok()
}

fn parse_time(s: &str) -> Option<NaiveDateTime> {
    [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
    .or_else(|| parse_date(s).map(|d| d.and_time(chrono::NaiveTime::MIN)))
}

/// One text cell as a value of `kind`; empty is null (text stays text).
fn cell(kind: Kind, s: &str) -> Option<V> {
    let t = s.trim();
    if t.is_empty() {
        return Some(if kind == Kind::Str {
            V::S(String::new())
        } else {
            V::Null
        });
    }
    Some(match kind {
        Kind::Str => V::S(s.to_string()),
        Kind::F64 => V::F(t.parse::<f64>().ok().filter(|x| x.is_finite())?),
        Kind::I64 => V::I(t.parse::<i64>().ok()?),
        Kind::Date => V::D(parse_date(t)?),
        Kind::Time => V::T(parse_time(t)?),
    })
}

/// The first column of every table keys its rows: it may not be empty.
fn check_key(file: &str, cols: Columns, line: usize, v: &V) -> Result<(), ImportError> {
    if matches!(v, V::Null) || matches!(v, V::S(s) if s.trim().is_empty()) {
        return Err(ImportError {
            file: file.into(),
            line,
            column: Some(cols[0].0.into()),
            message: "is empty; it keys the rows".into(),
        });
    }
    Ok(())
}

/// Reads a table from CSV text.
pub fn read_table_csv(table: &str, file: &str, data: &[u8]) -> Result<RecordBatch, ImportError> {
    let fail = super::failing(file);
    let cols = columns(table).ok_or_else(|| fail(0, None, unknown(table)))?;
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(data);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| fail(1, None, format!("unreadable header: {e}")))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let at: Vec<usize> = cols
        .iter()
        .map(|(name, _)| {
            header
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| fail(1, Some(name), format!("missing column '{name}'")))
        })
        .collect::<Result<_, _>>()?;
    let mut out = TableBuilder::new(cols);
    for (k, rec) in reader.records().enumerate() {
        let line = k + 2;
        let rec = rec.map_err(|e| fail(line, None, e.to_string()))?;
        let row: Vec<V> = cols
            .iter()
            .zip(&at)
            .map(|((name, kind), i)| {
                let s = rec.get(*i).unwrap_or_default();
                cell(*kind, s).ok_or_else(|| {
                    fail(
                        line,
                        Some(name),
                        format!("'{s}' is not {}", kind_name(*kind)),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        check_key(file, cols, line, &row[0])?;
        out.push(row);
    }
    Ok(out.finish())
}

fn unknown(table: &str) -> String {
    let names: Vec<&str> = TABLES.iter().map(|(n, _)| *n).collect();
    format!(
        "'{table}' is not a served table (one of {})",
        names.join(", ")
    )
}

/// Reads a table from Parquet: numbers of any numeric type, dates as dates,
/// timestamps or text.
pub fn read_table_parquet(
    table: &str,
    file: &str,
    data: Bytes,
) -> Result<RecordBatch, ImportError> {
    let fail = super::failing(file);
    let cols = columns(table).ok_or_else(|| fail(0, None, unknown(table)))?;
    let b = from_parquet(data).map_err(|e| fail(0, None, e.to_string()))?;
    let mut values: Vec<Vec<V>> = Vec::with_capacity(cols.len());
    for (name, kind) in cols {
        let c = b
            .column_by_name(name)
            .ok_or_else(|| fail(0, Some(name), format!("missing column '{name}'")))?;
        let bad = |row: usize, what: String| fail(row + 1, Some(name), what);
        let col: Vec<V> = if matches!(c.data_type(), DataType::Utf8 | DataType::LargeUtf8) {
            let s = arrow_cast::cast(c, &DataType::Utf8).map_err(|e| bad(0, e.to_string()))?;
            let s = s.as_string::<i32>();
            (0..s.len())
                .map(|i| {
                    if s.is_null(i) {
                        return Ok(V::Null);
                    }
                    cell(*kind, s.value(i)).ok_or_else(|| {
                        bad(i, format!("'{}' is not {}", s.value(i), kind_name(*kind)))
                    })
                })
                .collect::<Result<_, _>>()?
        } else {
            let target = match kind {
                Kind::Str => DataType::Utf8,
                Kind::F64 => DataType::Float64,
                Kind::I64 => DataType::Int64,
                Kind::Date => DataType::Date32,
                Kind::Time => DataType::Timestamp(TimeUnit::Microsecond, None),
            };
            let a = arrow_cast::cast(c, &target).map_err(|_| {
                bad(
                    0,
                    format!("column type {} is not {}", c.data_type(), kind_name(*kind)),
                )
            })?;
            (0..a.len())
                .map(|i| {
                    if a.is_null(i) {
                        return V::Null;
                    }
                    match kind {
                        Kind::Str => V::S(a.as_string::<i32>().value(i).to_string()),
                        Kind::F64 => V::F(a.as_primitive::<Float64Type>().value(i)),
                        Kind::I64 => V::I(a.as_primitive::<Int64Type>().value(i)),
                        Kind::Date => V::D(days_to_date(a.as_primitive::<Date32Type>().value(i))),
                        Kind::Time => chrono::DateTime::from_timestamp_micros(
                            a.as_primitive::<TimestampMicrosecondType>().value(i),
                        )
                        .map_or(V::Null, |t| V::T(t.naive_utc())),
                    }
                })
                .collect()
        };
        values.push(col);
    }
    let mut out = TableBuilder::new(cols);
    for i in 0..b.num_rows() {
        let row: Vec<V> = values.iter().map(|c| c[i].clone()).collect();
        check_key(file, cols, i + 1, &row[0])?;
        out.push(row);
    }
    Ok(out.finish())
}
