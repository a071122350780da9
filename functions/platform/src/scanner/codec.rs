//! A scanner day <-> one record batch: a row per item, its trades as list
//! columns of equal lengths.

use super::{Reading, ScanDay, ScanRow, ScanTrade};
use crate::PortError;
use crate::marketdata::codec::{batch, date_col, date_to_days, days_to_date, f64_col, str_col};
use arrow_array::builder::{Date32Builder, Float64Builder, ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, Date32Array, Float64Array, Int32Array, Int64Array, ListArray, RecordBatch,
    StringArray,
};
use arrow_schema::{DataType, Field};
use bytes::Bytes;
use engine::scanner::stats::{ExitReason, Figures};
use engine::scanner::{Direction, Horizon};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::sync::Arc;

/// The figures' columns, in order.
pub(super) const FIGURES: [&str; 12] = [
    "win_rate",
    "avg_win",
    "avg_loss",
    "avg_return",
    "median_return",
    "std_dev",
    "annual_return",
    "max_risk",
    "sharpe_ratio",
    "z_score",
    "expected_return",
    "avg_hold",
];

/// An int64 or int32 column as integers; the error says what is wrong.
pub(super) fn ints(b: &RecordBatch, name: &str) -> Result<Vec<i64>, String> {
    let c = b
        .column_by_name(name)
        .ok_or_else(|| format!("column '{name}' is missing"))?;
    if let Some(a) = c.as_primitive_opt::<Int64Type>() {
        return Ok(a.values().to_vec());
    }
    c.as_primitive_opt::<Int32Type>()
        .map(|a| a.values().iter().map(|v| *v as i64).collect())
        .ok_or_else(|| format!("column '{name}' is not an integer"))
}

/// Figures from their trade count and the values of `FIGURES` by index.
pub(super) fn figures_of(trade_number: usize, f: impl Fn(usize) -> f64) -> Figures {
    Figures {
        trade_number,
        win_rate: f(0),
        avg_win: f(1),
        avg_loss: f(2),
        avg_return: f(3),
        median_return: f(4),
        std_dev: f(5),
        annual_return: f(6),
        max_risk: f(7),
        sharpe_ratio: f(8),
        z_score: f(9),
        expected_return: f(10),
        avg_hold: f(11),
    }
}

pub(super) fn figure_values(f: &Figures) -> [f64; 12] {
    [
        f.win_rate,
        f.avg_win,
        f.avg_loss,
        f.avg_return,
        f.median_return,
        f.std_dev,
        f.annual_return,
        f.max_risk,
        f.sharpe_ratio,
        f.z_score,
        f.expected_return,
        f.avg_hold,
    ]
}

/// A reading's columns, close to optix, as day files and history months
/// both store them.
pub(super) fn reading_columns(readings: &[&Reading]) -> Vec<(Field, ArrayRef)> {
    let x = |f: &dyn Fn(&Reading) -> f64| {
        Arc::new(Float64Array::from_iter_values(
            readings.iter().map(|r| f(r)),
        )) as ArrayRef
    };
    let opt = |f: &dyn Fn(&Reading) -> Option<f64>| {
        Arc::new(Float64Array::from_iter(readings.iter().map(|r| f(r)))) as ArrayRef
    };
    let number = |n: &str| Field::new(n, DataType::Float64, false);
    let hold = readings.iter().map(|r| r.time_in_market as i32);
    let trades = readings.iter().map(|r| r.figures.trade_number as i64);
    let mut columns = vec![
        (number("close"), x(&|r| r.close)),
        (number("profit_target"), x(&|r| r.profit_target)),
        (number("stop_loss"), x(&|r| r.stop_loss)),
        (
            Field::new("time_in_market", DataType::Int32, false),
            Arc::new(Int32Array::from_iter_values(hold)) as ArrayRef,
        ),
        (
            Field::new("trade_number", DataType::Int64, false),
            Arc::new(Int64Array::from_iter_values(trades)) as ArrayRef,
        ),
    ];
    for (k, name) in FIGURES.iter().enumerate() {
        columns.push((number(name), x(&|r| figure_values(&r.figures)[k])));
    }
    for (name, col) in [
        ("trend_score", opt(&|r| r.trend_score)),
        ("rel_trend_score", opt(&|r| r.rel_trend_score)),
        ("optix", opt(&|r| r.optix)),
    ] {
        columns.push((Field::new(name, DataType::Float64, true), col));
    }
    columns
}

fn list_field(name: &str, item: DataType) -> Field {
    Field::new(name, DataType::new_list(item, true), false)
}

/// The list columns; every other column is the item's summary.
pub const TRADE_COLUMNS: [&str; 6] = [
    "entry_date",
    "exit_date",
    "entry_price",
    "exit_price",
    "trade_return",
    "exit_reason",
];

/// Rows per row group: a day's summary is a few ranged reads.
const ROW_GROUP: usize = 512;
/// Small pages, so the page index lets a reader fetch a few rows' trade
/// lists without the whole column chunk.
const PAGE_BYTES: usize = 64 * 1024;

pub fn to_bytes(day: &ScanDay) -> Result<Bytes, PortError> {
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by("marketlab".into())
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .set_data_page_size_limit(PAGE_BYTES)
        .build();
    crate::marketdata::codec::to_parquet_with(&to_batch(day), props)
}

/// A whole day, trades included (what was written).
#[cfg(test)]
pub fn from_bytes(date: chrono::NaiveDate, data: Bytes) -> Result<ScanDay, PortError> {
    let b = crate::marketdata::codec::from_parquet(data)?;
    let mut day = from_batch(date, &b)?;
    for (row, (_, _, trades)) in day.rows.iter_mut().zip(trades_from_batch(&b)?) {
        row.trades = trades;
    }
    Ok(day)
}

/// Each row's symbol, signal and trades, from a batch of those columns.
pub fn trades_from_batch(
    b: &RecordBatch,
) -> Result<Vec<(String, String, Vec<ScanTrade>)>, PortError> {
    let (symbol, signal) = (str_col(b, "symbol")?, str_col(b, "signal")?);
    let (entry_date, exit_date) = (date_list(b, "entry_date")?, date_list(b, "exit_date")?);
    let (entry_price, exit_price, ret) = (
        f64_list(b, "entry_price")?,
        f64_list(b, "exit_price")?,
        f64_list(b, "trade_return")?,
    );
    let reason = reason_list(b, "exit_reason")?;
    (0..b.num_rows())
        .map(|i| {
            let n = entry_date[i].len();
            if [
                exit_date[i].len(),
                entry_price[i].len(),
                exit_price[i].len(),
                ret[i].len(),
                reason[i].len(),
            ]
            .iter()
            .any(|l| *l != n)
            {
                return Err(bad("trade lists of unequal lengths"));
            }
            let trades = (0..n)
                .map(|k| ScanTrade {
                    entry_date: entry_date[i][k],
                    exit_date: exit_date[i][k],
                    entry_price: entry_price[i][k],
                    exit_price: exit_price[i][k],
                    ret: ret[i][k],
                    reason: reason[i][k],
                })
                .collect();
            Ok((
                symbol.value(i).to_string(),
                signal.value(i).to_string(),
                trades,
            ))
        })
        .collect()
}

fn to_batch(day: &ScanDay) -> RecordBatch {
    let rows = &day.rows;
    let s = |f: &dyn Fn(&ScanRow) -> &str| {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let mut fields = vec![
        Field::new("date", DataType::Date32, false),
        Field::new("symbol", DataType::Utf8, false),
        Field::new("signal", DataType::Utf8, false),
        Field::new("category", DataType::Utf8, false),
        Field::new("direction", DataType::Utf8, false),
    ];
    let days = date_to_days(day.date);
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(Date32Array::from(vec![days; rows.len()])),
        s(&|r| &r.symbol),
        s(&|r| &r.signal),
        s(&|r| r.horizon.name()),
        s(&|r| r.direction.as_str()),
    ];
    let readings: Vec<&Reading> = rows.iter().map(|r| &r.reading).collect();
    for (field, col) in reading_columns(&readings) {
        fields.push(field);
        cols.push(col);
    }
    fields.push(Field::new("market", DataType::Utf8, false));
    cols.push(s(&|r| &r.market));

    let trades = |f: &dyn Fn(&ScanTrade) -> f64| {
        let mut b = ListBuilder::new(Float64Builder::new());
        for r in rows {
            b.values()
                .append_slice(&r.trades.iter().map(f).collect::<Vec<_>>());
            b.append(true);
        }
        Arc::new(b.finish()) as ArrayRef
    };
    let dates = |f: &dyn Fn(&ScanTrade) -> chrono::NaiveDate| {
        let mut b = ListBuilder::new(Date32Builder::new());
        for r in rows {
            for t in &r.trades {
                b.values().append_value(date_to_days(f(t)));
            }
            b.append(true);
        }
        Arc::new(b.finish()) as ArrayRef
    };
    let mut reasons = ListBuilder::new(StringBuilder::new());
    for r in rows {
        for t in &r.trades {
            reasons.values().append_value(t.reason.as_str());
        }
        reasons.append(true);
    }
    for (name, item, col) in [
        ("entry_date", DataType::Date32, dates(&|t| t.entry_date)),
        ("exit_date", DataType::Date32, dates(&|t| t.exit_date)),
        ("entry_price", DataType::Float64, trades(&|t| t.entry_price)),
        ("exit_price", DataType::Float64, trades(&|t| t.exit_price)),
        ("trade_return", DataType::Float64, trades(&|t| t.ret)),
        (
            "exit_reason",
            DataType::Utf8,
            Arc::new(reasons.finish()) as ArrayRef,
        ),
    ] {
        fields.push(list_field(name, item));
        cols.push(col);
    }
    batch(fields, cols)
}

fn bad(what: &str) -> PortError {
    PortError::Invalid(format!("scanner file: {what}"))
}

fn list<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a ListArray, PortError> {
    b.column_by_name(name)
        .and_then(|c| c.as_list_opt::<i32>())
        .ok_or_else(|| bad(&format!("column '{name}' is missing or is not a list")))
}

fn f64_list(b: &RecordBatch, name: &str) -> Result<Vec<Vec<f64>>, PortError> {
    let l = list(b, name)?;
    (0..l.len())
        .map(|i| {
            l.value(i)
                .as_primitive_opt::<Float64Type>()
                .map(|a| a.values().to_vec())
                .ok_or_else(|| bad(&format!("'{name}' holds no float64 values")))
        })
        .collect()
}

fn date_list(b: &RecordBatch, name: &str) -> Result<Vec<Vec<chrono::NaiveDate>>, PortError> {
    let l = list(b, name)?;
    (0..l.len())
        .map(|i| {
            l.value(i)
                .as_primitive_opt::<Date32Type>()
                .map(|a| a.values().iter().map(|d| days_to_date(*d)).collect())
                .ok_or_else(|| bad(&format!("'{name}' holds no dates")))
        })
        .collect()
}

fn reason_list(b: &RecordBatch, name: &str) -> Result<Vec<Vec<ExitReason>>, PortError> {
    let l = list(b, name)?;
    (0..l.len())
        .map(|i| {
            let v = l.value(i);
            let s = v
                .as_string_opt::<i32>()
                .ok_or_else(|| bad(&format!("'{name}' holds no text")))?;
            s.iter()
                .map(|r| {
                    r.and_then(ExitReason::parse)
                        .ok_or_else(|| bad(&format!("unknown exit reason {r:?}")))
                })
                .collect()
        })
        .collect()
}

/// The items of a batch of the summary columns, without their trades.
pub fn from_batch(date: chrono::NaiveDate, b: &RecordBatch) -> Result<ScanDay, PortError> {
    let int = |name: &str| ints(b, name).map_err(|e| bad(&e));
    let opt = |name: &str| -> Result<Vec<Option<f64>>, PortError> {
        Ok(f64_col(b, name)?.iter().collect())
    };
    if date_col(b, "date")?
        .iter()
        .any(|d| d.map(days_to_date) != Some(date))
    {
        return Err(bad(&format!("rows of another date than {date}")));
    }
    let (symbol, signal, category, direction, market) = (
        str_col(b, "symbol")?,
        str_col(b, "signal")?,
        str_col(b, "category")?,
        str_col(b, "direction")?,
        str_col(b, "market")?,
    );
    let (close, target, stop) = (
        f64_col(b, "close")?,
        f64_col(b, "profit_target")?,
        f64_col(b, "stop_loss")?,
    );
    let (hold, number) = (int("time_in_market")?, int("trade_number")?);
    let figures: Vec<&Float64Array> = FIGURES
        .iter()
        .map(|n| f64_col(b, n))
        .collect::<Result<_, _>>()?;
    let (trend, rel, optix) = (opt("trend_score")?, opt("rel_trend_score")?, opt("optix")?);
    let rows = (0..b.num_rows())
        .map(|i| {
            let f = |k: usize| figures[k].value(i);
            Ok(ScanRow {
                symbol: symbol.value(i).to_string(),
                signal: signal.value(i).to_string(),
                horizon: Horizon::parse(category.value(i))
                    .ok_or_else(|| bad(&format!("unknown category '{}'", category.value(i))))?,
                reading: Reading {
                    direction: Direction::parse(direction.value(i)).ok_or_else(|| {
                        bad(&format!("unknown direction '{}'", direction.value(i)))
                    })?,
                    close: close.value(i),
                    profit_target: target.value(i),
                    stop_loss: stop.value(i),
                    time_in_market: hold[i] as u32,
                    figures: figures_of(number[i] as usize, f),
                    trend_score: trend[i],
                    rel_trend_score: rel[i],
                    optix: optix[i],
                },
                market: market.value(i).to_string(),
                trades: Vec::new(),
            })
        })
        .collect::<Result<Vec<_>, PortError>>()?;
    Ok(ScanDay { date, rows })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use chrono::NaiveDate;

    /// A day of two rows, one with two trades.
    pub(crate) fn day() -> ScanDay {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        let row = |symbol: &str, signal: &str, trades: Vec<ScanTrade>| ScanRow {
            symbol: symbol.into(),
            signal: signal.into(),
            horizon: engine::scanner::signal(signal).unwrap().horizon(),
            reading: super::super::test_reading(Direction::Short, 101.25, trades.len()),
            market: "Uptrend".into(),
            trades,
        };
        let t = |entry: &str, exit: &str, ret: f64, reason| ScanTrade {
            entry_date: d(entry),
            exit_date: d(exit),
            entry_price: 100.0,
            exit_price: 100.0 * (1.0 - ret / 100.0),
            ret,
            reason,
        };
        ScanDay {
            date: d("2026-11-20"),
            rows: vec![
                row(
                    "AAA",
                    "MA",
                    vec![
                        t("2025-01-02", "2025-01-09", 2.0, ExitReason::TimeIsUp),
                        t("2025-03-03", "2025-03-05", -1.0, ExitReason::StopLoss),
                    ],
                ),
                row("BBB", "Symbol 52-Week Low", vec![]),
            ],
        }
    }

    #[test]
    fn a_day_survives_parquet_to_the_bit() {
        let day = day();
        let bytes = to_bytes(&day).unwrap();
        assert_eq!(from_bytes(day.date, bytes.clone()).unwrap(), day);
        // Deterministic: the same rows, the same bytes.
        assert_eq!(to_bytes(&day).unwrap(), bytes);
        // A file of another date is refused, not misread.
        assert!(from_bytes(day.date.succ_opt().unwrap(), bytes).is_err());
        let empty = ScanDay {
            date: day.date,
            rows: vec![],
        };
        assert_eq!(
            from_bytes(day.date, to_bytes(&empty).unwrap()).unwrap(),
            empty
        );
    }
}
