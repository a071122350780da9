//! The `incoming/` prefix of the market data (a directory embedded, the
//! bucket on AWS): each file put there is imported, then moved with its
//! validation report to `ingested/` or, refused, to `rejected/`. The kind of
//! a file is its name: `<SYMBOL>.csv` or `<SYMBOL>.parquet` (one symbol's
//! bars), `<name>.json` (a Polygon or Alpaca answer, its symbols inside),
//! `<name>.actions.csv` (splits and dividends).

use super::report::{Finding, Report, Severity};
use super::{ImportError, Options, SymbolRows};
use platform::PortError;
use platform::marketdata::ParquetMarketData;

pub const INCOMING: &str = "incoming/";
pub const INGESTED: &str = "ingested/";
pub const REJECTED: &str = "rejected/";

/// What became of one incoming file.
#[derive(Debug)]
pub struct Taken {
    /// The file's name under `incoming/`.
    pub name: String,
    pub report: Report,
    /// Where the file and its report (`<name>.report.json`) now are.
    pub moved_to: String,
    /// Sessions added, across its symbols.
    pub added: usize,
    /// The generation its import published (none when refused).
    pub generation: Option<u64>,
}

enum Parsed {
    Bars(Vec<SymbolRows>, Vec<Finding>),
    Actions(Vec<platform::marketdata::actions::Action>),
}

fn parse(name: &str, data: bytes::Bytes) -> Result<Parsed, ImportError> {
    let lower = name.to_ascii_lowercase();
    let stem = |ext: &str| name[..name.len() - ext.len()].to_string();
    if lower.ends_with(".actions.csv") {
        return super::read_actions_csv(name, &data).map(Parsed::Actions);
    }
    if lower.ends_with(".json") {
        let (parts, notes) = super::read_json(name, &data, None)?;
        return Ok(Parsed::Bars(parts, notes));
    }
    if lower.ends_with(".csv") {
        let rows = super::csv_rows(name, &data, None)?;
        return Ok(Parsed::Bars(
            vec![SymbolRows {
                symbol: stem(".csv"),
                rows,
            }],
            Vec::new(),
        ));
    }
    if lower.ends_with(".parquet") {
        let rows = super::parquet_rows(name, data)?;
        return Ok(Parsed::Bars(
            vec![SymbolRows {
                symbol: stem(".parquet"),
                rows,
            }],
            Vec::new(),
        ));
    }
    Err(ImportError {
        file: name.into(),
        line: 0,
        column: None,
        message: "not a kind of file the inbox takes (<SYMBOL>.csv, <SYMBOL>.parquet, \
                  <name>.json, <name>.actions.csv)"
            .into(),
    })
}

/// Imports the file at `key` (under `incoming/`) and moves it; none when it
/// is gone (another sweep took it). A file that cannot be read is refused
/// with its reason as the report's one error.
pub async fn take(market: &ParquetMarketData, key: &str) -> Result<Option<Taken>, PortError> {
    let blobs = market.blobs().clone();
    let Some(data) = blobs.get(key).await? else {
        return Ok(None);
    };
    let name = key.strip_prefix(INCOMING).unwrap_or(key).to_string();
    let (report, added, generation) = match parse(&name, data.clone()) {
        Ok(Parsed::Bars(parts, notes)) => {
            let done = super::ingest(market, &name, parts, notes, &Options::default()).await?;
            (done.report, done.added, done.generation)
        }
        Ok(Parsed::Actions(actions)) => {
            let generation = super::record_actions(market, actions).await?;
            (Report::new(&name), 0, Some(generation))
        }
        Err(e) => {
            let mut report = Report::new(&name);
            report.add(Finding {
                severity: Severity::Error,
                rule: "unreadable",
                symbol: None,
                line: e.line,
                column: e.column,
                message: e.message,
            });
            (report, 0, None)
        }
    };
    let dir = if report.refused() { REJECTED } else { INGESTED };
    let moved_to = format!("{dir}{name}");
    blobs.put(&moved_to, data).await?;
    blobs
        .put(&format!("{moved_to}.report.json"), report.to_json().into())
        .await?;
    blobs.delete(key).await?;
    Ok(Some(Taken {
        name,
        report,
        moved_to,
        added,
        generation,
    }))
}

/// Takes every file under `incoming/`, in name order (a day's files sort
/// by date).
pub async fn sweep(market: &ParquetMarketData) -> Result<Vec<Taken>, PortError> {
    let mut done = Vec::new();
    for key in market.blobs().list(INCOMING).await? {
        if key.ends_with('/') {
            continue;
        }
        if let Some(t) = take(market, &key).await? {
            done.push(t);
        }
    }
    Ok(done)
}
