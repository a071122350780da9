//! The company tables decoded once and indexed by symbol: a request reads a
//! few rows, never a whole table. Each is kept with the table it came from,
//! so a reloaded table is decoded again.

use crate::error::Result;
use chrono::{NaiveDate, NaiveDateTime};
use platform::PortError;
use platform::marketdata::columns::{self, Column};
use platform::marketdata::{MarketData, RecordBatch};
use std::collections::HashMap;
use std::sync::Arc;

/// A decoded table: its columns and each symbol's rows, in table order.
#[derive(Debug, Default)]
pub struct Table {
    cols: HashMap<String, Column>,
    by_symbol: HashMap<String, Vec<usize>>,
    rows: usize,
}

impl Table {
    /// Decodes `b`, indexing its rows by the text column `key` (upper case).
    pub fn new(b: &RecordBatch, key: &str) -> Self {
        let cols: HashMap<String, Column> = columns::all(b).into_iter().collect();
        let mut by_symbol: HashMap<String, Vec<usize>> = HashMap::new();
        if let Some(Column::Text(keys)) = cols.get(key) {
            for (i, k) in keys.iter().enumerate() {
                if let Some(k) = k {
                    by_symbol.entry(k.to_ascii_uppercase()).or_default().push(i);
                }
            }
        }
        Table {
            cols,
            by_symbol,
            rows: b.num_rows(),
        }
    }

    /// A symbol's rows.
    pub fn rows_of(&self, symbol: &str) -> &[usize] {
        self.by_symbol.get(symbol).map_or(&[], Vec::as_slice)
    }

    /// Every row.
    pub fn all_rows(&self) -> std::ops::Range<usize> {
        0..self.rows
    }

    pub fn text(&self, col: &str, row: usize) -> Option<&str> {
        match self.cols.get(col) {
            Some(Column::Text(v)) => v.get(row)?.as_deref(),
            _ => None,
        }
    }

    /// A number column's value (integers read as numbers); NaN is none.
    pub fn num(&self, col: &str, row: usize) -> Option<f64> {
        match self.cols.get(col) {
            Some(Column::Number(v)) => v.get(row).copied().flatten().filter(|x| !x.is_nan()),
            Some(Column::Integer(v)) => v.get(row).copied().flatten().map(|x| x as f64),
            _ => None,
        }
    }

    pub fn int(&self, col: &str, row: usize) -> Option<i64> {
        match self.cols.get(col) {
            Some(Column::Integer(v)) => v.get(row).copied().flatten(),
            Some(Column::Number(v)) => v
                .get(row)
                .copied()
                .flatten()
                .filter(|x| x.is_finite())
                .map(|x| x.round() as i64),
            _ => None,
        }
    }

    pub fn date(&self, col: &str, row: usize) -> Option<NaiveDate> {
        match self.cols.get(col) {
            Some(Column::Date(v)) => v.get(row).copied().flatten(),
            Some(Column::Time(v)) => v.get(row).copied().flatten().map(|t| t.date()),
            _ => None,
        }
    }

    pub fn time(&self, col: &str, row: usize) -> Option<NaiveDateTime> {
        match self.cols.get(col) {
            Some(Column::Time(v)) => v.get(row).copied().flatten(),
            Some(Column::Date(v)) => v
                .get(row)
                .copied()
                .flatten()
                .map(|d| d.and_time(chrono::NaiveTime::MIN)),
            _ => None,
        }
    }
}

/// The table `name`, indexed by `key`; an empty table when the store has
/// none. Decoded once per stored table, kept in the store's memo.
pub async fn load(market: &dyn MarketData, name: &'static str, key: &str) -> Result<Arc<Table>> {
    let batch = match market.table(name).await {
        Ok(b) => b,
        Err(PortError::NotFound(_)) => return Ok(Arc::new(Table::default())),
        Err(e) => return Err(e.into()),
    };
    let memo_key = format!("company table {name} by {key}");
    if let Some(t) = market.memo().get(&memo_key, &batch) {
        return Ok(t);
    }
    let (b, key) = (batch.clone(), key.to_string());
    let table = tokio::task::spawn_blocking(move || Arc::new(Table::new(&b, &key)))
        .await
        .map_err(|e| PortError::fault(format!("decoding {name} failed"), e))?;
    // About the decoded table's size: its text and numbers, as stored.
    let bytes = batch.get_array_memory_size();
    market.memo().put(&memo_key, &batch, table.clone(), bytes);
    Ok(table)
}
