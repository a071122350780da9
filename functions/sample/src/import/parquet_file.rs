//! Daily bars from a Parquet file with date, open, high, low, close and volume
//! columns (names case-insensitive; dates as date32/date64/timestamp or text;
//! prices of any numeric type).

use super::{COLUMNS, ImportError, MAX_ROWS, RawRow, build_bars};
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use bytes::Bytes;
use chrono::NaiveDate;
use engine::Bars;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::ChunkReader;

use platform::marketdata::codec::days_to_date;

fn column<'a>(b: &'a RecordBatch, name: &str) -> Option<&'a std::sync::Arc<dyn Array>> {
    let schema = b.schema();
    let idx = schema
        .fields()
        .iter()
        .position(|f| f.name().eq_ignore_ascii_case(name))?;
    Some(b.column(idx))
}

pub fn read_parquet(file: &str, data: Bytes) -> Result<Bars, ImportError> {
    build_bars(file, parquet_rows(file, data)?)
}

/// The file's rows, parsed but not yet checked.
pub fn parquet_rows(file: &str, data: Bytes) -> Result<Vec<RawRow>, ImportError> {
    parquet_rows_from(file, data)
}

/// [`parquet_rows`] from an open file or bytes: a file of more than
/// [`MAX_ROWS`] rows is refused from its footer, before any row is read.
pub fn parquet_rows_from<R: ChunkReader + 'static>(
    file: &str,
    data: R,
) -> Result<Vec<RawRow>, ImportError> {
    let fail = super::failing(file);
    let builder = ParquetRecordBatchReaderBuilder::try_new(data)
        .map_err(|e| fail(0, None, format!("not a readable Parquet file: {e}")))?;
    let rows = builder.metadata().file_metadata().num_rows().max(0) as usize;
    if rows > MAX_ROWS {
        return Err(fail(
            0,
            None,
            format!("{rows} rows, more than the {MAX_ROWS} a daily series can hold"),
        ));
    }
    let schema = builder.schema().clone();
    // The footer's count can lie: the rows are counted as they are decoded.
    let reader = builder
        .with_batch_size(64 * 1024)
        .build()
        .map_err(|e| fail(0, None, format!("not a readable Parquet file: {e}")))?;
    let mut batches = Vec::new();
    let mut held = 0;
    for batch in reader {
        let batch = batch.map_err(|e| fail(0, None, format!("Parquet data is corrupt: {e}")))?;
        held += batch.num_rows();
        if held > MAX_ROWS {
            return Err(fail(
                0,
                None,
                format!("more than {MAX_ROWS} rows: more than a daily series can hold"),
            ));
        }
        batches.push(batch);
    }
    let batch = arrow_select::concat::concat_batches(&schema, &batches)
        .map_err(|e| fail(0, None, e.to_string()))?;
    let date_col = column(&batch, "date")
        .ok_or_else(|| fail(0, Some("Date"), "missing column 'date'".into()))?;
    let dates: Vec<Option<NaiveDate>> = match date_col.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 => {
            let s = arrow_cast::cast(date_col, &DataType::Utf8)
                .map_err(|e| fail(0, Some("Date"), e.to_string()))?;
            let s = s.as_string::<i32>();
            (0..s.len())
                .map(|i| {
                    s.is_valid(i).then(|| s.value(i)).and_then(|v| {
                        NaiveDate::parse_from_str(v.trim(), "%Y-%m-%d")
                            .or_else(|_| NaiveDate::parse_from_str(v.trim(), "%Y%m%d"))
                            .ok()
                    })
                })
                .collect()
        }
        _ => {
            let d = arrow_cast::cast(date_col, &DataType::Date32).map_err(|_| {
                fail(
                    0,
                    Some("Date"),
                    format!("column type {} is not a date", date_col.data_type()),
                )
            })?;
            let d = d.as_primitive::<Date32Type>();
            (0..d.len())
                .map(|i| d.is_valid(i).then(|| days_to_date(d.value(i))))
                .collect()
        }
    };
    let mut values = Vec::new();
    for name in COLUMNS {
        let c = column(&batch, name).ok_or_else(|| {
            fail(
                0,
                Some(name),
                format!("missing column '{}'", name.to_lowercase()),
            )
        })?;
        let f = arrow_cast::cast(c, &DataType::Float64).map_err(|_| {
            fail(
                0,
                Some(name),
                format!("column type {} is not numeric", c.data_type()),
            )
        })?;
        values.push(f);
    }
    let cols: Vec<_> = values
        .iter()
        .map(|v| v.as_primitive::<Float64Type>())
        .collect();
    let mut rows = Vec::with_capacity(batch.num_rows());
    for (i, date) in dates.into_iter().enumerate() {
        let line = i + 1;
        let date =
            date.ok_or_else(|| fail(line, Some("Date"), "missing or unparseable date".into()))?;
        let mut ohlcv = [0.0; 5];
        for (k, c) in cols.iter().enumerate() {
            if c.is_null(i) {
                return Err(fail(line, Some(COLUMNS[k]), "missing value".into()));
            }
            ohlcv[k] = c.value(i);
        }
        rows.push(RawRow { line, date, ohlcv });
    }
    Ok(rows)
}
