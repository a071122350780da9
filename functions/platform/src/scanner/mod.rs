//! Scanner day files: the nightly job writes each date's scanner items as
//! one Parquet object (`scanner/<YYYY-MM-DD>.parquet`, docs/data-layout.md)
//! in the market data store; the scanner's endpoints read them and never
//! scan the universe per request.

mod codec;
mod store;

pub use store::{ParquetScannerStore, key};

/// How long a reader trusts what it decoded: another process's scan shows
/// within this time.
pub const READ_TTL: std::time::Duration = std::time::Duration::from_secs(60);

use crate::PortError;
use async_trait::async_trait;
use chrono::NaiveDate;
use engine::scanner::stats::{ExitReason, Figures};
use engine::scanner::{Direction, Horizon};
use std::sync::Arc;

/// One earlier firing's trade, as the scanner item's `backtest_info` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanTrade {
    pub entry_date: NaiveDate,
    pub exit_date: NaiveDate,
    pub entry_price: f64,
    pub exit_price: f64,
    /// Percent, in the trade's direction.
    pub ret: f64,
    pub reason: ExitReason,
}

/// A signal that fired for a stock on the day, with its statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanRow {
    pub symbol: String,
    pub signal: String,
    pub horizon: Horizon,
    pub direction: Direction,
    pub close: f64,
    /// Percent.
    pub profit_target: f64,
    /// Percent, positive.
    pub stop_loss: f64,
    /// Sessions a trade is held at most.
    pub time_in_market: u32,
    pub figures: Figures,
    pub trend_score: Option<f64>,
    pub rel_trend_score: Option<f64>,
    pub optix: Option<f64>,
    /// The benchmark's trend on the day: `Uptrend` or `Downtrend`.
    pub market: String,
    pub trades: Vec<ScanTrade>,
}

/// A date's scanner items, ordered by symbol, then signal.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanDay {
    pub date: NaiveDate,
    pub rows: Vec<ScanRow>,
}

#[async_trait]
pub trait ScannerStore: Send + Sync {
    /// Writes a date's items, replacing any earlier scan of that date whole.
    async fn put(&self, day: ScanDay) -> Result<(), PortError>;
    /// A date's items without their trade lists (`trades` is empty), or
    /// `None` when the date has no scan.
    async fn day(&self, date: NaiveDate) -> Result<Option<Arc<ScanDay>>, PortError>;
    /// The trade lists of some of `day`'s rows (indices into `day.rows`), in
    /// the order asked; only those rows are read.
    async fn trades(&self, day: &ScanDay, rows: &[usize])
    -> Result<Vec<Vec<ScanTrade>>, PortError>;
    /// The dates that have a scan, ascending.
    async fn dates(&self) -> Result<Arc<Vec<NaiveDate>>, PortError>;
}
