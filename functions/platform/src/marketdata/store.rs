//! [`MarketData`] over any [`BlobStore`]: decodes Parquet once and keeps the
//! decoded columns for the life of the process (warm Lambdas included).

use super::codec::{self, to_parquet};
use super::{BlobStore, IndicatorMeta, IndicatorSeries, MarketData, SymbolInfo, layout};
use crate::PortError;
use arrow_array::RecordBatch;
use async_trait::async_trait;
use engine::Bars;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// A map from key to decoded value. Two concurrent misses may both decode; the
/// result is the same, so that is cheaper than holding a lock across I/O.
struct Cache<T> {
    map: Mutex<HashMap<String, Arc<T>>>,
}

impl<T> Default for Cache<T> {
    fn default() -> Self {
        Cache {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> Cache<T> {
    async fn get_or_load<F>(&self, key: &str, load: F) -> Result<Arc<T>, PortError>
    where
        F: Future<Output = Result<T, PortError>>,
    {
        if let Some(v) = self.map.lock().expect("cache lock").get(key) {
            return Ok(v.clone());
        }
        let v = Arc::new(load.await?);
        self.map
            .lock()
            .expect("cache lock")
            .insert(key.to_string(), v.clone());
        Ok(v)
    }

    fn invalidate(&self, key: &str) {
        self.map.lock().expect("cache lock").remove(key);
    }
}

pub struct ParquetMarketData {
    blobs: Arc<dyn BlobStore>,
    bars: Cache<Bars>,
    symbols: Cache<Vec<SymbolInfo>>,
    catalog: Cache<Vec<IndicatorMeta>>,
    series: Cache<IndicatorSeries>,
    tables: Cache<RecordBatch>,
}

impl ParquetMarketData {
    pub fn new(blobs: Arc<dyn BlobStore>) -> Self {
        ParquetMarketData {
            blobs,
            bars: Cache::default(),
            symbols: Cache::default(),
            catalog: Cache::default(),
            series: Cache::default(),
            tables: Cache::default(),
        }
    }

    pub fn blobs(&self) -> &Arc<dyn BlobStore> {
        &self.blobs
    }

    /// Reads an object's footer, then its column chunks, with ranged reads.
    async fn load(&self, key: &str, what: String) -> Result<RecordBatch, PortError> {
        use futures::TryStreamExt;
        use parquet::arrow::ParquetRecordBatchStreamBuilder;
        let size = self
            .blobs
            .size(key)
            .await?
            .ok_or_else(|| PortError::NotFound(what.clone()))?;
        let reader = super::ranged::RangedReader::new(self.blobs.clone(), key, size);
        // Decoding is CPU work: the whole read runs on the blocking pool, its
        // ranged fetches driven there through the runtime handle.
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let bad = |e: parquet::errors::ParquetError| match e {
                parquet::errors::ParquetError::External(inner) => {
                    match inner.downcast::<PortError>() {
                        Ok(port) => *port,
                        Err(other) => PortError::Internal(format!("{what}: {other}")),
                    }
                }
                other => PortError::Internal(format!("{what}: {other}")),
            };
            handle.block_on(async {
                let builder = ParquetRecordBatchStreamBuilder::new(reader)
                    .await
                    .map_err(bad)?;
                let schema = builder.schema().clone();
                let batches: Vec<RecordBatch> = builder
                    .with_batch_size(64 * 1024)
                    .build()
                    .map_err(bad)?
                    .try_collect()
                    .await
                    .map_err(bad)?;
                arrow_select::concat::concat_batches(&schema, &batches).map_err(PortError::internal)
            })
        })
        .await
        .map_err(PortError::internal)?
    }

    async fn store(&self, key: &str, batch: &RecordBatch) -> Result<(), PortError> {
        self.blobs.put(key, to_parquet(batch)?).await
    }

    /// Replaces a served reference table whole.
    pub async fn write_table(&self, name: &str, batch: &RecordBatch) -> Result<(), PortError> {
        if !layout::TABLES.contains(&name) {
            return Err(PortError::Invalid(format!(
                "'{name}' is not a served table"
            )));
        }
        let key = layout::table(name);
        self.store(&key, batch).await?;
        self.tables.invalidate(&key);
        Ok(())
    }

    /// Replaces a symbol's daily bars (validated first).
    pub async fn write_daily(&self, symbol: &str, bars: &Bars) -> Result<(), PortError> {
        let key = layout::daily_prices(layout::check_name("symbol", symbol)?);
        bars.validate()
            .map_err(|e| PortError::Invalid(format!("{symbol}: {e}")))?;
        self.store(&key, &codec::bars_to_batch(bars, false)).await?;
        self.bars.invalidate(&key);
        Ok(())
    }

    /// Inserts or replaces rows of the symbol catalog, keeping it sorted.
    pub async fn upsert_symbols(&self, rows: Vec<SymbolInfo>) -> Result<(), PortError> {
        let mut all: Vec<SymbolInfo> = match self.symbols().await {
            Ok(existing) => existing.as_ref().clone(),
            Err(PortError::NotFound(_)) => Vec::new(),
            Err(e) => return Err(e),
        };
        for row in rows {
            all.retain(|s| s.symbol != row.symbol);
            all.push(row);
        }
        all.sort_by(|a, b| a.symbol.cmp(&b.symbol));
        self.store(layout::SYMBOLS, &codec::symbols_to_batch(&all))
            .await?;
        self.symbols.invalidate(layout::SYMBOLS);
        Ok(())
    }
}

#[async_trait]
impl MarketData for ParquetMarketData {
    async fn daily(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        let key = layout::daily_prices(layout::check_name("symbol", symbol)?);
        self.bars
            .get_or_load(&key, async {
                codec::batch_to_bars(&self.load(&key, format!("symbol '{symbol}'")).await?)
            })
            .await
    }

    async fn intraday(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        let key = layout::intraday_prices(layout::check_name("symbol", symbol)?);
        self.bars
            .get_or_load(&key, async {
                let what = format!("30-minute bars of '{symbol}'");
                codec::batch_to_bars(&self.load(&key, what).await?)
            })
            .await
    }

    async fn symbols(&self) -> Result<Arc<Vec<SymbolInfo>>, PortError> {
        self.symbols
            .get_or_load(layout::SYMBOLS, async {
                codec::batch_to_symbols(&self.load(layout::SYMBOLS, "symbol catalog".into()).await?)
            })
            .await
    }

    async fn indicator_catalog(&self) -> Result<Arc<Vec<IndicatorMeta>>, PortError> {
        let key = layout::INDICATOR_CATALOG;
        self.catalog
            .get_or_load(key, async {
                codec::batch_to_catalog(&self.load(key, "indicator catalog".into()).await?)
            })
            .await
    }

    async fn indicator_series(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        let key = layout::indicator_series(layout::check_name("indicator", code)?);
        self.series
            .get_or_load(&key, async {
                codec::batch_to_series(&self.load(&key, format!("indicator '{code}'")).await?)
            })
            .await
    }

    async fn indicator_intraday(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        let key = layout::indicator_intraday(layout::check_name("indicator", code)?);
        self.series
            .get_or_load(&key, async {
                let what = format!("intraday indicator '{code}'");
                codec::batch_to_series(&self.load(&key, what).await?)
            })
            .await
    }

    async fn table(&self, name: &str) -> Result<Arc<RecordBatch>, PortError> {
        if !layout::TABLES.contains(&name) {
            return Err(PortError::NotFound(format!("table '{name}'")));
        }
        let key = layout::table(name);
        self.tables
            .get_or_load(&key, async {
                self.load(&key, format!("table '{name}'")).await
            })
            .await
    }
}
