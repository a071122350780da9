//! Tables handed to clients in their own formats: named columns as an Arrow
//! record batch, an Arrow IPC stream (what pandas and polars read without
//! parsing) or Parquet, and JSON rows read back into columns so an answer's
//! table form holds exactly the JSON's columns and values.

use super::columns::Column;
use crate::PortError;
use arrow_array::{
    ArrayRef, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The media type of an Arrow IPC stream.
pub const ARROW_STREAM: &str = "application/vnd.apache.arrow.stream";

/// Named columns of equal length as one record batch (every column nullable).
pub fn to_batch(cols: Vec<(String, Column)>) -> Result<RecordBatch, PortError> {
    to_batch_with(cols, HashMap::new())
}

pub fn to_batch_with(
    cols: Vec<(String, Column)>,
    metadata: HashMap<String, String>,
) -> Result<RecordBatch, PortError> {
    let mut fields = Vec::with_capacity(cols.len());
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(cols.len());
    for (name, c) in cols {
        let (dt, a): (DataType, ArrayRef) = match c {
            Column::Text(v) => (DataType::Utf8, Arc::new(StringArray::from(v))),
            Column::Number(v) => (DataType::Float64, Arc::new(Float64Array::from(v))),
            Column::Integer(v) => (DataType::Int64, Arc::new(Int64Array::from(v))),
            Column::Date(v) => (
                DataType::Date32,
                Arc::new(Date32Array::from(
                    v.into_iter()
                        .map(|d| d.map(super::codec::date_to_days))
                        .collect::<Vec<_>>(),
                )),
            ),
            Column::Time(v) => (
                DataType::Timestamp(TimeUnit::Microsecond, None),
                Arc::new(TimestampMicrosecondArray::from(
                    v.into_iter()
                        .map(|t| t.map(|t| t.and_utc().timestamp_micros()))
                        .collect::<Vec<_>>(),
                )),
            ),
        };
        fields.push(Field::new(name, dt, true));
        arrays.push(a);
    }
    let schema = Schema::new(fields).with_metadata(metadata);
    RecordBatch::try_new(Arc::new(schema), arrays)
        .map_err(|e| PortError::Invalid(format!("table columns: {e}")))
}

/// Named columns as an Arrow IPC stream; `metadata` goes into the schema
/// (what a table cannot hold: a JSON answer's other parts).
pub fn to_arrow_stream(
    cols: Vec<(String, Column)>,
    metadata: HashMap<String, String>,
) -> Result<bytes::Bytes, PortError> {
    let batch = to_batch_with(cols, metadata)?;
    let mut out = Vec::with_capacity(batch.get_array_memory_size() + 1024);
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema())
        .map_err(PortError::internal)?;
    w.write(&batch).map_err(PortError::internal)?;
    w.finish().map_err(PortError::internal)?;
    drop(w);
    Ok(bytes::Bytes::from(out))
}

/// Named columns, as a table holds them.
pub type Table = Vec<(String, Column)>;

/// Named columns of equal length as CSV: the names, then a line per row;
/// dates `YYYY-MM-DD`, times `YYYY-MM-DDTHH:MM:SS`, numbers as the
/// shortest text that reads back to the same value, a missing value empty.
pub fn to_csv(cols: Table) -> Result<bytes::Bytes, PortError> {
    let rows = cols.first().map_or(0, |(_, c)| column_len(c));
    if cols.iter().any(|(_, c)| column_len(c) != rows) {
        return Err(PortError::internal("a table's columns differ in length"));
    }
    let mut w = csv::Writer::from_writer(Vec::with_capacity(rows * 16 * cols.len() + 64));
    w.write_record(cols.iter().map(|(name, _)| name.as_str()))
        .map_err(PortError::internal)?;
    let mut field = String::new();
    for i in 0..rows {
        for (_, c) in &cols {
            field.clear();
            cell(c, i, &mut field);
            w.write_field(&field).map_err(PortError::internal)?;
        }
        w.write_record(None::<&[u8]>).map_err(PortError::internal)?;
    }
    let out = w
        .into_inner()
        .map_err(|e| PortError::internal(e.into_error()))?;
    Ok(bytes::Bytes::from(out))
}

fn column_len(c: &Column) -> usize {
    match c {
        Column::Text(v) => v.len(),
        Column::Number(v) => v.len(),
        Column::Integer(v) => v.len(),
        Column::Date(v) => v.len(),
        Column::Time(v) => v.len(),
    }
}

/// Row `i` of `c` as CSV text, appended to `out`.
fn cell(c: &Column, i: usize, out: &mut String) {
    use std::fmt::Write;
    let _ = match c {
        Column::Text(v) => {
            out.push_str(v[i].as_deref().unwrap_or(""));
            Ok(())
        }
        Column::Number(v) => match v[i] {
            Some(x) if x.is_finite() => write!(out, "{x}"),
            Some(x) if x.is_nan() => {
                out.push_str("NaN");
                Ok(())
            }
            Some(x) => write!(out, "{}", if x > 0.0 { "inf" } else { "-inf" }),
            None => Ok(()),
        },
        Column::Integer(v) => v[i].map_or(Ok(()), |x| write!(out, "{x}")),
        Column::Date(v) => v[i].map_or(Ok(()), |d| write!(out, "{}", d.format("%Y-%m-%d"))),
        Column::Time(v) => {
            v[i].map_or(Ok(()), |t| write!(out, "{}", t.format("%Y-%m-%dT%H:%M:%S")))
        }
    };
}

/// A file format a table is handed out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Parquet,
    ArrowStream,
}

/// A table written a part at a time, so a large one's rows are never all
/// held at once: each part has the first part's columns, in order and of
/// the same types (otherwise [`PartsWriter::write`] refuses it). Read
/// back, it is the table written at once.
pub struct PartsWriter {
    format: TableFormat,
    metadata: HashMap<String, String>,
    writer: Option<(arrow_schema::SchemaRef, Writer)>,
}

enum Writer {
    Parquet(parquet::arrow::ArrowWriter<Vec<u8>>),
    Arrow(arrow_ipc::writer::StreamWriter<Vec<u8>>),
}

impl PartsWriter {
    pub fn new(format: TableFormat, metadata: HashMap<String, String>) -> Self {
        PartsWriter {
            format,
            metadata,
            writer: None,
        }
    }

    /// Appends the part's rows.
    pub fn write(&mut self, part: Table) -> Result<(), PortError> {
        let batch = to_batch_with(part, self.metadata.clone())?;
        let (schema, writer) = match self.writer.take() {
            Some(w) => w,
            None => {
                let schema = batch.schema();
                let writer = match self.format {
                    TableFormat::Parquet => Writer::Parquet(
                        parquet::arrow::ArrowWriter::try_new(
                            Vec::new(),
                            schema.clone(),
                            Some(super::codec::writer_properties()),
                        )
                        .map_err(PortError::internal)?,
                    ),
                    TableFormat::ArrowStream => Writer::Arrow(
                        arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema)
                            .map_err(PortError::internal)?,
                    ),
                };
                (schema, writer)
            }
        };
        let (schema, writer) = self.writer.insert((schema, writer));
        if **schema != *batch.schema() {
            return Err(PortError::internal(
                "a part of a table differs from its first part in its columns",
            ));
        }
        match writer {
            Writer::Parquet(w) => w.write(&batch).map_err(PortError::internal),
            Writer::Arrow(w) => w.write(&batch).map_err(PortError::internal),
        }
    }

    /// The file; `None` when no part was written.
    pub fn finish(self) -> Result<Option<bytes::Bytes>, PortError> {
        let bytes = match self.writer {
            None => return Ok(None),
            Some((_, Writer::Parquet(w))) => w.into_inner().map_err(PortError::internal)?,
            Some((_, Writer::Arrow(mut w))) => {
                w.finish().map_err(PortError::internal)?;
                w.into_inner().map_err(PortError::internal)?
            }
        };
        Ok(Some(bytes::Bytes::from(bytes)))
    }
}

/// An Arrow IPC stream's batches as one table, with its schema metadata.
pub fn from_arrow_stream(data: &[u8]) -> Result<(Table, HashMap<String, String>), PortError> {
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(data), None)
        .map_err(|e| PortError::Invalid(format!("not an Arrow stream: {e}")))?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PortError::Invalid(format!("Arrow stream: {e}")))?;
    let one = arrow_select::concat::concat_batches(&schema, &batches)
        .map_err(|e| PortError::Invalid(format!("Arrow stream: {e}")))?;
    Ok((super::columns::all(&one), schema.metadata().clone().into()))
}

/// Flat JSON rows (objects of numbers, text and nulls) as columns, in the
/// order keys first appear: a column of whole numbers is `Integer`, of any
/// numbers `Number`, otherwise `Text` (other values as their JSON text); a
/// row without a key has a null there.
pub fn from_json_rows(rows: &[Map<String, Value>]) -> Vec<(String, Column)> {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        for k in r.keys() {
            if !names.contains(&k.as_str()) {
                names.push(k);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let values: Vec<Option<&Value>> = rows
                .iter()
                .map(|r| r.get(name).filter(|v| !v.is_null()))
                .collect();
            (name.to_string(), json_column(&values))
        })
        .collect()
}

/// JSON values as one column: `Integer` when every given value is an
/// integer, `Number` when every one is a number,
/// otherwise `Text` (other values as their JSON text); `None` is null.
pub fn json_column(values: &[Option<&Value>]) -> Column {
    JsonKind::of(values.iter().flatten().copied()).column(values)
}

/// The type [`json_column`] gives JSON values, decided once for values
/// written in parts (a table written a chunk at a time types each part by
/// every value the whole will hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonKind {
    Integer,
    Number,
    Text,
}

impl JsonKind {
    pub fn of<'a>(values: impl Iterator<Item = &'a Value> + Clone) -> JsonKind {
        // Integers stay integers: a grid's `5` is not `5.0` in any format.
        if values.clone().all(Value::is_i64) {
            JsonKind::Integer
        } else if values.clone().all(Value::is_number) {
            JsonKind::Number
        } else {
            JsonKind::Text
        }
    }

    /// The values as a column of this type (a value of another type is
    /// null in a number column).
    pub fn column(self, values: &[Option<&Value>]) -> Column {
        match self {
            JsonKind::Integer => {
                Column::Integer(values.iter().map(|v| v.and_then(Value::as_i64)).collect())
            }
            JsonKind::Number => {
                Column::Number(values.iter().map(|v| v.and_then(Value::as_f64)).collect())
            }
            JsonKind::Text => Column::Text(
                values
                    .iter()
                    .map(|v| {
                        v.map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                    })
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_quotes_text_and_writes_numbers_that_read_back_exactly() {
        let d = chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
        let table: Table = vec![
            (
                "name".into(),
                Column::Text(vec![Some("a, \"b\"".into()), None]),
            ),
            (
                "x".into(),
                Column::Number(vec![Some(0.1 + 0.2), Some(f64::NAN)]),
            ),
            ("n".into(), Column::Integer(vec![Some(-3), None])),
            ("day".into(), Column::Date(vec![Some(d), None])),
            (
                "at".into(),
                Column::Time(vec![d.and_hms_opt(9, 30, 0), None]),
            ),
        ];
        let text = String::from_utf8(to_csv(table).unwrap().to_vec()).unwrap();
        assert_eq!(
            text,
            "name,x,n,day,at\n\"a, \"\"b\"\"\",0.30000000000000004,-3,2024-02-29,2024-02-29T09:30:00\n,NaN,,,\n"
        );
        let ragged: Table = vec![
            ("a".into(), Column::Integer(vec![Some(1)])),
            ("b".into(), Column::Integer(vec![])),
        ];
        assert!(to_csv(ragged).is_err());
    }

    #[test]
    fn a_table_written_in_parts_reads_back_as_the_whole_and_refuses_other_columns() {
        let part = |from: i64, n: i64| -> Table {
            vec![
                (
                    "k".into(),
                    Column::Integer((from..from + n).map(Some).collect()),
                ),
                (
                    "x".into(),
                    Column::Number((from..from + n).map(|k| Some(k as f64 / 4.0)).collect()),
                ),
                (
                    "s".into(),
                    Column::Text(
                        (from..from + n)
                            .map(|k| (k % 3 != 0).then(|| k.to_string()))
                            .collect(),
                    ),
                ),
            ]
        };
        let meta: HashMap<String, String> = [("m".to_string(), "v".to_string())].into();
        let whole = part(0, 25);
        for format in [TableFormat::Parquet, TableFormat::ArrowStream] {
            let mut w = PartsWriter::new(format, meta.clone());
            for (from, n) in [(0, 10), (10, 1), (11, 14)] {
                w.write(part(from, n)).unwrap();
            }
            let bytes = w.finish().unwrap().unwrap();
            let (cols, metadata) = match format {
                TableFormat::Parquet => {
                    let b = super::super::codec::from_parquet(bytes).unwrap();
                    let m: HashMap<String, String> = b.schema().metadata().clone().into();
                    (super::super::columns::all(&b), m)
                }
                TableFormat::ArrowStream => from_arrow_stream(&bytes).unwrap(),
            };
            assert_eq!(cols, whole, "{format:?}");
            assert_eq!(metadata, meta);
            let mut w = PartsWriter::new(format, HashMap::new());
            w.write(part(0, 2)).unwrap();
            let mut other = part(2, 2);
            other[1].1 = Column::Text(vec![Some("a".into()), None]);
            assert!(w.write(other).is_err(), "a column of another type");
        }
        assert!(
            PartsWriter::new(TableFormat::Parquet, HashMap::new())
                .finish()
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn json_rows_become_typed_columns_and_round_trip_an_arrow_stream() {
        let rows: Vec<Map<String, Value>> = [
            json!({"Symbol": "AAA", "Close": 10.5, "Trades": 3, "Note": null}),
            json!({"Symbol": "BBB", "Close": 11, "Trades": 4, "Extra": true}),
        ]
        .into_iter()
        .map(|v| v.as_object().unwrap().clone())
        .collect();
        let cols = from_json_rows(&rows);
        let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Symbol", "Close", "Trades", "Note", "Extra"]);
        assert_eq!(cols[1].1, Column::Number(vec![Some(10.5), Some(11.0)]));
        assert_eq!(cols[2].1, Column::Integer(vec![Some(3), Some(4)]));
        assert_eq!(cols[4].1, Column::Text(vec![None, Some("true".into())]));
        let meta = HashMap::from([("code".to_string(), "211".to_string())]);
        let stream = to_arrow_stream(cols.clone(), meta.clone()).unwrap();
        let (back, m) = from_arrow_stream(&stream).unwrap();
        assert_eq!(m, meta);
        // An all-null column is typed Integer, which reads back as such.
        assert_eq!(back, cols);
    }
}
