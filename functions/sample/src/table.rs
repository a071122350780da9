//! Row-by-row construction of reference tables with a declared schema.

use arrow_array::{
    ArrayRef, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use chrono::{NaiveDate, NaiveDateTime};
use platform::marketdata::codec::date_to_days;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Str,
    F64,
    I64,
    Date,
    Time,
}

/// A cell. `Null` is allowed in any column.
#[derive(Debug, Clone)]
pub enum V {
    S(String),
    F(f64),
    I(i64),
    D(NaiveDate),
    T(NaiveDateTime),
    Null,
}

impl From<&str> for V {
    fn from(s: &str) -> V {
        V::S(s.to_string())
    }
}
impl From<String> for V {
    fn from(s: String) -> V {
        V::S(s)
    }
}
impl From<f64> for V {
    fn from(f: f64) -> V {
        V::F(f)
    }
}
impl From<i64> for V {
    fn from(i: i64) -> V {
        V::I(i)
    }
}
impl From<NaiveDate> for V {
    fn from(d: NaiveDate) -> V {
        V::D(d)
    }
}
impl From<NaiveDateTime> for V {
    fn from(t: NaiveDateTime) -> V {
        V::T(t)
    }
}
impl<T: Into<V>> From<Option<T>> for V {
    fn from(o: Option<T>) -> V {
        o.map(Into::into).unwrap_or(V::Null)
    }
}

pub struct TableBuilder {
    columns: Vec<(&'static str, Kind)>,
    cells: Vec<Vec<V>>,
}

/// `row![a, b, c]` converts each value into a cell.
#[macro_export]
macro_rules! row {
    ($($v:expr),* $(,)?) => { vec![$($crate::table::V::from($v)),*] };
}

impl TableBuilder {
    pub fn new(columns: &[(&'static str, Kind)]) -> Self {
        TableBuilder {
            columns: columns.to_vec(),
            cells: vec![Vec::new(); columns.len()],
        }
    }

    pub fn push(&mut self, row: Vec<V>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "row width matches the schema"
        );
        for (col, v) in self.cells.iter_mut().zip(row) {
            col.push(v);
        }
    }

    pub fn finish(self) -> RecordBatch {
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for ((name, kind), cells) in self.columns.into_iter().zip(self.cells) {
            let (dt, array): (DataType, ArrayRef) = match kind {
                Kind::Str => (
                    DataType::Utf8,
                    Arc::new(
                        cells
                            .into_iter()
                            .map(|v| match v {
                                V::S(s) => Some(s),
                                _ => None,
                            })
                            .collect::<StringArray>(),
                    ),
                ),
                Kind::F64 => (
                    DataType::Float64,
                    Arc::new(
                        cells
                            .into_iter()
                            .map(|v| match v {
                                V::F(f) => Some(f),
                                V::I(i) => Some(i as f64),
                                _ => None,
                            })
                            .collect::<Float64Array>(),
                    ),
                ),
                Kind::I64 => (
                    DataType::Int64,
                    Arc::new(
                        cells
                            .into_iter()
                            .map(|v| match v {
                                V::I(i) => Some(i),
                                _ => None,
                            })
                            .collect::<Int64Array>(),
                    ),
                ),
                Kind::Date => (
                    DataType::Date32,
                    Arc::new(
                        cells
                            .into_iter()
                            .map(|v| match v {
                                V::D(d) => Some(date_to_days(d)),
                                _ => None,
                            })
                            .collect::<Date32Array>(),
                    ),
                ),
                Kind::Time => (
                    DataType::Timestamp(TimeUnit::Microsecond, None),
                    Arc::new(
                        cells
                            .into_iter()
                            .map(|v| match v {
                                V::T(t) => Some(t.and_utc().timestamp_micros()),
                                _ => None,
                            })
                            .collect::<TimestampMicrosecondArray>(),
                    ),
                ),
            };
            fields.push(Field::new(name, dt, true));
            arrays.push(array);
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
            .expect("columns match the schema")
    }
}
