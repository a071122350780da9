//! One import of daily bars, of one symbol or many: every rule checked on
//! every symbol against what is stored, and only then, when no error was
//! found, each symbol's merged series written, the symbol catalog once, and
//! the data generation last (what tells running processes to read again).
//! A refused file writes nothing; a file cut short while writing can be
//! imported again (the sessions it already wrote agree with themselves).

use super::SymbolDetails;
use super::report::{Finding, Report, Severity};
use super::{RawRow, rules};
use engine::Bars;
use futures::StreamExt;
use platform::PortError;
use platform::marketdata::generation::Generation;
use platform::marketdata::{MarketData, ParquetMarketData, SymbolInfo, layout};

use std::path::Path;

/// Symbols read or written at once.
const PARALLEL: usize = 16;

/// One symbol's rows as a file gives them.
#[derive(Debug, Clone)]
pub struct SymbolRows {
    pub symbol: String,
    pub rows: Vec<RawRow>,
}

/// What an import did.
#[derive(Debug)]
pub struct Ingested {
    pub report: Report,
    /// The catalog rows of the symbols written (none when refused).
    pub symbols: Vec<SymbolInfo>,
    /// Sessions added across the symbols.
    pub added: usize,
    /// The generation the import published (none when refused).
    pub generation: Option<u64>,
}

/// How an import treats what is stored.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Replace each symbol's series with the file's (a correction), instead
    /// of appending the sessions it adds.
    pub replace: bool,
    /// Name and class of a symbol new to the catalog.
    pub details: SymbolDetails,
}

/// Holds the import lock of a local market directory for as long as it
/// lives: imports from the command line and the server's inbox take turns
/// (each reads, merges and rewrites the catalog and the generation).
pub fn lock(dir: &Path) -> Result<std::fs::File, PortError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| PortError::unavailable_by(dir.display().to_string(), e))?;
    let path = dir.join(".import.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| PortError::unavailable_by(path.display().to_string(), e))?;
    file.lock()
        .map_err(|e| PortError::unavailable_by(path.display().to_string(), e))?;
    Ok(file)
}

/// A symbol checked and merged, waiting to be written.
struct Merged {
    symbol: String,
    bars: Bars,
    added: usize,
}

/// Checks `parts` (the file `file`, already parsed) against the store and,
/// when nothing refuses it, writes them. `notes` are findings about the
/// file as a whole, made while parsing it.
pub async fn ingest(
    market: &ParquetMarketData,
    file: &str,
    parts: Vec<SymbolRows>,
    notes: Vec<Finding>,
    options: &Options,
) -> Result<Ingested, PortError> {
    let mut report = Report::new(file);
    for n in notes {
        report.add(n);
    }
    let mut checked = Vec::with_capacity(parts.len());
    for part in parts {
        let symbol = layout::check_name("symbol", &part.symbol)?.to_ascii_uppercase();
        if part.rows.is_empty() {
            continue;
        }
        let lines: Vec<usize> = part.rows.iter().map(|r| r.line).collect();
        let bars = rules::check_rows(Some(&symbol), &part.rows, &mut report);
        if !bars.is_empty() {
            checked.push((symbol, bars, lines));
        }
    }
    if checked.is_empty() && !report.refused() {
        report.add(Finding {
            severity: Severity::Error,
            rule: "no_rows",
            symbol: None,
            line: 0,
            column: None,
            message: "the file holds no bars".into(),
        });
    }
    // Each symbol's stored series, read alongside the others'.
    let actions = market.corporate_actions().await?;
    let reads: Vec<_> = checked
        .iter()
        .map(|(symbol, _, _)| stored_bars(market, symbol, options.replace))
        .collect();
    let stored: Vec<Result<Option<Bars>, PortError>> = futures::stream::iter(reads)
        .buffered(PARALLEL)
        .collect()
        .await;
    let mut merged = Vec::with_capacity(checked.len());
    for ((symbol, bars, lines), stored) in checked.into_iter().zip(stored) {
        let stored = stored?;
        let from = bars.date(0);
        let (out, added) = match &stored {
            Some(old) => {
                let out = rules::merge(&symbol, old, &bars, &lines, &mut report);
                let added = out.len() - old.len();
                (out, added)
            }
            None => {
                let n = bars.len();
                (bars, n)
            }
        };
        let splits = platform::marketdata::actions::splits_of(&actions, &symbol);
        rules::check_series(&symbol, &out, from, &splits, &mut report);
        merged.push(Merged {
            symbol,
            bars: out,
            added,
        });
    }
    if report.refused() {
        return Ok(Ingested {
            report,
            symbols: Vec::new(),
            added: 0,
            generation: None,
        });
    }
    let writes: Vec<_> = merged.iter().map(|m| write(market, m)).collect();
    let written: Vec<Result<String, PortError>> = futures::stream::iter(writes)
        .buffered(PARALLEL)
        .collect()
        .await;
    let mut keys = written.into_iter().collect::<Result<Vec<String>, _>>()?;
    let symbols = catalog_rows(market, &merged, &options.details).await?;
    market.upsert_symbols(symbols.clone()).await?;
    keys.push(layout::SYMBOLS.to_string());
    let generation = Generation::publish(market.blobs().as_ref(), keys).await?;
    Ok(Ingested {
        report,
        symbols,
        added: merged.iter().map(|m| m.added).sum(),
        generation: Some(generation),
    })
}

/// A symbol's stored bars, none when it has none (or they are replaced).
async fn stored_bars(
    market: &ParquetMarketData,
    symbol: &str,
    replace: bool,
) -> Result<Option<Bars>, PortError> {
    if replace {
        return Ok(None);
    }
    match market.daily_stored(symbol).await {
        Ok(b) => Ok(Some(b)),
        Err(PortError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes a merged series; its object's key.
async fn write(market: &ParquetMarketData, m: &Merged) -> Result<String, PortError> {
    market.write_daily(&m.symbol, &m.bars).await?;
    Ok(layout::daily_prices(&m.symbol))
}

/// The catalog rows of the merged symbols: their dates from the series,
/// the rest kept from the catalog (a new symbol takes `details`).
async fn catalog_rows(
    market: &ParquetMarketData,
    merged: &[Merged],
    details: &SymbolDetails,
) -> Result<Vec<SymbolInfo>, PortError> {
    let existing = match market.symbols().await {
        Ok(all) => all,
        Err(PortError::NotFound(_)) => Default::default(),
        Err(e) => return Err(e),
    };
    let by_symbol: std::collections::HashMap<&str, &SymbolInfo> =
        existing.iter().map(|s| (s.symbol.as_str(), s)).collect();
    Ok(merged
        .iter()
        .map(|m| {
            let first = m.bars.date(0);
            let last = m.bars.date(m.bars.len() - 1);
            let mut info = match by_symbol.get(m.symbol.as_str()) {
                Some(s) => (*s).clone(),
                None => SymbolInfo {
                    symbol: m.symbol.clone(),
                    name: m.symbol.clone(),
                    asset_class: "stock".into(),
                    sector: None,
                    industry: None,
                    exchange: None,
                    universes: Vec::new(),
                    first_date: first,
                    last_date: last,
                    has_intraday: false,
                },
            };
            if let Some(n) = &details.name {
                info.name = n.clone();
            }
            if let Some(c) = &details.asset_class {
                info.asset_class = c.clone();
            }
            info.first_date = first;
            info.last_date = last;
            info
        })
        .collect())
}

/// Records splits and dividends, then publishes the generation naming the
/// table and the bars whose adjusted reads they change.
pub async fn record_actions(
    market: &ParquetMarketData,
    actions: Vec<platform::marketdata::actions::Action>,
) -> Result<u64, PortError> {
    let keys = market.write_actions(actions).await?;
    Generation::publish(market.blobs().as_ref(), keys).await
}
