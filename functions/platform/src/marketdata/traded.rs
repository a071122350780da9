//! The market data as traded: bars before split adjustment, for a request
//! that asks for them (`adjusted: false`); everything else as the store
//! answers it.

use super::{IndicatorMeta, IndicatorSeries, MarketData, RecordBatch, SymbolInfo};
use crate::PortError;
use async_trait::async_trait;
use chrono::NaiveDate;
use engine::Bars;
use std::sync::Arc;

pub struct AsTraded<'a>(pub &'a dyn MarketData);

#[async_trait]
impl MarketData for AsTraded<'_> {
    async fn daily(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.0.daily_raw(symbol).await
    }
    async fn intraday(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.0.intraday_raw(symbol).await
    }
    async fn daily_raw(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.0.daily_raw(symbol).await
    }
    async fn intraday_raw(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.0.intraday_raw(symbol).await
    }
    async fn daily_once(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.0.daily_raw(symbol).await
    }
    /// As traded, no split adjusts anything.
    async fn splits(&self, _symbol: &str) -> Result<Vec<(NaiveDate, f64)>, PortError> {
        Ok(Vec::new())
    }
    async fn symbols(&self) -> Result<Arc<Vec<SymbolInfo>>, PortError> {
        self.0.symbols().await
    }
    async fn indicator_catalog(&self) -> Result<Arc<Vec<IndicatorMeta>>, PortError> {
        self.0.indicator_catalog().await
    }
    async fn indicator_series(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.0.indicator_series(code).await
    }
    async fn indicator_intraday(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.0.indicator_intraday(code).await
    }
    async fn indicator_tail(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.0.indicator_tail(code).await
    }
    async fn indicator_series_once(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.0.indicator_series_once(code).await
    }
    async fn table(&self, name: &str) -> Result<Arc<RecordBatch>, PortError> {
        self.0.table(name).await
    }
    fn memo(&self) -> &crate::memo::Memo {
        self.0.memo()
    }
    async fn latest_date(&self) -> Result<NaiveDate, PortError> {
        self.0.latest_date().await
    }
    async fn fomc_dates(&self) -> Result<Vec<NaiveDate>, PortError> {
        self.0.fomc_dates().await
    }
}
