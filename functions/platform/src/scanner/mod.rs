//! Scanner day files: the nightly job writes each date's scanner items as
//! one Parquet object (`scanner/<YYYY-MM-DD>.parquet`, docs/data-layout.md)
//! in the market data store; the scanner's endpoints read them and never
//! scan the universe per request.

mod codec;
mod history;
mod store;

pub use store::{ParquetScannerStore, history_key, key};

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

/// What one firing of a signal says: the trade it suggests and the
/// statistics of the signal's earlier trades, with the stock's scores. The
/// day file's row and the history's item both carry one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
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
}

/// A signal that fired for a stock on the day, with its statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanRow {
    pub symbol: String,
    pub signal: String,
    pub horizon: Horizon,
    pub reading: Reading,
    /// The benchmark's trend on the day: `Uptrend` or `Downtrend`.
    pub market: String,
    pub trades: Vec<ScanTrade>,
}

impl std::ops::Deref for ScanRow {
    type Target = Reading;
    fn deref(&self) -> &Reading {
        &self.reading
    }
}

/// A date's scanner items, ordered by symbol, then signal.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanDay {
    pub date: NaiveDate,
    pub rows: Vec<ScanRow>,
}

/// One item of the scanner's history: a day file's row without its trade
/// list, its category or the market's trend (the scanner backtest reads
/// none of them), its text as indices.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryItem {
    /// Index into the month's `sessions`.
    pub session: u32,
    /// Index into the month's `symbols`.
    pub symbol: u32,
    /// Index into [`engine::scanner::SIGNALS`].
    pub signal: u16,
    pub reading: Reading,
}

/// A signal's firing, read like a field of its row or item.
impl std::ops::Deref for HistoryItem {
    type Target = Reading;
    fn deref(&self) -> &Reading {
        &self.reading
    }
}

/// The scanner's items of the sessions of one calendar month that were
/// scanned: what a backtest over years reads instead of scanning again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryMonth {
    /// The sessions covered, ascending; a session may have no item.
    pub sessions: Vec<NaiveDate>,
    pub symbols: Vec<Arc<str>>,
    /// Ordered by session.
    pub items: Vec<HistoryItem>,
}

/// The first day of `date`'s month: how months are named.
pub fn month_of(date: NaiveDate) -> NaiveDate {
    use chrono::Datelike;
    date.with_day(1).expect("every month has a first day")
}

impl HistoryMonth {
    /// A scanned day's items as history.
    pub fn of_day(day: &ScanDay) -> Self {
        let mut symbols: Vec<Arc<str>> = Vec::new();
        let items = day
            .rows
            .iter()
            .filter_map(|r| {
                let signal = engine::scanner::SIGNALS
                    .iter()
                    .position(|s| s.name == r.signal)?;
                if symbols.last().is_none_or(|s| **s != *r.symbol) {
                    symbols.push(Arc::from(r.symbol.as_str()));
                }
                Some(HistoryItem {
                    session: 0,
                    symbol: (symbols.len() - 1) as u32,
                    signal: signal as u16,
                    reading: r.reading,
                })
            })
            .collect();
        HistoryMonth {
            sessions: vec![day.date],
            symbols,
            items,
        }
    }

    /// `self` with `newer`'s sessions (ascending) replaced whole by `newer`'s items.
    pub fn merged(self, newer: HistoryMonth) -> HistoryMonth {
        let mut sessions = self.sessions.clone();
        sessions.extend(newer.sessions.iter().copied());
        sessions.sort();
        sessions.dedup();
        let mut symbols: Vec<Arc<str>> = Vec::new();
        let mut index: std::collections::HashMap<Arc<str>, u32> = Default::default();
        let mut items: Vec<HistoryItem> = Vec::with_capacity(self.items.len() + newer.items.len());
        let replaced = |d: &NaiveDate| newer.sessions.binary_search(d).is_ok();
        let old = self
            .items
            .iter()
            .filter(|it| !replaced(&self.sessions[it.session as usize]))
            .map(|it| (&self, it));
        for (from, it) in old.chain(newer.items.iter().map(|it| (&newer, it))) {
            let date = from.sessions[it.session as usize];
            let name = &from.symbols[it.symbol as usize];
            let symbol = *index.entry(name.clone()).or_insert_with(|| {
                symbols.push(name.clone());
                (symbols.len() - 1) as u32
            });
            items.push(HistoryItem {
                session: sessions.binary_search(&date).expect("listed") as u32,
                symbol,
                ..it.clone()
            });
        }
        // Stable: within a session the items keep their order.
        items.sort_by_key(|it| it.session);
        HistoryMonth {
            sessions,
            symbols,
            items,
        }
    }
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
    /// Records a month's sessions in the history, replacing those sessions
    /// whole and keeping the month's others; `put` records its day too.
    async fn put_history(&self, month: HistoryMonth) -> Result<(), PortError>;
    /// The history of the month starting on `month` (see [`month_of`]), or
    /// `None` when none of its sessions was recorded.
    async fn history(&self, month: NaiveDate) -> Result<Option<HistoryMonth>, PortError>;
}

/// A reading for tests of the scanner's files.
#[cfg(test)]
pub(crate) fn test_reading(direction: Direction, close: f64, trades: usize) -> Reading {
    Reading {
        direction,
        close,
        profit_target: 4.5,
        stop_loss: 3.375,
        time_in_market: 5,
        figures: Figures {
            trade_number: trades,
            win_rate: 50.0,
            avg_win: 2.0,
            avg_loss: -1.0,
            avg_return: 0.5,
            median_return: 0.5,
            std_dev: 2.1,
            annual_return: 28.0,
            max_risk: 1.0,
            sharpe_ratio: 1.5,
            z_score: 0.33,
            expected_return: 0.5,
            avg_hold: 4.5,
        },
        trend_score: Some(7.0),
        rel_trend_score: None,
        optix: Some(41.5),
    }
}
