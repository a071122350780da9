//! A month of scanner history <-> one Parquet object: a row per item, the
//! sessions it covers in the file's key-value metadata (a session may have
//! no item). Text columns are dictionaries, so millions of rows decode to
//! small integers rather than strings.

use super::{HistoryItem, HistoryMonth, Reading};
use crate::PortError;
use crate::marketdata::codec::{date_to_days, days_to_date};
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type, Int32Type};
use arrow_array::{
    Array, ArrayRef, Date32Array, DictionaryArray, Float64Array, Int32Array, RecordBatch,
    StringArray,
};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use chrono::NaiveDate;
use engine::scanner::{Direction, SIGNALS};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::sync::Arc;

/// The metadata key listing the sessions a month file covers.
const SESSIONS: &str = "marketlab.sessions";

fn bad(what: &str) -> PortError {
    PortError::Invalid(format!("scanner history file: {what}"))
}

fn dictionary(keys: Vec<i32>, values: Vec<&str>) -> ArrayRef {
    Arc::new(
        DictionaryArray::<Int32Type>::try_new(
            Int32Array::from(keys),
            Arc::new(StringArray::from(values)),
        )
        .expect("keys index the values"),
    )
}

pub fn to_bytes(month: &HistoryMonth) -> Result<Bytes, PortError> {
    let rows = &month.items;
    let n = (month.sessions.len(), month.symbols.len(), SIGNALS.len());
    if rows
        .iter()
        .any(|r| r.session as usize >= n.0 || r.symbol as usize >= n.1 || r.signal as usize >= n.2)
    {
        return Err(PortError::internal(
            "scanner history: an item outside its month's sessions, symbols or signals",
        ));
    }
    let text = || DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    let mut fields = vec![
        Field::new("date", DataType::Date32, false),
        Field::new("symbol", text(), false),
        Field::new("signal", text(), false),
        Field::new("direction", text(), false),
    ];
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(Date32Array::from_iter_values(
            rows.iter()
                .map(|r| date_to_days(month.sessions[r.session as usize])),
        )),
        dictionary(
            rows.iter().map(|r| r.symbol as i32).collect(),
            month.symbols.iter().map(|s| s.as_ref()).collect(),
        ),
        dictionary(
            rows.iter().map(|r| r.signal as i32).collect(),
            SIGNALS.iter().map(|s| s.name).collect(),
        ),
        dictionary(
            rows.iter()
                .map(|r| (r.direction == Direction::Short) as i32)
                .collect(),
            vec![Direction::Long.as_str(), Direction::Short.as_str()],
        ),
    ];
    let readings: Vec<&Reading> = rows.iter().map(|r| &r.reading).collect();
    for (field, col) in super::codec::reading_columns(&readings) {
        fields.push(field);
        cols.push(col);
    }
    let batch =
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).map_err(PortError::internal)?;
    let sessions: Vec<String> = month.sessions.iter().map(|d| d.to_string()).collect();
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by("marketlab".into())
        .set_max_row_group_row_count(Some(64 * 1024))
        .set_key_value_metadata(Some(vec![KeyValue::new(
            SESSIONS.into(),
            sessions.join(","),
        )]))
        .build();
    crate::marketdata::codec::to_parquet_with(&batch, props)
}

/// A dictionary column's keys and values.
fn dict<'a>(b: &'a RecordBatch, name: &str) -> Result<(&'a [i32], &'a StringArray), PortError> {
    let d = b
        .column_by_name(name)
        .and_then(|c| c.as_dictionary_opt::<Int32Type>())
        .ok_or_else(|| bad(&format!("column '{name}' is missing or not a dictionary")))?;
    if d.keys().null_count() > 0 {
        return Err(bad(&format!("column '{name}' has nulls")));
    }
    let values = d
        .values()
        .as_string_opt::<i32>()
        .ok_or_else(|| bad(&format!("column '{name}' holds no text")))?;
    Ok((d.keys().values(), values))
}

fn f64s<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a Float64Array, PortError> {
    b.column_by_name(name)
        .and_then(|c| c.as_primitive_opt::<Float64Type>())
        .ok_or_else(|| bad(&format!("column '{name}' is missing or not float64")))
}

pub fn from_bytes(data: Bytes) -> Result<HistoryMonth, PortError> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(data)
        .map_err(|e| bad(&format!("not readable: {e}")))?;
    let sessions: Vec<NaiveDate> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == SESSIONS))
        .and_then(|k| k.value.clone())
        .ok_or_else(|| bad("no list of sessions"))?
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| bad(&format!("bad session '{s}'"))))
        .collect::<Result<_, _>>()?;
    let reader = builder
        .with_batch_size(64 * 1024)
        .build()
        .map_err(PortError::internal)?;
    let mut month = HistoryMonth {
        sessions,
        ..Default::default()
    };
    let mut symbol_at: std::collections::HashMap<String, u32> = Default::default();
    for b in reader {
        let b = b.map_err(|e| bad(&format!("corrupt: {e}")))?;
        read_batch(&b, &mut month, &mut symbol_at)?;
    }
    Ok(month)
}

fn read_batch(
    b: &RecordBatch,
    month: &mut HistoryMonth,
    symbol_at: &mut std::collections::HashMap<String, u32>,
) -> Result<(), PortError> {
    let date = b
        .column_by_name("date")
        .and_then(|c| c.as_primitive_opt::<Date32Type>())
        .ok_or_else(|| bad("column 'date' is missing"))?;
    // Each batch's dictionaries map once to the month's symbols and the signal registry.
    let (symbol, symbol_values) = dict(b, "symbol")?;
    let symbols: Vec<u32> = symbol_values
        .iter()
        .map(|s| {
            let s = s.unwrap_or_default();
            *symbol_at.entry(s.to_string()).or_insert_with(|| {
                month.symbols.push(Arc::from(s));
                (month.symbols.len() - 1) as u32
            })
        })
        .collect();
    let (signal, signal_values) = dict(b, "signal")?;
    let signals: Vec<u16> = signal_values
        .iter()
        .map(|s| {
            let s = s.unwrap_or_default();
            SIGNALS
                .iter()
                .position(|x| x.name == s)
                .map(|k| k as u16)
                .ok_or_else(|| bad(&format!("unknown signal '{s}'")))
        })
        .collect::<Result<_, _>>()?;
    let (direction, direction_values) = dict(b, "direction")?;
    let directions: Vec<Direction> = direction_values
        .iter()
        .map(|s| {
            let s = s.unwrap_or_default();
            Direction::parse(s).ok_or_else(|| bad(&format!("unknown direction '{s}'")))
        })
        .collect::<Result<_, _>>()?;
    let int = |name: &str| super::codec::ints(b, name).map_err(|e| bad(&e));
    let (close, target, stop) = (
        f64s(b, "close")?.values(),
        f64s(b, "profit_target")?.values(),
        f64s(b, "stop_loss")?.values(),
    );
    let (hold, number) = (int("time_in_market")?, int("trade_number")?);
    let figures: Vec<&[f64]> = super::codec::FIGURES
        .iter()
        .map(|n| f64s(b, n).map(|a| a.values().as_ref()))
        .collect::<Result<_, _>>()?;
    let (trend, rel, optix) = (
        f64s(b, "trend_score")?,
        f64s(b, "rel_trend_score")?,
        f64s(b, "optix")?,
    );
    let reading = |a: &Float64Array, i: usize| a.is_valid(i).then(|| a.value(i));
    let sessions: Vec<i32> = month.sessions.iter().map(|d| date_to_days(*d)).collect();
    let mut at = 0usize;
    month.items.reserve(b.num_rows());
    for i in 0..b.num_rows() {
        let d = date.value(i);
        // Rows are ordered by date: the session index only moves forward.
        if sessions.get(at) != Some(&d) {
            at = sessions.binary_search(&d).map_err(|_| {
                bad(&format!(
                    "a row of {}, a session it does not list",
                    days_to_date(d)
                ))
            })?;
        }
        let key = |k: i32, n: usize, what: &str| {
            usize::try_from(k)
                .ok()
                .filter(|k| *k < n)
                .ok_or_else(|| bad(&format!("{what} key {k} out of range")))
        };
        let f = |k: usize| figures[k][i];
        month.items.push(HistoryItem {
            session: at as u32,
            symbol: symbols[key(symbol[i], symbols.len(), "symbol")?],
            signal: signals[key(signal[i], signals.len(), "signal")?],
            reading: Reading {
                direction: directions[key(direction[i], directions.len(), "direction")?],
                close: close[i],
                profit_target: target[i],
                stop_loss: stop[i],
                time_in_market: hold[i] as u32,
                figures: super::codec::figures_of(number[i] as usize, f),
                trend_score: reading(trend, i),
                rel_trend_score: reading(rel, i),
                optix: reading(optix, i),
            },
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn month() -> HistoryMonth {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        let item = |session: u32, symbol: u32, signal: u16, direction| HistoryItem {
            session,
            symbol,
            signal,
            reading: Reading {
                optix: (symbol == 0).then_some(41.5),
                ..super::super::test_reading(direction, 101.25 + symbol as f64, 7)
            },
        };
        HistoryMonth {
            // The 4th has no item and is still covered.
            sessions: vec![d("2026-11-02"), d("2026-11-03"), d("2026-11-04")],
            symbols: vec![Arc::from("AAA"), Arc::from("BBB")],
            items: vec![
                item(0, 0, 0, Direction::Long),
                item(0, 1, 36, Direction::Short),
                item(1, 1, 3, Direction::Long),
            ],
        }
    }

    #[test]
    fn a_month_survives_parquet_to_the_bit() {
        let m = month();
        let bytes = to_bytes(&m).unwrap();
        assert_eq!(from_bytes(bytes.clone()).unwrap(), m);
        assert_eq!(to_bytes(&m).unwrap(), bytes, "deterministic");
        let empty = HistoryMonth {
            sessions: m.sessions.clone(),
            ..Default::default()
        };
        assert_eq!(from_bytes(to_bytes(&empty).unwrap()).unwrap(), empty);
        // An item of a session the month does not list is refused.
        let mut wrong = m.clone();
        wrong.sessions.truncate(1);
        assert!(to_bytes(&wrong).is_err());
    }
}
