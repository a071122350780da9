//! One import of daily bars, of one symbol or many: every rule checked on
//! every symbol against what is stored, and only then, when no error was
//! found, each symbol's merged series written, the symbol catalog once, and
//! the data generation last (what tells running processes to read again).
//! A refused file writes nothing; an accepted one writes every object aside
//! and commits them together ([`platform::marketdata::staging`]): a crash
//! leaves all of its symbols served or none.

use super::SymbolDetails;
use super::report::{Finding, Report, Severity};
use super::{RawRow, rules};
use engine::Bars;
use futures::StreamExt;
use platform::PortError;
use platform::marketdata::staging::{Staging, Step};
use platform::marketdata::{ParquetMarketData, SymbolInfo, layout};

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
#[derive(Clone, Default)]
pub struct Options {
    /// Replace each symbol's series with the file's (a correction), instead
    /// of appending the sessions it adds.
    pub replace: bool,
    /// Name and class of a symbol new to the catalog.
    pub details: SymbolDetails,
    /// Called at each step of the commit (the crash tests stop there).
    pub at: At,
}

/// A hook called at each step of an import's commit.
#[derive(Clone, Default)]
pub struct At(Option<std::sync::Arc<dyn Fn(Step) + Send + Sync>>);

impl At {
    pub fn new(f: impl Fn(Step) + Send + Sync + 'static) -> Self {
        At(Some(std::sync::Arc::new(f)))
    }

    /// The hook named by `MARKETLAB_IMPORT_KILL_AT` (`staged`, `committed`
    /// or `half-moved`): the process kills itself with SIGKILL there, as
    /// an operator's `kill -9` would; for the crash tests. None when unset.
    pub fn from_env() -> Self {
        let step = match std::env::var("MARKETLAB_IMPORT_KILL_AT").as_deref() {
            Ok("staged") => Step::Staged,
            Ok("committed") => Step::Committed,
            Ok("half-moved") => Step::HalfMoved,
            _ => return At::default(),
        };
        At::new(move |at| {
            if at == step {
                // SAFETY: kill(2) on this process; no memory is touched.
                unsafe {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
            }
        })
    }

    pub(crate) fn call(&self, step: Step) {
        if let Some(f) = &self.0 {
            f(step)
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("replace", &self.replace)
            .field("details", &self.details)
            .finish()
    }
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
    let mut staging = market.staging();
    let mut done = ingest_into(market, &mut staging, file, parts, notes, options).await?;
    if !done.report.refused() {
        done.generation = Some(
            market
                .commit_with(staging, |step| options.at.call(step))
                .await?,
        );
    }
    Ok(done)
}

/// [`ingest`] written aside in `staging` and not committed: an import of
/// several files (a sweep of the inbox) commits them together. Reads see
/// what earlier files of the same import wrote aside. The answer's
/// generation is none until the commit.
pub async fn ingest_into(
    market: &ParquetMarketData,
    staging: &mut Staging<'_>,
    file: &str,
    parts: Vec<SymbolRows>,
    notes: Vec<Finding>,
    options: &Options,
) -> Result<Ingested, PortError> {
    // The rules are CPU work in proportion to the rows: on the import thread.
    let (file_name, options_replace) = (file.to_string(), options.replace);
    let (mut report, checked) =
        super::background::run(move || check_parts(&file_name, parts, notes)).await??;
    // Each symbol's stored series, read alongside the others'.
    let actions = market.actions_staged(staging).await?;
    let stored = {
        let staged = &*staging;
        let reads: Vec<_> = checked
            .iter()
            .map(|(symbol, _, _)| stored_bars(market, staged, symbol, options_replace))
            .collect();
        let stored: Vec<Result<Option<Bars>, PortError>> = futures::stream::iter(reads)
            .buffered(PARALLEL)
            .collect()
            .await;
        stored.into_iter().collect::<Result<Vec<_>, _>>()?
    };
    let (report, merged) = super::background::run(move || {
        let merged = merge_all(checked, stored, &actions, &mut report);
        (report, merged)
    })
    .await?;
    if report.refused() {
        return Ok(Ingested {
            report,
            symbols: Vec::new(),
            added: 0,
            generation: None,
        });
    }
    // Every symbol and the catalog aside, to be served together.
    for chunk in merged.chunks(PARALLEL) {
        let encoded = futures::future::join_all(chunk.iter().map(encode)).await;
        let items = chunk
            .iter()
            .zip(encoded)
            .map(|(m, data)| Ok((layout::daily_prices(&m.symbol), data?)))
            .collect::<Result<Vec<_>, PortError>>()?;
        staging.put_many(items).await?;
    }
    let symbols = catalog_rows(market, staging, &merged, &options.details).await?;
    market.stage_symbols(staging, symbols.clone()).await?;
    Ok(Ingested {
        report,
        symbols,
        added: merged.iter().map(|m| m.added).sum(),
        generation: None,
    })
}

/// A symbol checked: its bars and the file line of each.
type Checked = (String, Bars, Vec<usize>);

/// Checks every row of every part; the report begins with `notes`.
fn check_parts(
    file: &str,
    parts: Vec<SymbolRows>,
    notes: Vec<Finding>,
) -> Result<(Report, Vec<Checked>), PortError> {
    let mut report = Report::new(file);
    for n in notes {
        report.add(n);
    }
    let mut checked = Vec::with_capacity(parts.len());
    for part in parts {
        // A name the layout cannot hold refuses the file, not the inbox.
        let symbol = match layout::check_name("symbol", &part.symbol) {
            Ok(s) => s.to_ascii_uppercase(),
            Err(_) => {
                report.add(Finding {
                    severity: Severity::Error,
                    rule: "invalid_symbol",
                    symbol: None,
                    line: 0,
                    column: None,
                    message: format!(
                        "'{}' is not a symbol name (at most 64 letters, digits and . _ - ^ =)",
                        super::excerpt(&part.symbol)
                    ),
                });
                continue;
            }
        };
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
    Ok((report, checked))
}

/// Each checked symbol merged with what is stored of it, and the series
/// rules run on the result.
fn merge_all(
    checked: Vec<Checked>,
    stored: Vec<Option<Bars>>,
    actions: &[platform::marketdata::actions::Action],
    report: &mut Report,
) -> Vec<Merged> {
    let mut merged = Vec::with_capacity(checked.len());
    for ((symbol, bars, lines), stored) in checked.into_iter().zip(stored) {
        let from = bars.date(0);
        let (out, added) = match &stored {
            Some(old) => {
                let out = rules::merge(&symbol, old, &bars, &lines, report);
                let added = out.len() - old.len();
                (out, added)
            }
            None => {
                let n = bars.len();
                (bars, n)
            }
        };
        let splits = platform::marketdata::actions::splits_of(actions, &symbol);
        rules::check_series(&symbol, &out, from, &splits, report);
        merged.push(Merged {
            symbol,
            bars: out,
            added,
        });
    }
    merged
}

/// A symbol's stored bars, none when it has none (or they are replaced).
async fn stored_bars(
    market: &ParquetMarketData,
    staging: &Staging<'_>,
    symbol: &str,
    replace: bool,
) -> Result<Option<Bars>, PortError> {
    if replace {
        return Ok(None);
    }
    match market.daily_staged(staging, symbol).await {
        Ok(b) => Ok(Some(b)),
        Err(PortError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A merged series as its object's bytes, encoded on a blocking thread.
async fn encode(m: &Merged) -> Result<bytes::Bytes, PortError> {
    m.bars
        .validate()
        .map_err(|e| PortError::Invalid(format!("{}: {e}", m.symbol)))?;
    let batch = platform::marketdata::codec::bars_to_batch(&m.bars, false);
    tokio::task::spawn_blocking(move || platform::marketdata::codec::to_parquet(&batch))
        .await
        .map_err(PortError::internal)?
}

/// The catalog rows of the merged symbols: their dates from the series,
/// the rest kept from the catalog (a new symbol takes `details`).
async fn catalog_rows(
    market: &ParquetMarketData,
    staging: &Staging<'_>,
    merged: &[Merged],
    details: &SymbolDetails,
) -> Result<Vec<SymbolInfo>, PortError> {
    let existing = match market.symbols_staged(staging).await {
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
    let mut staging = market.staging();
    market.stage_actions(&mut staging, actions).await?;
    market.commit(staging).await
}

/// Finishes or removes imports cut short (see
/// [`platform::marketdata::staging`]): run by whoever holds the import turn
/// before it imports.
pub async fn recover(market: &ParquetMarketData) -> Result<(), PortError> {
    let found = platform::marketdata::staging::recover(market.blobs().as_ref()).await?;
    if found.finished + found.discarded > 0 {
        tracing::warn!(
            finished = found.finished,
            discarded = found.discarded,
            "market data: imports cut short were finished or removed"
        );
    }
    Ok(())
}
