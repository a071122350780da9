//! `marketlab import`: daily bars (appended, or replaced), splits and
//! dividends, and reference tables, into the local market directory, each
//! with its validation report (docs/data-updates.md).

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use platform::marketdata::{LocalDir, ParquetMarketData};
use sample::import::{CsvLayout, SymbolDetails, SymbolRows};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// Daily bars from CSV (Yahoo, Stooq or plain Date,Open,High,Low,Close,Volume).
    Csv {
        #[arg(long)]
        symbol: String,
        /// Layout of the file; detected from the header when omitted.
        #[arg(long)]
        layout: Option<CsvLayout>,
        #[command(flatten)]
        details: DetailArgs,
        file: PathBuf,
    },
    /// Daily bars from Parquet (date, open, high, low, close, volume columns).
    Parquet {
        #[arg(long)]
        symbol: String,
        #[command(flatten)]
        details: DetailArgs,
        file: PathBuf,
    },
    /// Daily bars of one symbol or many from a saved Polygon aggregates or
    /// grouped-daily answer, or an Alpaca bars answer (single or multi-symbol).
    Json {
        /// The symbol of an answer that does not name it.
        #[arg(long)]
        symbol: Option<String>,
        #[command(flatten)]
        details: DetailArgs,
        file: PathBuf,
    },
    /// Splits and cash dividends from CSV (`symbol,date,kind,value`: kind
    /// `split` with new shares per old, `2` or `2:1`, or `dividend` with cash
    /// per share); bars are then read split-adjusted.
    Actions { file: PathBuf },
    /// A reference table (option chains, company data, reports...) from CSV
    /// or Parquet (by the file's extension), with the columns of
    /// docs/data-layout.md; it replaces the served table whole.
    Table {
        /// The table, e.g. option_chains, profiles, income_statements.
        #[arg(long)]
        name: String,
        file: PathBuf,
    },
}

#[derive(Args, Debug)]
pub struct DetailArgs {
    /// Replace the symbol's stored bars with the file's (a correction);
    /// by default the file's sessions are added to them, and a session both
    /// hold must agree.
    #[arg(long)]
    replace: bool,
    /// Display name for a new symbol.
    #[arg(long)]
    name: Option<String>,
    /// Asset class for a new symbol (stock, etf, index, commodity, currency).
    #[arg(long)]
    asset_class: Option<String>,
}

/// A file's bytes and its name as messages show it.
fn read_file(file: &Path) -> Result<(Vec<u8>, String)> {
    let data = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    Ok((data, file.display().to_string()))
}

pub async fn import(data_dir: &Path, cmd: ImportCommand) -> Result<()> {
    let dir = data_dir.join("market");
    let _turn = sample::import::lock(&dir)?;
    let market = ParquetMarketData::new(Arc::new(LocalDir::new(&dir)));
    sample::import::recover(&market).await?;
    let (shown, parts, notes, details) = match cmd {
        ImportCommand::Actions { file } => {
            let (data, shown) = read_file(&file)?;
            let actions = sample::import::read_actions_csv(&shown, &data)?;
            let n = actions.len();
            let generation = sample::import::record_actions(&market, actions).await?;
            println!("recorded {n} corporate action(s) (data generation {generation})");
            return Ok(());
        }
        ImportCommand::Table { name, file } => {
            let (data, shown) = read_file(&file)?;
            let parquet = file
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
            let batch = if parquet {
                sample::import::read_table_parquet(&name, &shown, data.into())?
            } else {
                sample::import::read_table_csv(&name, &shown, &data)?
            };
            market.write_table(&name, &batch).await?;
            platform::marketdata::generation::Generation::publish(
                market.blobs().as_ref(),
                [platform::marketdata::layout::table(&name)],
            )
            .await?;
            println!("imported {} rows into the table {name}", batch.num_rows());
            return Ok(());
        }
        ImportCommand::Csv {
            symbol,
            layout,
            details,
            file,
        } => {
            let (data, shown) = read_file(&file)?;
            let rows = sample::import::csv_rows(&shown, &data, layout)?;
            (
                shown,
                vec![SymbolRows { symbol, rows }],
                Vec::new(),
                details,
            )
        }
        ImportCommand::Parquet {
            symbol,
            details,
            file,
        } => {
            let (data, shown) = read_file(&file)?;
            let rows = sample::import::parquet_rows(&shown, data.into())?;
            (
                shown,
                vec![SymbolRows { symbol, rows }],
                Vec::new(),
                details,
            )
        }
        ImportCommand::Json {
            symbol,
            details,
            file,
        } => {
            let (data, shown) = read_file(&file)?;
            let (parts, notes) = sample::import::read_json(&shown, &data, symbol.as_deref())?;
            (shown, parts, notes, details)
        }
    };
    let options = sample::import::Options {
        replace: details.replace,
        details: SymbolDetails {
            name: details.name,
            asset_class: details.asset_class,
        },
        at: sample::import::At::from_env(),
    };
    let done = sample::import::ingest(&market, &shown, parts, notes, &options).await?;
    print!("{}", done.report);
    if done.report.refused() {
        bail!(
            "{shown} was refused: {} error(s); nothing was written",
            done.report.errors
        );
    }
    let span = |s: &platform::marketdata::SymbolInfo| {
        format!("{} ({} to {})", s.symbol, s.first_date, s.last_date)
    };
    let shown_symbols: Vec<String> = done.symbols.iter().take(5).map(span).collect();
    println!(
        "imported {} new session(s) of {} symbol(s): {}{} (data generation {})",
        done.added,
        done.symbols.len(),
        shown_symbols.join(", "),
        if done.symbols.len() > 5 { ", ..." } else { "" },
        done.generation.unwrap_or_default()
    );
    Ok(())
}
