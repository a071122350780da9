//! Arrow record batches <-> platform structs, and Parquet bytes <-> batches.
//! Writers are deterministic: the same rows always give the same bytes.

use super::{IndicatorMeta, IndicatorSeries, SymbolInfo};
use crate::PortError;
use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type, TimestampMicrosecondType};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use bytes::Bytes;
use chrono::{NaiveDate, NaiveDateTime};
use engine::Bars;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::sync::Arc;

const EPOCH_DAYS_FROM_CE: i32 = 719_163;

pub fn date_to_days(d: NaiveDate) -> i32 {
    d.num_days_from_ce() - EPOCH_DAYS_FROM_CE
}

pub fn days_to_date(days: i32) -> NaiveDate {
    NaiveDate::from_num_days_from_ce_opt(days + EPOCH_DAYS_FROM_CE).unwrap_or_default()
}

fn to_micros(t: NaiveDateTime) -> i64 {
    t.and_utc().timestamp_micros()
}

fn from_micros(us: i64) -> NaiveDateTime {
    chrono::DateTime::from_timestamp_micros(us)
        .map(|t| t.naive_utc())
        .unwrap_or_default()
}

use chrono::Datelike;

/// How every table handed out as Parquet is written: Snappy.
pub fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by("marketlab".into())
        .build()
}

/// Serialises one batch as a Snappy-compressed Parquet file.
pub fn to_parquet(batch: &RecordBatch) -> Result<Bytes, PortError> {
    to_parquet_with(batch, writer_properties())
}

/// Serialises one batch as a Parquet file written with `props`.
pub fn to_parquet_with(batch: &RecordBatch, props: WriterProperties) -> Result<Bytes, PortError> {
    let mut buf = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).map_err(PortError::internal)?;
    writer.write(batch).map_err(PortError::internal)?;
    writer.close().map_err(PortError::internal)?;
    Ok(Bytes::from(buf))
}

/// Reads a whole Parquet object into one batch.
pub fn from_parquet(data: Bytes) -> Result<RecordBatch, PortError> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(data)
        .map_err(|e| PortError::Invalid(format!("not a readable Parquet file: {e}")))?;
    let schema = builder.schema().clone();
    let reader = builder
        .with_batch_size(64 * 1024)
        .build()
        .map_err(PortError::internal)?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PortError::Invalid(format!("Parquet data is corrupt: {e}")))?;
    arrow_select::concat::concat_batches(&schema, &batches).map_err(PortError::internal)
}

fn missing(name: &str, want: &str) -> PortError {
    PortError::Invalid(format!("column '{name}' is missing or is not {want}"))
}

pub fn f64_col<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a Float64Array, PortError> {
    b.column_by_name(name)
        .and_then(|c| c.as_primitive_opt::<Float64Type>())
        .ok_or_else(|| missing(name, "float64"))
}

pub fn str_col<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a StringArray, PortError> {
    b.column_by_name(name)
        .and_then(|c| c.as_string_opt::<i32>())
        .ok_or_else(|| missing(name, "utf8"))
}

fn bool_col<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a BooleanArray, PortError> {
    b.column_by_name(name)
        .and_then(|c| c.as_boolean_opt())
        .ok_or_else(|| missing(name, "boolean"))
}

/// A date32 column as dates (nulls skipped).
pub fn date_values(b: &RecordBatch, name: &str) -> Result<Vec<NaiveDate>, PortError> {
    Ok(date_col(b, name)?
        .iter()
        .flatten()
        .map(days_to_date)
        .collect())
}

pub(crate) fn date_col<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a Date32Array, PortError> {
    b.column_by_name(name)
        .and_then(|c| c.as_primitive_opt::<Date32Type>())
        .ok_or_else(|| missing(name, "date32"))
}

fn str_list(b: &RecordBatch, name: &str) -> Result<Vec<Vec<String>>, PortError> {
    let list = b
        .column_by_name(name)
        .and_then(|c| c.as_list_opt::<i32>())
        .ok_or_else(|| missing(name, "list<utf8>"))?;
    (0..list.len())
        .map(|i| {
            let v = list.value(i);
            let s = v
                .as_string_opt::<i32>()
                .ok_or_else(|| missing(name, "list<utf8>"))?;
            Ok(s.iter().flatten().map(str::to_string).collect())
        })
        .collect()
}

fn opt_str(a: &StringArray, i: usize) -> Option<String> {
    a.is_valid(i).then(|| a.value(i).to_string())
}

fn list_array(rows: impl Iterator<Item = Vec<String>>) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for row in rows {
        for v in row {
            b.values().append_value(v);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

pub(crate) fn batch(fields: Vec<Field>, cols: Vec<ArrayRef>) -> RecordBatch {
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)
        .expect("codec builds matching columns")
}

fn time_field() -> Field {
    Field::new(
        "time",
        DataType::Timestamp(TimeUnit::Microsecond, None),
        false,
    )
}

/// Time column of a series: `date` (date32, daily and coarser) or `time`
/// (timestamp, intraday; exchange-local wall time, no zone).
fn times(b: &RecordBatch) -> Result<Vec<NaiveDateTime>, PortError> {
    if let Ok(d) = date_col(b, "date") {
        return Ok(d
            .values()
            .iter()
            .map(|v| days_to_date(*v).and_hms_opt(0, 0, 0).expect("midnight"))
            .collect());
    }
    b.column_by_name("time")
        .and_then(|c| c.as_primitive_opt::<TimestampMicrosecondType>())
        .map(|t| t.values().iter().map(|v| from_micros(*v)).collect())
        .ok_or_else(|| missing("date", "date32 (or a 'time' timestamp column)"))
}

fn time_column(t: &[NaiveDateTime], intraday: bool) -> (Field, ArrayRef) {
    if intraday {
        let a =
            TimestampMicrosecondArray::from(t.iter().map(|v| to_micros(*v)).collect::<Vec<_>>());
        (time_field(), Arc::new(a))
    } else {
        let a = Date32Array::from(t.iter().map(|v| date_to_days(v.date())).collect::<Vec<_>>());
        (Field::new("date", DataType::Date32, false), Arc::new(a))
    }
}

pub fn bars_to_batch(bars: &Bars, intraday: bool) -> RecordBatch {
    let (tf, tc) = time_column(&bars.time, intraday);
    let f = |n: &str| Field::new(n, DataType::Float64, false);
    let c = |v: &Vec<f64>| Arc::new(Float64Array::from(v.clone())) as ArrayRef;
    batch(
        vec![tf, f("open"), f("high"), f("low"), f("close"), f("volume")],
        vec![
            tc,
            c(&bars.open),
            c(&bars.high),
            c(&bars.low),
            c(&bars.close),
            c(&bars.volume),
        ],
    )
}

pub fn batch_to_bars(b: &RecordBatch) -> Result<Bars, PortError> {
    let v = |n| f64_col(b, n).map(|a| a.values().to_vec());
    Ok(Bars {
        time: times(b)?,
        open: v("open")?,
        high: v("high")?,
        low: v("low")?,
        close: v("close")?,
        volume: v("volume")?,
    })
}

pub fn series_to_batch(s: &IndicatorSeries, intraday: bool) -> RecordBatch {
    let (tf, tc) = time_column(&s.time, intraday);
    batch(
        vec![
            tf,
            Field::new("close", DataType::Float64, false),
            Field::new("sentiment", DataType::Float64, true),
        ],
        vec![
            tc,
            Arc::new(Float64Array::from(s.close.clone())),
            Arc::new(Float64Array::from(s.sentiment.clone())),
        ],
    )
}

pub fn batch_to_series(b: &RecordBatch) -> Result<IndicatorSeries, PortError> {
    let close = f64_col(b, "close")?;
    let sentiment = match b.column_by_name("sentiment") {
        Some(_) => f64_col(b, "sentiment")?.iter().collect(),
        None => vec![None; b.num_rows()],
    };
    Ok(IndicatorSeries {
        time: times(b)?,
        close: close.values().to_vec(),
        sentiment,
    })
}

pub fn symbols_to_batch(rows: &[SymbolInfo]) -> RecordBatch {
    let s = |f: fn(&SymbolInfo) -> Option<&str>| {
        Arc::new(StringArray::from(rows.iter().map(f).collect::<Vec<_>>())) as ArrayRef
    };
    let d = |f: fn(&SymbolInfo) -> NaiveDate| {
        Arc::new(Date32Array::from(
            rows.iter().map(|r| date_to_days(f(r))).collect::<Vec<_>>(),
        )) as ArrayRef
    };
    let utf8 = |n: &str, null| Field::new(n, DataType::Utf8, null);
    let list_field = Field::new(
        "universes",
        DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        false,
    );
    batch(
        vec![
            utf8("symbol", false),
            utf8("name", false),
            utf8("asset_class", false),
            utf8("sector", true),
            utf8("industry", true),
            utf8("exchange", true),
            list_field,
            Field::new("first_date", DataType::Date32, false),
            Field::new("last_date", DataType::Date32, false),
            Field::new("has_intraday", DataType::Boolean, false),
        ],
        vec![
            s(|r| Some(&r.symbol)),
            s(|r| Some(&r.name)),
            s(|r| Some(&r.asset_class)),
            s(|r| r.sector.as_deref()),
            s(|r| r.industry.as_deref()),
            s(|r| r.exchange.as_deref()),
            list_array(rows.iter().map(|r| r.universes.clone())),
            d(|r| r.first_date),
            d(|r| r.last_date),
            Arc::new(BooleanArray::from(
                rows.iter().map(|r| r.has_intraday).collect::<Vec<_>>(),
            )),
        ],
    )
}

pub fn batch_to_symbols(b: &RecordBatch) -> Result<Vec<SymbolInfo>, PortError> {
    let (sym, name, class) = (
        str_col(b, "symbol")?,
        str_col(b, "name")?,
        str_col(b, "asset_class")?,
    );
    let (sector, industry, exchange) = (
        str_col(b, "sector")?,
        str_col(b, "industry")?,
        str_col(b, "exchange")?,
    );
    let universes = str_list(b, "universes")?;
    let (first, last) = (date_col(b, "first_date")?, date_col(b, "last_date")?);
    let intraday = bool_col(b, "has_intraday")?;
    Ok(universes
        .into_iter()
        .enumerate()
        .map(|(i, universes)| SymbolInfo {
            symbol: sym.value(i).to_string(),
            name: name.value(i).to_string(),
            asset_class: class.value(i).to_string(),
            sector: opt_str(sector, i),
            industry: opt_str(industry, i),
            exchange: opt_str(exchange, i),
            universes,
            first_date: days_to_date(first.value(i)),
            last_date: days_to_date(last.value(i)),
            has_intraday: intraday.value(i),
        })
        .collect())
}

pub fn catalog_to_batch(rows: &[IndicatorMeta]) -> RecordBatch {
    let s = |f: fn(&IndicatorMeta) -> &str| {
        Arc::new(StringArray::from(rows.iter().map(f).collect::<Vec<_>>())) as ArrayRef
    };
    let fl = |f: fn(&IndicatorMeta) -> f64| {
        Arc::new(Float64Array::from(rows.iter().map(f).collect::<Vec<_>>())) as ArrayRef
    };
    let bo = |f: fn(&IndicatorMeta) -> bool| {
        Arc::new(BooleanArray::from(rows.iter().map(f).collect::<Vec<_>>())) as ArrayRef
    };
    let u = |n: &str| Field::new(n, DataType::Utf8, false);
    let fd = |n: &str| Field::new(n, DataType::Float64, false);
    let bf = |n: &str| Field::new(n, DataType::Boolean, false);
    batch(
        vec![
            u("url"),
            u("chart_name"),
            u("market_symbol"),
            u("type"),
            u("updated"),
            u("sentiment"),
            u("description"),
            fd("opt_extreme"),
            fd("pess_extreme"),
            bf("contrary"),
            bf("premium"),
            u("chart_type"),
            Field::new(
                "groups",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                false,
            ),
            u("subtype"),
            bf("internal"),
            bf("intraday"),
        ],
        vec![
            s(|r| &r.url),
            s(|r| &r.chart_name),
            s(|r| &r.market_symbol),
            s(|r| &r.kind),
            s(|r| &r.updated),
            s(|r| &r.sentiment),
            s(|r| &r.description),
            fl(|r| r.opt_extreme),
            fl(|r| r.pess_extreme),
            bo(|r| r.contrary),
            bo(|r| r.premium),
            s(|r| &r.chart_type),
            list_array(rows.iter().map(|r| r.groups.clone())),
            s(|r| &r.subtype),
            bo(|r| r.internal),
            bo(|r| r.intraday),
        ],
    )
}

pub fn batch_to_catalog(b: &RecordBatch) -> Result<Vec<IndicatorMeta>, PortError> {
    let s = |n| str_col(b, n);
    let (url, chart, market, kind, updated, sentiment, desc, chart_type, subtype) = (
        s("url")?,
        s("chart_name")?,
        s("market_symbol")?,
        s("type")?,
        s("updated")?,
        s("sentiment")?,
        s("description")?,
        s("chart_type")?,
        s("subtype")?,
    );
    let (opt, pess) = (f64_col(b, "opt_extreme")?, f64_col(b, "pess_extreme")?);
    let (contrary, premium, internal, intraday) = (
        bool_col(b, "contrary")?,
        bool_col(b, "premium")?,
        bool_col(b, "internal")?,
        bool_col(b, "intraday")?,
    );
    let groups = str_list(b, "groups")?;
    Ok(groups
        .into_iter()
        .enumerate()
        .map(|(i, groups)| IndicatorMeta {
            url: url.value(i).into(),
            chart_name: chart.value(i).into(),
            market_symbol: market.value(i).into(),
            kind: kind.value(i).into(),
            updated: updated.value(i).into(),
            sentiment: sentiment.value(i).into(),
            description: desc.value(i).into(),
            opt_extreme: opt.value(i),
            pess_extreme: pess.value(i),
            contrary: contrary.value(i),
            premium: premium.value(i),
            chart_type: chart_type.value(i).into(),
            groups,
            subtype: subtype.value(i).into(),
            internal: internal.value(i),
            intraday: intraday.value(i),
        })
        .collect())
}
