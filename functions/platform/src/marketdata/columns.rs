//! A reference table's columns as plain row-aligned vectors, so use cases
//! read tables without knowing Arrow. A missing column or a column of
//! another type is an `Invalid` naming it.

use super::codec::days_to_date;
use crate::PortError;
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, ArrayRef, RecordBatch};
use chrono::{NaiveDate, NaiveDateTime};

fn column<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef, PortError> {
    b.column_by_name(name)
        .ok_or_else(|| PortError::Invalid(format!("table column '{name}' is missing")))
}

fn wrong(name: &str, want: &str) -> PortError {
    PortError::Invalid(format!("table column '{name}' is not {want}"))
}

/// Text, a null as `None`.
pub fn texts(b: &RecordBatch, name: &str) -> Result<Vec<Option<String>>, PortError> {
    let c = column(b, name)?;
    let s = c
        .as_string_opt::<i32>()
        .ok_or_else(|| wrong(name, "text"))?;
    Ok(s.iter().map(|v| v.map(str::to_string)).collect())
}

/// Numbers (float64, int64 or int32), a null as `None`.
pub fn numbers(b: &RecordBatch, name: &str) -> Result<Vec<Option<f64>>, PortError> {
    let c = column(b, name)?;
    if let Some(a) = c.as_primitive_opt::<Float64Type>() {
        return Ok(a.iter().collect());
    }
    if let Some(a) = c.as_primitive_opt::<Int64Type>() {
        return Ok(a.iter().map(|v| v.map(|v| v as f64)).collect());
    }
    if let Some(a) = c.as_primitive_opt::<Int32Type>() {
        return Ok(a.iter().map(|v| v.map(f64::from)).collect());
    }
    Err(wrong(name, "a number"))
}

/// Whole numbers (int64 or int32), a null as `None`.
pub fn integers(b: &RecordBatch, name: &str) -> Result<Vec<Option<i64>>, PortError> {
    let c = column(b, name)?;
    if let Some(a) = c.as_primitive_opt::<Int64Type>() {
        return Ok(a.iter().collect());
    }
    if let Some(a) = c.as_primitive_opt::<Int32Type>() {
        return Ok(a.iter().map(|v| v.map(i64::from)).collect());
    }
    Err(wrong(name, "an integer"))
}

/// Dates, a null as `None`.
pub fn dates(b: &RecordBatch, name: &str) -> Result<Vec<Option<NaiveDate>>, PortError> {
    let c = column(b, name)?;
    let a = c
        .as_primitive_opt::<Date32Type>()
        .ok_or_else(|| wrong(name, "a date"))?;
    Ok(a.iter().map(|v| v.map(days_to_date)).collect())
}

/// Timestamps (microseconds, no zone), a null as `None`.
pub fn times(b: &RecordBatch, name: &str) -> Result<Vec<Option<NaiveDateTime>>, PortError> {
    let c = column(b, name)?;
    let a = c
        .as_primitive_opt::<TimestampMicrosecondType>()
        .ok_or_else(|| wrong(name, "a timestamp"))?;
    Ok(a.iter()
        .map(|v| {
            v.and_then(chrono::DateTime::from_timestamp_micros)
                .map(|t| t.naive_utc())
        })
        .collect())
}

/// Columns read in place, row by row: for tables of millions of rows
/// (option chains), where copying every column out would take GBs.
pub mod view {
    use super::*;
    use arrow_array::{PrimitiveArray, StringArray};

    pub struct Texts<'a>(&'a StringArray);
    impl<'a> Texts<'a> {
        pub fn get(&self, i: usize) -> Option<&'a str> {
            (!self.0.is_null(i)).then(|| self.0.value(i))
        }
    }

    pub enum Numbers<'a> {
        F64(&'a PrimitiveArray<Float64Type>),
        I64(&'a PrimitiveArray<Int64Type>),
        I32(&'a PrimitiveArray<Int32Type>),
    }
    impl Numbers<'_> {
        pub fn get(&self, i: usize) -> Option<f64> {
            match self {
                Numbers::F64(a) => (!a.is_null(i)).then(|| a.value(i)),
                Numbers::I64(a) => (!a.is_null(i)).then(|| a.value(i) as f64),
                Numbers::I32(a) => (!a.is_null(i)).then(|| f64::from(a.value(i))),
            }
        }
    }

    pub struct Integers<'a>(Numbers<'a>);
    impl Integers<'_> {
        pub fn get(&self, i: usize) -> Option<i64> {
            match &self.0 {
                Numbers::I64(a) => (!a.is_null(i)).then(|| a.value(i)),
                Numbers::I32(a) => (!a.is_null(i)).then(|| i64::from(a.value(i))),
                Numbers::F64(_) => None,
            }
        }
    }

    pub struct Dates<'a>(&'a PrimitiveArray<Date32Type>);
    impl Dates<'_> {
        pub fn get(&self, i: usize) -> Option<NaiveDate> {
            (!self.0.is_null(i)).then(|| days_to_date(self.0.value(i)))
        }
    }

    pub fn texts<'a>(b: &'a RecordBatch, name: &str) -> Result<Texts<'a>, PortError> {
        column(b, name)?
            .as_string_opt::<i32>()
            .map(Texts)
            .ok_or_else(|| wrong(name, "text"))
    }

    pub fn numbers<'a>(b: &'a RecordBatch, name: &str) -> Result<Numbers<'a>, PortError> {
        let c = column(b, name)?;
        if let Some(a) = c.as_primitive_opt::<Float64Type>() {
            return Ok(Numbers::F64(a));
        }
        if let Some(a) = c.as_primitive_opt::<Int64Type>() {
            return Ok(Numbers::I64(a));
        }
        if let Some(a) = c.as_primitive_opt::<Int32Type>() {
            return Ok(Numbers::I32(a));
        }
        Err(wrong(name, "a number"))
    }

    pub fn integers<'a>(b: &'a RecordBatch, name: &str) -> Result<Integers<'a>, PortError> {
        match numbers(b, name)? {
            Numbers::F64(_) => Err(wrong(name, "an integer")),
            n => Ok(Integers(n)),
        }
    }

    pub fn dates<'a>(b: &'a RecordBatch, name: &str) -> Result<Dates<'a>, PortError> {
        column(b, name)?
            .as_primitive_opt::<Date32Type>()
            .map(Dates)
            .ok_or_else(|| wrong(name, "a date"))
    }
}

/// Rows of the table.
pub fn rows(b: &RecordBatch) -> usize {
    b.num_rows()
}

/// Whether the table has the column.
pub fn has(b: &RecordBatch, name: &str) -> bool {
    b.column_by_name(name)
        .is_some_and(|c| c.len() == b.num_rows())
}

/// A decoded column of any type a reference table holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    Text(Vec<Option<String>>),
    Number(Vec<Option<f64>>),
    Integer(Vec<Option<i64>>),
    Date(Vec<Option<NaiveDate>>),
    Time(Vec<Option<NaiveDateTime>>),
}

/// Every column of a table, by name; a column of another type is skipped.
pub fn all(b: &RecordBatch) -> Vec<(String, Column)> {
    use arrow_schema::DataType;
    b.schema()
        .fields()
        .iter()
        .filter_map(|f| {
            let name = f.name().as_str();
            let col = match f.data_type() {
                DataType::Utf8 => Column::Text(texts(b, name).ok()?),
                DataType::Float64 => Column::Number(numbers(b, name).ok()?),
                DataType::Int64 | DataType::Int32 => Column::Integer(integers(b, name).ok()?),
                DataType::Date32 => Column::Date(dates(b, name).ok()?),
                DataType::Timestamp(_, _) => Column::Time(times(b, name).ok()?),
                _ => return None,
            };
            Some((name.to_string(), col))
        })
        .collect()
}

/// Named columns of equal length as one Parquet file (Snappy): how a
/// service hands out a table for download.
pub fn to_parquet(cols: Vec<(String, Column)>) -> Result<bytes::Bytes, PortError> {
    super::codec::to_parquet(&super::interchange::to_batch(cols)?)
}

/// The same, with schema metadata (a results table's summary).
pub fn to_parquet_with(
    cols: Vec<(String, Column)>,
    metadata: std::collections::HashMap<String, String>,
) -> Result<bytes::Bytes, PortError> {
    super::codec::to_parquet(&super::interchange::to_batch_with(cols, metadata)?)
}
