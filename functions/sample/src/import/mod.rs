//! Importers for real data: daily bars from CSV in the common vendor
//! layouts or Parquet, and the reference tables from CSV or Parquet.
//!
//! A file is parsed and validated completely before anything is written; each
//! object is then written through a temporary file and a rename, so a failed
//! import leaves the store as it was.

mod actions_file;
mod background;
mod bounded;
mod csv_file;
pub mod inbox;
mod ingest;
mod parquet_file;
mod provider;
pub mod report;
mod rules;
mod table_file;

pub use actions_file::read_actions_csv;
pub use csv_file::{CsvLayout, csv_rows, csv_rows_from, read_csv};
pub use ingest::{
    At, Ingested, Options, SymbolRows, ingest, ingest_into, lock, record_actions, recover,
};
pub use parquet_file::{parquet_rows, parquet_rows_from, read_parquet};
pub use provider::read_json;
pub use report::{Finding, Report, Severity};
pub use table_file::{columns, read_table_csv, read_table_parquet};

use chrono::NaiveDate;
use engine::Bars;
use platform::PortError;
use platform::marketdata::{MarketData, ParquetMarketData, SymbolInfo, layout};
use std::fmt;

/// A bad input row, located by file, line (or row) and column.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError {
    pub file: String,
    /// 1-based line of a CSV file (header = line 1), or 1-based row of a
    /// Parquet file; 0 when the problem is the file or a whole column.
    pub line: usize,
    pub column: Option<String>,
    pub message: String,
}

/// The errors of one file: at a line (0: the file) and maybe a column.
pub(crate) fn failing(file: &str) -> impl Fn(usize, Option<&str>, String) -> ImportError + '_ {
    move |line, column, message| ImportError {
        file: file.into(),
        line,
        column: column.map(str::to_string),
        message,
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = if self.file.ends_with(".parquet") {
            "row"
        } else {
            "line"
        };
        if self.line == 0 {
            return match &self.column {
                Some(c) => write!(f, "{}: column {c}: {}", self.file, self.message),
                None => write!(f, "{}: {}", self.file, self.message),
            };
        }
        match &self.column {
            Some(c) => write!(
                f,
                "{}: {unit} {}, column {c}: {}",
                self.file, self.line, self.message
            ),
            None => write!(f, "{}: {unit} {}: {}", self.file, self.line, self.message),
        }
    }
}

impl std::error::Error for ImportError {}

impl From<ImportError> for PortError {
    fn from(e: ImportError) -> Self {
        PortError::Invalid(e.to_string())
    }
}

/// One parsed row with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct RawRow {
    pub line: usize,
    pub date: NaiveDate,
    pub ohlcv: [f64; 5],
}

pub(crate) const COLUMNS: [&str; 5] = ["Open", "High", "Low", "Close", "Volume"];

/// The most rows one symbol's daily bars file may hold: more days than
/// have passed since 1800. A file past it is refused when the row past it
/// is read, so a parse holds at most this many rows, whatever the file.
pub const MAX_ROWS: usize = 100_000;

/// The most of a refused input a message quotes: a field's first 32
/// characters, control characters replaced.
pub(crate) fn excerpt(s: &str) -> String {
    const MAX: usize = 32;
    let mut out: String = s
        .chars()
        .take(MAX)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().nth(MAX).is_some() {
        out.push_str("...");
    }
    out
}

/// Checks rows in file order and builds bars: prices positive and finite,
/// High >= Low, Open and Close inside the range, volume not negative, dates
/// strictly ascending with no duplicates. The first bad row is the error.
pub(crate) fn build_bars(file: &str, rows: Vec<RawRow>) -> Result<Bars, ImportError> {
    if rows.is_empty() {
        return Err(ImportError {
            file: file.into(),
            line: 1,
            column: None,
            message: "no data rows".into(),
        });
    }
    let mut report = Report::new(file);
    let bars = rules::check_rows(None, &rows, &mut report);
    match report
        .findings
        .into_iter()
        .find(|f| f.severity == Severity::Error)
    {
        Some(f) => Err(ImportError {
            file: file.into(),
            line: f.line,
            column: f.column,
            message: f.message,
        }),
        None => Ok(bars),
    }
}

/// Details of an imported symbol that the file itself does not carry.
#[derive(Debug, Clone, Default)]
pub struct SymbolDetails {
    pub name: Option<String>,
    pub asset_class: Option<String>,
}

/// Replaces `symbol`'s daily bars and updates the symbol catalog, keeping any
/// catalog fields the symbol already had.
pub async fn store_daily(
    market: &ParquetMarketData,
    symbol: &str,
    bars: &Bars,
    details: SymbolDetails,
) -> Result<SymbolInfo, PortError> {
    let symbol = layout::check_name("symbol", symbol)?.to_ascii_uppercase();
    market.write_daily(&symbol, bars).await?;
    let existing = match market.symbols().await {
        Ok(all) => all.iter().find(|s| s.symbol == symbol).cloned(),
        Err(PortError::NotFound(_)) => None,
        Err(e) => return Err(e),
    };
    let mut info = existing.unwrap_or(SymbolInfo {
        symbol: symbol.clone(),
        name: symbol.clone(),
        asset_class: "stock".into(),
        sector: None,
        industry: None,
        exchange: None,
        universes: Vec::new(),
        first_date: bars.date(0),
        last_date: bars.date(0),
        has_intraday: false,
    });
    if let Some(n) = details.name {
        info.name = n;
    }
    if let Some(c) = details.asset_class {
        info.asset_class = c;
    }
    info.first_date = bars.date(0);
    info.last_date = bars.date(bars.len() - 1);
    market.upsert_symbols(vec![info.clone()]).await?;
    Ok(info)
}
