//! CSV mode (2.8): the bars a strategy runs on, sent by the caller. Required
//! Date, Open, High, Low, Close, Volume; optional Entry1..5 / Exit1..5 (0
//! when missing); other columns dropped. They arrive as JSON rows in
//! `csv_data` (read straight into columns, never as a `Value` tree), as CSV
//! text, a Parquet file or an Arrow IPC stream; every form gets the same checks and the same
//! messages, which name the row as `csv_data[i]` (data rows counted from 0).

use super::params::{FieldError, Result};
use super::values::MAX_MAGNITUDE;
use bytes::Bytes;
use chrono::NaiveDate;
use engine::Bars;
pub use platform::uploads::{PRICE_COLUMNS, SIGNAL_COLUMNS, Upload};
use serde_json::{Map, Value, json};
use std::fmt;

mod json_rows;
pub use json_rows::{SplitBody, from_value, split_json};

/// Most rows one upload may hold, in any form.
pub const MAX_ROWS: usize = 100_000;

/// Column index of a name among Date (0), the prices (1-5) and the signals
/// (6-15), without regard to case.
fn column(name: &str) -> Option<usize> {
    // Lower-cased into a stack buffer: this runs for every cell of an upload.
    let mut buf = [0u8; 6];
    let b = name.as_bytes();
    if b.len() < 3 || b.len() > buf.len() {
        return None;
    }
    for (d, c) in buf.iter_mut().zip(b) {
        *d = c.to_ascii_lowercase();
    }
    Some(match &buf[..b.len()] {
        b"date" => 0,
        b"open" => 1,
        b"high" => 2,
        b"low" => 3,
        b"close" => 4,
        b"volume" => 5,
        b"entry1" => 6,
        b"entry2" => 7,
        b"entry3" => 8,
        b"entry4" => 9,
        b"entry5" => 10,
        b"exit1" => 11,
        b"exit2" => 12,
        b"exit3" => 13,
        b"exit4" => 14,
        b"exit5" => 15,
        _ => return None,
    })
}

fn column_name(index: usize) -> &'static str {
    match index {
        0 => "Date",
        i => PRICE_COLUMNS
            .iter()
            .chain(SIGNAL_COLUMNS.iter())
            .nth(i - 1)
            .copied()
            .unwrap_or("?"),
    }
}

/// Rows checked and appended one at a time.
#[derive(Default)]
struct Collector {
    upload: Upload,
}

impl Collector {
    fn push(
        &mut self,
        i: usize,
        date: NaiveDate,
        ohlcv: [f64; 5],
        signals: [f64; 10],
    ) -> Result<()> {
        let [op, hi, lo, cl, vo] = ohlcv;
        let valid = op > 0.0 && hi > 0.0 && lo > 0.0 && cl > 0.0 && hi >= lo;
        let valid = valid && op <= hi && op >= lo && cl <= hi && cl >= lo && vo >= 0.0;
        let ascending = self.upload.bars.time.last().is_none_or(|t| date > t.date());
        if !(valid && ascending) {
            return self.refuse(i, date, ohlcv);
        }
        if i >= MAX_ROWS {
            return Err(FieldError::new(
                "csv_data",
                format!("holds more than {MAX_ROWS} rows"),
            ));
        }
        self.upload.bars.push(
            date.and_hms_opt(0, 0, 0).expect("midnight"),
            op,
            hi,
            lo,
            cl,
            vo,
        );
        for (col, x) in self.upload.signals.iter_mut().zip(signals) {
            col.push(x);
        }
        Ok(())
    }

    /// Why row `i` is refused (built only for a refused row).
    fn refuse(&self, i: usize, date: NaiveDate, ohlcv: [f64; 5]) -> Result<()> {
        let path = format!("csv_data[{i}]");
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
        if let Some(prev) = self.upload.bars.time.last()
            && date <= prev.date()
        {
            return Err(FieldError::new(
                format!("{path}.Date"),
                format!(
                    "{date} is not after the previous row's {}; rows must be in ascending date order",
                    prev.date()
                ),
            ));
        }
        Ok(())
    }

    fn finish(self) -> Result<Upload> {
        if self.upload.is_empty() {
            return Err(FieldError::new("csv_data", "needs at least one row"));
        }
        Ok(self.upload)
    }
}

/// Why a cell is refused; the caller names the cell, only then.
type Cell<T> = std::result::Result<T, String>;

/// A number as sent, within [`MAX_MAGNITUDE`]; `shown` quotes it in errors.
fn bounded(x: f64, shown: &dyn fmt::Display) -> Cell<f64> {
    if !x.is_finite() || x.abs() > MAX_MAGNITUDE {
        return Err(format!(
            "{shown} is out of range (at most 1e15 in magnitude)"
        ));
    }
    Ok(x)
}

fn numeric_text(s: &str) -> Cell<f64> {
    let x = s
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("'{s}' is not a number"))?;
    bounded(x, &format_args!("'{s}'"))
}

fn day(s: &str) -> Cell<NaiveDate> {
    crate::dates::parse(s)
}

/// The path of cell `c` of row `i`.
fn at(i: usize, c: usize) -> String {
    format!("csv_data[{i}].{}", column_name(c))
}

/// One row's cells before its checks: the date and the 15 value columns.
struct Cells {
    date: Option<NaiveDate>,
    values: [Option<f64>; 15],
}

impl Cells {
    fn new() -> Self {
        Cells {
            date: None,
            values: [None; 15],
        }
    }

    fn finish(self, i: usize, into: &mut Collector) -> Result<()> {
        let date = self.date.ok_or_else(|| FieldError::required(at(i, 0)))?;
        let mut ohlcv = [0.0; 5];
        for (k, x) in ohlcv.iter_mut().enumerate() {
            *x = self.values[k].ok_or_else(|| FieldError::required(at(i, k + 1)))?;
        }
        let mut signals = [0.0; 10];
        for (k, x) in signals.iter_mut().enumerate() {
            *x = self.values[5 + k].unwrap_or(0.0);
        }
        into.push(i, date, ohlcv, signals)
    }
}

// ---- CSV text ---------------------------------------------------------

/// Bars as CSV text with a header row (`text/csv`).
pub fn from_csv_text(text: &[u8]) -> Result<Upload> {
    let mut reader = ::csv::ReaderBuilder::new()
        .trim(::csv::Trim::All)
        .from_reader(text);
    let headers = reader
        .byte_headers()
        .map_err(|e| FieldError::new("csv_data", format!("the header row is not readable: {e}")))?
        .clone();
    // Where each of the 16 columns sits in a record.
    let mut position: [Option<usize>; 16] = [None; 16];
    for (k, h) in headers.iter().enumerate() {
        if let Some(c) = std::str::from_utf8(h).ok().and_then(column) {
            position[c] = Some(k);
        }
    }
    if let Some(c) = position[..6].iter().position(Option::is_none) {
        return Err(FieldError::new(
            "csv_data",
            format!("column '{}' is required in the header row", column_name(c)),
        ));
    }
    let mut rows = Collector::default();
    let mut record = ::csv::ByteRecord::new();
    let mut i = 0;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                return Err(FieldError::new(
                    format!("csv_data[{i}]"),
                    format!("is not a readable CSV row: {e}"),
                ));
            }
        }
        let mut cells = Cells::new();
        for (c, k) in position.iter().enumerate() {
            let Some(k) = k else { continue };
            let raw = record.get(*k).unwrap_or_default();
            if raw.is_empty() {
                continue;
            }
            let read = match std::str::from_utf8(raw) {
                Err(_) => Err("is not UTF-8 text".to_string()),
                Ok(text) if c == 0 => {
                    day(text.get(..10).unwrap_or(text)).map(|d| cells.date = Some(d))
                }
                Ok(text) => numeric_text(text).map(|x| cells.values[c - 1] = Some(x)),
            };
            read.map_err(|why| FieldError::new(at(i, c), why))?;
        }
        cells.finish(i, &mut rows)?;
        i += 1;
    }
    rows.finish()
}

// ---- Parquet and Arrow ------------------------------------------------

/// Bars as a Parquet file (`application/vnd.apache.parquet`): dates as
/// date, timestamp or `YYYY-MM-DD` text; numbers of any integer or float type.
pub fn from_parquet(data: Bytes) -> Result<Upload> {
    let table = platform::uploads::read_table(data, MAX_ROWS)
        .map_err(|why| FieldError::new("csv_data", why))?;
    from_table(&table)
}

/// Bars as an Arrow IPC stream (`application/vnd.apache.arrow.stream`),
/// with the types [`from_parquet`] takes.
pub fn from_arrow(data: Bytes) -> Result<Upload> {
    let table = platform::uploads::read_stream(data, MAX_ROWS)
        .map_err(|why| FieldError::new("csv_data", why))?;
    from_table(&table)
}

/// Whether the bytes open as an Arrow IPC stream (its first message's
/// continuation marker); Parquet opens with `PAR1`, CSV with text.
pub fn is_arrow_stream(data: &[u8]) -> bool {
    data.starts_with(&[0xff, 0xff, 0xff, 0xff])
}

fn from_table(table: &platform::uploads::SentTable) -> Result<Upload> {
    let dates = table
        .dates()
        .map_err(|why| FieldError::new("csv_data", why))?;
    let mut columns: Vec<Option<Vec<Option<f64>>>> = Vec::with_capacity(15);
    for c in 1..=15 {
        let v = table
            .numbers(c)
            .map_err(|why| FieldError::new("csv_data", why))?;
        if v.is_none() && c <= 5 {
            return Err(FieldError::new(
                "csv_data",
                format!("column '{}' is required", column_name(c)),
            ));
        }
        columns.push(v);
    }
    let mut rows = Collector::default();
    for (i, d) in dates.iter().enumerate() {
        let mut cells = Cells::new();
        if let Some(d) = *d {
            cells.date = Some(in_range(d).map_err(|why| FieldError::new(at(i, 0), why))?);
        }
        for (c, col) in columns.iter().enumerate() {
            if let Some(x) = col.as_ref().and_then(|v| v[i]) {
                cells.values[c] =
                    Some(bounded(x, &x).map_err(|why| FieldError::new(at(i, c + 1), why))?);
            }
        }
        cells.finish(i, &mut rows)?;
    }
    rows.finish()
}

/// A typed date within the years market data can have; formatted (to say
/// why) only when it is not.
fn in_range(d: NaiveDate) -> Cell<NaiveDate> {
    if (crate::dates::EARLIEST..=crate::dates::LATEST).contains(&d) {
        return Ok(d);
    }
    day(&d.to_string())
}

// ---- Answers ----------------------------------------------------------

/// What the task's params keep of an upload: its size, range and digest.
pub fn summary(upload: &Upload, digest: &str, bytes: usize) -> Value {
    let b = &upload.bars;
    let signals: Vec<&str> = SIGNAL_COLUMNS
        .iter()
        .zip(&upload.signals)
        .filter(|(_, v)| v.iter().any(|x| *x != 0.0))
        .map(|(n, _)| *n)
        .collect();
    json!({
        "rows": b.len(),
        "first_date": b.date(0).to_string(),
        "last_date": b.date(b.len() - 1).to_string(),
        "signal_columns": signals,
        "stored_bytes": bytes,
        "sha256": digest,
    })
}

/// The rows in the 16-column shape the spec's worker receives (2.8).
pub fn rows_json(upload: &Upload) -> Value {
    let b: &Bars = &upload.bars;
    Value::Array(
        (0..b.len())
            .map(|i| {
                let mut o = Map::new();
                o.insert("Date".into(), json!(b.date(i).to_string()));
                for (col, v) in PRICE_COLUMNS
                    .iter()
                    .zip([&b.open, &b.high, &b.low, &b.close, &b.volume])
                {
                    o.insert((*col).into(), json!(v[i]));
                }
                for (col, v) in SIGNAL_COLUMNS.iter().zip(&upload.signals) {
                    o.insert((*col).into(), json!(v[i]));
                }
                Value::Object(o)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(body: &str) -> Result<Upload> {
        split_json(body.as_bytes()).unwrap().upload.unwrap()
    }

    #[test]
    fn json_rows_csv_text_and_parquet_give_the_same_columns() {
        let body = r#"{"symbol": "MINE", "csv_data": [
            {"date": "2024-01-02", "Open": 10, "High": "11", "Low": 9.5, "Close": 10.5, "Volume": 100, "Entry1": 1, "Note": "x"},
            {"Date": "2024-01-03", "Open": 10.5, "High": 12, "Low": 10, "Close": 11.5, "Volume": 200, "exit2": null}
        ], "name": "n"}"#;
        let split = split_json(body.as_bytes()).unwrap();
        assert_eq!(split.rest, json!({"symbol": "MINE", "name": "n"}));
        let a = split.upload.unwrap().unwrap();
        assert_eq!(a.bars.close, vec![10.5, 11.5]);
        assert_eq!(a.signals[0], vec![1.0, 0.0]);
        assert_eq!(a.signals[6], vec![0.0, 0.0]);
        let text = "Date,Open,High,Low,Close,Volume,Entry1,Note\n2024-01-02,10,11,9.5,10.5,100,1,x\n2024-01-03 00:00:00,10.5,12,10,11.5,200,,y\n";
        let b = from_csv_text(text.as_bytes()).unwrap();
        assert_eq!(a, b);
        let c = from_parquet(a.to_parquet().unwrap()).unwrap();
        assert_eq!(a, c);
        assert_eq!(from_value(&rows_json(&a)).unwrap(), a);
        // CSV text inside the JSON field.
        let inside = json!({"csv_data": text}).to_string();
        assert_eq!(rows(&inside).unwrap(), a);
    }

    #[test]
    fn every_form_names_the_row_and_column() {
        let e = rows(r#"{"csv_data": [{"Date": "2024-01-02", "Open": 1, "High": 1, "Low": 1, "Close": 1, "Volume": 1},
            {"Date": "2024-01-03", "Open": 1, "High": "x", "Low": 1, "Close": 1, "Volume": 1}]}"#)
        .unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.reason.as_str()),
            ("csv_data[1].High", "'x' is not a number")
        );
        let e = rows(
            r#"{"csv_data": [{"Date": "2024-01-02", "Open": 1, "High": 1, "Low": 1, "Close": 1}]}"#,
        )
        .unwrap_err();
        assert_eq!(e.field, "csv_data[0].Volume");
        let e = rows(r#"{"csv_data": [1]}"#).unwrap_err();
        assert_eq!(e.field, "csv_data[0]");
        let e = rows(r#"{"csv_data": []}"#).unwrap_err();
        assert_eq!(e.reason, "needs at least one row");
        let e = rows(r#"{"csv_data": {"a": 1}}"#).unwrap_err();
        assert!(
            e.reason
                .starts_with("expected an array of row objects or CSV text"),
            "{}",
            e.reason
        );
        let e = from_csv_text(b"Date,Open,High,Low,Close\n").unwrap_err();
        assert_eq!(e.reason, "column 'Volume' is required in the header row");
        let e = from_csv_text(
            b"Date,Open,High,Low,Close,Volume\n2024-01-03,1,1,1,1,1\n2024-01-02,1,1,1,1,1\n",
        )
        .unwrap_err();
        assert_eq!(e.field, "csv_data[1].Date");
        let e = from_parquet(Bytes::from_static(b"PAR1 not really")).unwrap_err();
        assert!(
            e.reason.starts_with("not a readable Parquet file"),
            "{}",
            e.reason
        );
        // Text that is not JSON is the caller's parse error, not a field's.
        assert!(split_json(b"{\"csv_data\": [").is_err());
    }
}
