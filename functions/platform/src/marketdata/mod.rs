//! Market data port: bars, symbols, indicators and reference tables, read from
//! Parquet objects laid out as docs/data-layout.md describes.
//!
//! The storage itself is a [`BlobStore`] (a local directory, or S3); decoding and
//! caching live once in [`ParquetMarketData`], so both runtimes read identically.

pub mod actions;
mod blob;
mod cache;
pub mod codec;
pub mod columns;
pub mod generation;
pub mod interchange;
pub mod layout;
pub mod ranged;
pub mod staging;
mod store;
mod traded;
mod under;

pub use blob::{BlobStore, Changed, LocalDir};
pub use store::{ParquetMarketData, TAIL};
pub use traded::AsTraded;
pub use under::Under;

use crate::PortError;
pub use arrow_array::RecordBatch;
use async_trait::async_trait;
use chrono::{NaiveDate, NaiveDateTime};
use engine::{Bars, Frequency};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One tradable (or index) symbol in the price store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SymbolInfo {
    pub symbol: String,
    pub name: String,
    /// `index`, `etf`, `stock`, `commodity` or `currency`.
    pub asset_class: String,
    pub sector: Option<String>,
    pub industry: Option<String>,
    pub exchange: Option<String>,
    /// Universes the symbol belongs to, e.g. `sp500`, `sp1500`, `nasdaq100`, `russell3000`.
    pub universes: Vec<String>,
    pub first_date: NaiveDate,
    pub last_date: NaiveDate,
    pub has_intraday: bool,
}

/// Catalog record of an indicator (backtest 2.13/2.14, data service catalog).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndicatorMeta {
    /// The indicator code (`url` in every API).
    pub url: String,
    pub chart_name: String,
    pub market_symbol: String,
    /// `optix`, `trend`, `reltrend` or `other`.
    pub kind: String,
    /// `Daily`, `Weekly` or `Monthly`.
    pub updated: String,
    /// Sentiment level 0-4 of the latest reading, as text.
    pub sentiment: String,
    pub description: String,
    pub opt_extreme: f64,
    pub pess_extreme: f64,
    pub contrary: bool,
    pub premium: bool,
    pub chart_type: String,
    pub groups: Vec<String>,
    /// e.g. `model` for model indicators; empty otherwise.
    pub subtype: String,
    /// Internal records are left out of public catalogs.
    pub internal: bool,
    /// Whether a 30-minute series exists.
    pub intraday: bool,
}

/// An indicator's readings; `sentiment` is absent for plain series.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndicatorSeries {
    pub time: Vec<NaiveDateTime>,
    pub close: Vec<f64>,
    pub sentiment: Vec<Option<f64>>,
}

#[async_trait]
pub trait MarketData: Send + Sync {
    /// Full daily history of a symbol.
    async fn daily(&self, symbol: &str) -> Result<Arc<Bars>, PortError>;
    /// Full 30-minute history of a symbol.
    async fn intraday(&self, symbol: &str) -> Result<Arc<Bars>, PortError>;
    /// [`MarketData::daily`] as traded: before split adjustment (the same
    /// bars where no split is recorded).
    async fn daily_raw(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.daily(symbol).await
    }
    /// [`MarketData::intraday`] as traded.
    async fn intraday_raw(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.intraday(symbol).await
    }
    /// A symbol's recorded splits as (ex-date, new shares per old), in date
    /// order: what its adjusted bars are adjusted by.
    async fn splits(&self, _symbol: &str) -> Result<Vec<(NaiveDate, f64)>, PortError> {
        Ok(Vec::new())
    }
    async fn symbols(&self) -> Result<Arc<Vec<SymbolInfo>>, PortError>;
    async fn indicator_catalog(&self) -> Result<Arc<Vec<IndicatorMeta>>, PortError>;
    async fn indicator_series(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError>;
    async fn indicator_intraday(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError>;
    /// The latest readings of a daily series (at least the last 90): what
    /// the snapshot and bulk answers read, kept small for every indicator.
    async fn indicator_tail(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.indicator_series(code).await
    }
    /// A named reference table (option chains, fundamentals, news, ...).
    async fn table(&self, name: &str) -> Result<Arc<RecordBatch>, PortError>;

    /// What this store's data were turned into (an index, a decoded table,
    /// a precompressed answer), kept with the data it came from within a
    /// byte budget: one per store, so one per server.
    fn memo(&self) -> &crate::memo::Memo;

    /// [`MarketData::daily`] for a sweep over the whole universe (the nightly
    /// scan): from the cache when there, else read once and not kept, so a
    /// sweep neither evicts what requests read nor holds every symbol at once.
    async fn daily_once(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.daily(symbol).await
    }
    /// [`MarketData::indicator_series`] for a sweep, as [`MarketData::daily_once`].
    async fn indicator_series_once(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.indicator_series(code).await
    }

    /// Bars of `freq` whose dates lie in `[start, end]`. Weekly and monthly bars
    /// aggregate only the daily bars inside the range.
    async fn bars(
        &self,
        symbol: &str,
        freq: Frequency,
        start: Option<NaiveDate>,
        end: Option<NaiveDate>,
    ) -> Result<Bars, PortError> {
        let base = match freq {
            Frequency::Min30 | Frequency::Hourly => self.intraday(symbol).await?,
            _ => self.daily(symbol).await?,
        };
        Ok(base.slice_dates(start, end).resample(freq))
    }

    /// FOMC decision days, ascending, from the `fomc_dates` table (none when
    /// the store has no such table).
    async fn fomc_dates(&self) -> Result<Vec<NaiveDate>, PortError> {
        match self.table("fomc_dates").await {
            Ok(t) => {
                let mut d = codec::date_values(&t, "date")?;
                d.sort();
                Ok(d)
            }
            Err(PortError::NotFound(_)) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// The latest date present in the price store: the platform's "today".
    /// Found once per list of symbols: every strategy of a grid asks.
    async fn latest_date(&self) -> Result<NaiveDate, PortError> {
        let symbols = self.symbols().await?;
        let latest = self.memo().get_or_make("latest date", &symbols, || {
            (symbols.iter().map(|s| s.last_date).max(), 16)
        });
        latest.ok_or_else(|| PortError::NotFound("market data (the store is empty)".into()))
    }
}
