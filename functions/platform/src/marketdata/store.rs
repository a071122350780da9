//! [`MarketData`] over any [`BlobStore`]: decodes Parquet once and keeps the
//! decoded columns for the life of the process (warm Lambdas included).

use super::cache::Cache;
use super::codec::{self, to_parquet};
use super::staging::Staging;
use super::{BlobStore, IndicatorMeta, IndicatorSeries, MarketData, SymbolInfo, layout};
use crate::PortError;
use arrow_array::RecordBatch;
use async_trait::async_trait;
use engine::Bars;
use std::sync::Arc;

/// Decoded data kept in memory, by default: bars (every symbol of a spec-scale
/// set fits, about 700 MB) and indicator series (a few thousand of 22,000;
/// the rest are read again when asked for, a few hundred microseconds each).
/// `MARKETLAB_CACHE_MB` scales both.
pub const BARS_CACHE_MB: usize = 768;
pub const SERIES_CACHE_MB: usize = 256;
/// Readings kept per indicator for the snapshot and bulk answers (the bulk
/// form's `days` is at most 90).
pub const TAIL: usize = 90;

fn budgets() -> (usize, usize) {
    let scale = std::env::var("MARKETLAB_CACHE_MB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(1.0, |mb| {
            mb as f64 / (BARS_CACHE_MB + SERIES_CACHE_MB) as f64
        });
    let mb = |n: usize| ((n as f64 * scale) as usize).max(1) << 20;
    (mb(BARS_CACHE_MB), mb(SERIES_CACHE_MB))
}

fn bars_weight(b: &Bars) -> usize {
    b.len() * (std::mem::size_of::<chrono::NaiveDateTime>() + 5 * 8) + 64
}

fn series_weight(s: &IndicatorSeries) -> usize {
    s.time.len()
        * (std::mem::size_of::<chrono::NaiveDateTime>() + 8 + std::mem::size_of::<Option<f64>>())
        + 64
}

/// Where a symbol's bars as traded are kept when splits make them differ
/// from the adjusted ones kept under the object's key.
fn raw_key(key: &str) -> String {
    format!("raw:{key}")
}

pub struct ParquetMarketData {
    blobs: Arc<dyn BlobStore>,
    bars: Cache<Bars>,
    symbols: Cache<Vec<SymbolInfo>>,
    catalog: Cache<Vec<IndicatorMeta>>,
    series: Cache<IndicatorSeries>,
    tails: Cache<IndicatorSeries>,
    tables: Cache<RecordBatch>,
    actions: Cache<Vec<super::actions::Action>>,
    memo: crate::memo::Memo,
    /// The data generation, when this process follows imports made by others.
    watch: Option<super::generation::Watch>,
}

impl ParquetMarketData {
    pub fn new(blobs: Arc<dyn BlobStore>) -> Self {
        let (bars, series) = budgets();
        ParquetMarketData {
            blobs,
            bars: Cache::new("bars", bars, bars_weight),
            symbols: Cache::unbounded("symbols"),
            catalog: Cache::unbounded("catalog"),
            series: Cache::new("series", series, series_weight),
            tails: Cache::unbounded("tails"),
            tables: Cache::unbounded("tables"),
            actions: Cache::unbounded("actions"),
            memo: crate::memo::Memo::default(),
            watch: None,
        }
    }

    /// Follows the data generation: a read at least `every` after the last
    /// check looks for imports made by another process (one conditional
    /// read) and drops what they replaced.
    pub fn checking(mut self, every: std::time::Duration) -> Self {
        self.watch = Some(super::generation::Watch::new(every));
        self
    }

    /// The generation number this process last saw (none before the first
    /// check, or when it does not follow imports).
    pub async fn generation_seen(&self) -> Option<u64> {
        match &self.watch {
            Some(w) => w.number().await,
            None => None,
        }
    }

    /// Drops what the imports since the last check replaced.
    async fn current(&self) {
        use super::generation::Stale;
        let Some(watch) = &self.watch else {
            return;
        };
        match watch.check(self.blobs.as_ref()).await {
            Stale::Nothing => {}
            Stale::Keys(keys) => {
                for k in &keys {
                    self.invalidate(k);
                }
                tracing::info!(objects = keys.len(), "market data: imports seen");
            }
            Stale::All => {
                self.bars.clear();
                self.symbols.clear();
                self.catalog.clear();
                self.series.clear();
                self.tails.clear();
                self.tables.clear();
                self.actions.clear();
            }
        }
    }

    /// Drops an object's decoded forms (every cache is keyed by object key).
    fn invalidate(&self, key: &str) {
        self.bars.invalidate(key);
        self.bars.invalidate(&raw_key(key));
        self.actions.invalidate(key);
        self.symbols.invalidate(key);
        self.catalog.invalidate(key);
        self.series.invalidate(key);
        self.tails.invalidate(key);
        self.tables.invalidate(key);
    }

    pub fn blobs(&self) -> &Arc<dyn BlobStore> {
        &self.blobs
    }

    /// Reads an object's footer, then its column chunks, with ranged reads.
    /// Each row group is fetched here and decoded on the blocking pool, so
    /// no blocking thread ever waits for a fetch (which, from a local
    /// directory, needs a blocking thread of its own: a pool full of such
    /// waits would wait forever).
    async fn load(&self, key: &str, what: String) -> Result<RecordBatch, PortError> {
        use parquet::arrow::ParquetRecordBatchStreamBuilder;
        let size = self
            .blobs
            .size(key)
            .await?
            .ok_or_else(|| PortError::NotFound(what.clone()))?;
        let reader = super::ranged::RangedReader::new(self.blobs.clone(), key, size);
        let bad = |e: parquet::errors::ParquetError| match e {
            parquet::errors::ParquetError::External(inner) => match inner.downcast::<PortError>() {
                Ok(port) => *port,
                Err(other) => PortError::internal(format!("{what}: {other}")),
            },
            other => PortError::internal(format!("{what}: {other}")),
        };
        let builder = ParquetRecordBatchStreamBuilder::new(reader)
            .await
            .map_err(bad)?;
        let schema = builder.schema().clone();
        // One batch of every row of a group: no second copy to concatenate
        // (a table of millions of rows would briefly take twice its size).
        let rows = builder.metadata().file_metadata().num_rows().max(1) as usize;
        let mut groups = builder.with_batch_size(rows).build().map_err(bad)?;
        let mut batches: Vec<RecordBatch> = Vec::new();
        while let Some(group) = groups.next_row_group().await.map_err(bad)? {
            let decoded = tokio::task::spawn_blocking(move || {
                group.collect::<Result<Vec<RecordBatch>, arrow_schema::ArrowError>>()
            })
            .await
            .map_err(PortError::internal)?
            .map_err(|e| PortError::internal(format!("{what}: {e}")))?;
            batches.extend(decoded);
        }
        match batches.len() {
            1 => Ok(batches.remove(0)),
            _ => {
                arrow_select::concat::concat_batches(&schema, &batches).map_err(PortError::internal)
            }
        }
    }

    /// Reads a whole object in one request and decodes it on the blocking
    /// pool: for a sweep of many small objects, one read each instead of a
    /// footer read and then ranged reads.
    async fn load_whole(&self, key: &str, what: String) -> Result<RecordBatch, PortError> {
        let data = self
            .blobs
            .get(key)
            .await?
            .ok_or_else(|| PortError::NotFound(what.clone()))?;
        tokio::task::spawn_blocking(move || {
            codec::from_parquet(data).map_err(|e| PortError::internal(format!("{what}: {e}")))
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

    /// Every recorded split and dividend (none when the table was never written).
    pub async fn corporate_actions(&self) -> Result<Arc<Vec<super::actions::Action>>, PortError> {
        self.current().await;
        let loaded = self
            .actions
            .get_or_load(super::actions::KEY, async {
                match self
                    .load(super::actions::KEY, "corporate actions".into())
                    .await
                {
                    Ok(batch) => super::actions::from_batch(&batch),
                    Err(PortError::NotFound(_)) => Ok(Vec::new()),
                    Err(e) => Err(e),
                }
            })
            .await?;
        Ok(loaded)
    }

    /// Adds `rows` to the corporate actions (an action of the same symbol,
    /// date and kind is replaced) and answers the objects whose adjusted
    /// reads changed: the table and the bars of each symbol named.
    pub async fn write_actions(
        &self,
        rows: Vec<super::actions::Action>,
    ) -> Result<Vec<String>, PortError> {
        let (all, keys) = actions_with(self.corporate_actions().await?.as_ref().clone(), rows);
        self.store(super::actions::KEY, &super::actions::to_batch(&all))
            .await?;
        for k in &keys {
            self.invalidate(k);
        }
        Ok(keys)
    }

    /// [`ParquetMarketData::write_actions`] aside in `staging`: the table is
    /// written there, and the other objects whose adjusted reads change are
    /// named in it, so the commit's generation names them too.
    pub async fn stage_actions(
        &self,
        staging: &mut Staging<'_>,
        rows: Vec<super::actions::Action>,
    ) -> Result<Vec<String>, PortError> {
        let base = self.actions_staged(staging).await?;
        let (all, keys) = actions_with(base.as_ref().clone(), rows);
        staging
            .put(
                super::actions::KEY,
                to_parquet(&super::actions::to_batch(&all))?,
            )
            .await?;
        for k in &keys[1..] {
            staging.also(k);
        }
        Ok(keys)
    }

    async fn splits_of(&self, symbol: &str) -> Result<Vec<(chrono::NaiveDate, f64)>, PortError> {
        Ok(super::actions::splits_of(
            &self.corporate_actions().await?,
            symbol,
        ))
    }

    /// A symbol's daily bars as stored (as traded), read whole and not kept:
    /// what an import merges into.
    pub async fn daily_stored(&self, symbol: &str) -> Result<Bars, PortError> {
        let key = layout::daily_prices(layout::check_name("symbol", symbol)?);
        codec::batch_to_bars(&self.load_whole(&key, format!("symbol '{symbol}'")).await?)
    }

    /// Bars under `key` as traded, kept under their raw key.
    async fn raw_bars(&self, key: &str, what: String) -> Result<Arc<Bars>, PortError> {
        self.bars
            .get_or_load(&raw_key(key), async {
                codec::batch_to_bars(&self.load(key, what).await?)
            })
            .await
    }

    /// Inserts or replaces rows of the symbol catalog, keeping it sorted.
    pub async fn upsert_symbols(&self, rows: Vec<SymbolInfo>) -> Result<(), PortError> {
        let all = self.catalog_with(rows).await?;
        self.store(layout::SYMBOLS, &codec::symbols_to_batch(&all))
            .await?;
        self.symbols.invalidate(layout::SYMBOLS);
        Ok(())
    }

    /// Writes a symbol's daily bars (validated first) aside in `staging`.
    pub async fn stage_daily(
        &self,
        staging: &mut Staging<'_>,
        symbol: &str,
        bars: &Bars,
    ) -> Result<(), PortError> {
        let key = layout::daily_prices(layout::check_name("symbol", symbol)?);
        bars.validate()
            .map_err(|e| PortError::Invalid(format!("{symbol}: {e}")))?;
        let batch = codec::bars_to_batch(bars, false);
        let data = tokio::task::spawn_blocking(move || to_parquet(&batch))
            .await
            .map_err(PortError::internal)??;
        staging.put(&key, data).await
    }

    /// Writes the symbol catalog with `rows` inserted or replaced aside in
    /// `staging`.
    pub async fn stage_symbols(
        &self,
        staging: &mut Staging<'_>,
        rows: Vec<SymbolInfo>,
    ) -> Result<(), PortError> {
        let all = match staging.get(layout::SYMBOLS).await? {
            Some(data) => with_rows(codec::batch_to_symbols(&codec::from_parquet(data)?)?, rows),
            None => self.catalog_with(rows).await?,
        };
        staging
            .put(layout::SYMBOLS, to_parquet(&codec::symbols_to_batch(&all))?)
            .await
    }

    /// Commits `staging` (see [`super::staging`]) and drops what this
    /// process held of the objects it replaced; the generation's number.
    pub async fn commit(&self, staging: Staging<'_>) -> Result<u64, PortError> {
        self.commit_with(staging, |_| {}).await
    }

    /// [`ParquetMarketData::commit`], calling `at` at each step.
    pub async fn commit_with(
        &self,
        staging: Staging<'_>,
        at: impl Fn(super::staging::Step),
    ) -> Result<u64, PortError> {
        let keys = staging.keys();
        let generation = staging.commit_with(at).await?;
        for k in &keys {
            self.invalidate(k);
        }
        Ok(generation)
    }

    /// A staging area over this store's objects.
    pub fn staging(&self) -> Staging<'_> {
        Staging::new(self.blobs.as_ref())
    }

    /// The catalog with `rows` inserted or replaced, sorted.
    async fn catalog_with(&self, rows: Vec<SymbolInfo>) -> Result<Vec<SymbolInfo>, PortError> {
        let all: Vec<SymbolInfo> = match self.symbols().await {
            Ok(existing) => existing.as_ref().clone(),
            Err(PortError::NotFound(_)) => Vec::new(),
            Err(e) => return Err(e),
        };
        Ok(with_rows(all, rows))
    }

    /// A symbol's daily bars as an import sees them: the version written
    /// aside by an earlier file of the same import, else the served one.
    pub async fn daily_staged(
        &self,
        staging: &Staging<'_>,
        symbol: &str,
    ) -> Result<Bars, PortError> {
        let key = layout::daily_prices(layout::check_name("symbol", symbol)?);
        match staging.get(&key).await? {
            Some(data) => codec::batch_to_bars(&codec::from_parquet(data)?),
            None => self.daily_stored(symbol).await,
        }
    }

    /// The corporate actions as an import sees them (see [`Self::daily_staged`]).
    pub async fn actions_staged(
        &self,
        staging: &Staging<'_>,
    ) -> Result<Arc<Vec<super::actions::Action>>, PortError> {
        match staging.get(super::actions::KEY).await? {
            Some(data) => Ok(Arc::new(super::actions::from_batch(&codec::from_parquet(
                data,
            )?)?)),
            None => self.corporate_actions().await,
        }
    }

    /// The symbol catalog as an import sees it (see [`Self::daily_staged`]).
    pub async fn symbols_staged(
        &self,
        staging: &Staging<'_>,
    ) -> Result<Arc<Vec<SymbolInfo>>, PortError> {
        match staging.get(layout::SYMBOLS).await? {
            Some(data) => Ok(Arc::new(codec::batch_to_symbols(&codec::from_parquet(
                data,
            )?)?)),
            None => self.symbols().await,
        }
    }
}

/// `all` with `rows` inserted or replaced by symbol, sorted.
fn with_rows(mut all: Vec<SymbolInfo>, rows: Vec<SymbolInfo>) -> Vec<SymbolInfo> {
    for row in rows {
        all.retain(|s| s.symbol != row.symbol);
        all.push(row);
    }
    all.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    all
}

/// The actions `all` with `rows` added, and the objects whose adjusted
/// reads they change (the table first).
fn actions_with(
    mut all: Vec<super::actions::Action>,
    rows: Vec<super::actions::Action>,
) -> (Vec<super::actions::Action>, Vec<String>) {
    let mut keys = vec![super::actions::KEY.to_string()];
    for row in rows {
        all.retain(|a| {
            !(a.symbol == row.symbol && a.date == row.date && a.kind.name() == row.kind.name())
        });
        for k in [
            layout::daily_prices(&row.symbol),
            layout::intraday_prices(&row.symbol),
        ] {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        all.push(row);
    }
    all.sort_by(|a, b| (&a.symbol, a.date).cmp(&(&b.symbol, b.date)));
    (all, keys)
}

#[async_trait]
impl MarketData for ParquetMarketData {
    fn memo(&self) -> &crate::memo::Memo {
        &self.memo
    }

    async fn daily(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.current().await;
        let key = layout::daily_prices(layout::check_name("symbol", symbol)?);
        self.bars
            .get_or_load(&key, async {
                let raw =
                    codec::batch_to_bars(&self.load(&key, format!("symbol '{symbol}'")).await?)?;
                Ok(super::actions::adjust(&raw, &self.splits_of(symbol).await?))
            })
            .await
    }

    async fn daily_raw(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.current().await;
        if self.splits_of(symbol).await?.is_empty() {
            return self.daily(symbol).await;
        }
        let key = layout::daily_prices(layout::check_name("symbol", symbol)?);
        self.raw_bars(&key, format!("symbol '{symbol}'")).await
    }

    async fn intraday_raw(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.current().await;
        if self.splits_of(symbol).await?.is_empty() {
            return self.intraday(symbol).await;
        }
        let key = layout::intraday_prices(layout::check_name("symbol", symbol)?);
        self.raw_bars(&key, format!("30-minute bars of '{symbol}'"))
            .await
    }

    async fn splits(&self, symbol: &str) -> Result<Vec<(chrono::NaiveDate, f64)>, PortError> {
        self.splits_of(symbol).await
    }

    async fn daily_once(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.current().await;
        let key = layout::daily_prices(layout::check_name("symbol", symbol)?);
        if let Some(b) = self.bars.peek(&key) {
            return Ok(b);
        }
        let batch = self.load_whole(&key, format!("symbol '{symbol}'")).await?;
        let raw = codec::batch_to_bars(&batch)?;
        Ok(Arc::new(super::actions::adjust(
            &raw,
            &self.splits_of(symbol).await?,
        )))
    }

    async fn indicator_series_once(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.current().await;
        let key = layout::indicator_series(layout::check_name("indicator", code)?);
        if let Some(s) = self.series.peek(&key) {
            return Ok(s);
        }
        let batch = self.load_whole(&key, format!("indicator '{code}'")).await?;
        Ok(Arc::new(codec::batch_to_series(&batch)?))
    }

    async fn intraday(&self, symbol: &str) -> Result<Arc<Bars>, PortError> {
        self.current().await;
        let key = layout::intraday_prices(layout::check_name("symbol", symbol)?);
        self.bars
            .get_or_load(&key, async {
                let what = format!("30-minute bars of '{symbol}'");
                let raw = codec::batch_to_bars(&self.load(&key, what).await?)?;
                Ok(super::actions::adjust(&raw, &self.splits_of(symbol).await?))
            })
            .await
    }

    async fn symbols(&self) -> Result<Arc<Vec<SymbolInfo>>, PortError> {
        self.current().await;
        self.symbols
            .get_or_load(layout::SYMBOLS, async {
                codec::batch_to_symbols(&self.load(layout::SYMBOLS, "symbol catalog".into()).await?)
            })
            .await
    }

    async fn indicator_catalog(&self) -> Result<Arc<Vec<IndicatorMeta>>, PortError> {
        self.current().await;
        let key = layout::INDICATOR_CATALOG;
        self.catalog
            .get_or_load(key, async {
                codec::batch_to_catalog(&self.load(key, "indicator catalog".into()).await?)
            })
            .await
    }

    async fn indicator_series(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.current().await;
        let key = layout::indicator_series(layout::check_name("indicator", code)?);
        self.series
            .get_or_load(&key, async {
                codec::batch_to_series(&self.load(&key, format!("indicator '{code}'")).await?)
            })
            .await
    }

    async fn indicator_tail(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.current().await;
        let key = layout::indicator_series(layout::check_name("indicator", code)?);
        self.tails
            .get_or_load(&key, async {
                let s = self.indicator_series(code).await?;
                let from = s.time.len().saturating_sub(TAIL);
                Ok(IndicatorSeries {
                    time: s.time[from..].to_vec(),
                    close: s.close[from..].to_vec(),
                    sentiment: s.sentiment[from..].to_vec(),
                })
            })
            .await
    }

    async fn indicator_intraday(&self, code: &str) -> Result<Arc<IndicatorSeries>, PortError> {
        self.current().await;
        let key = layout::indicator_intraday(layout::check_name("indicator", code)?);
        self.series
            .get_or_load(&key, async {
                let what = format!("intraday indicator '{code}'");
                codec::batch_to_series(&self.load(&key, what).await?)
            })
            .await
    }

    async fn table(&self, name: &str) -> Result<Arc<RecordBatch>, PortError> {
        self.current().await;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweep's reads equal the cached reads and leave the caches as they
    /// were; what is cached already is served from there.
    #[tokio::test]
    async fn a_sweep_reads_once_and_keeps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let md = ParquetMarketData::new(Arc::new(super::super::LocalDir::new(dir.path())));
        let bars = thirty_days();
        md.write_daily("AAA", &bars).await.unwrap();
        let once = md.daily_once("AAA").await.unwrap();
        assert_eq!(*once, bars);
        assert_eq!(md.bars.held(), (0, 0), "a sweep keeps nothing");
        assert!(matches!(
            md.daily_once("NONE").await,
            Err(PortError::NotFound(_))
        ));
        let cached = md.daily("AAA").await.unwrap();
        assert_eq!(md.bars.held().1, 1);
        assert!(Arc::ptr_eq(&md.daily_once("AAA").await.unwrap(), &cached));
    }

    /// Thirty daily bars from 2024-01-01, rising by one a day.
    fn thirty_days() -> Bars {
        let mut bars = Bars::default();
        for i in 0..30u32 {
            let t =
                chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap() + chrono::Days::new(i.into());
            let x = 10.0 + f64::from(i);
            bars.push(
                t.and_hms_opt(0, 0, 0).unwrap(),
                x,
                x + 1.0,
                x - 1.0,
                x,
                100.0,
            );
        }
        bars
    }

    /// Reads from a local directory need blocking threads of their own: a
    /// pool of two, with eight reads at once, serves every one (the read
    /// waited for its fetches on a blocking thread, and two such waits
    /// left none for the fetches).
    #[test]
    fn reads_at_once_beyond_the_blocking_threads_all_finish() {
        let runtime = crate::two_blocking_threads();
        runtime.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let md = Arc::new(ParquetMarketData::new(Arc::new(
                super::super::LocalDir::new(dir.path()),
            )));
            let bars = thirty_days();
            let symbols: Vec<String> = (0..8).map(|k| format!("S{k}")).collect();
            for s in &symbols {
                md.write_daily(s, &bars).await.unwrap();
            }
            let reads = symbols.iter().map(|s| {
                let (md, s) = (md.clone(), s.clone());
                tokio::spawn(async move { md.daily(&s).await })
            });
            // Bounded only so that a regression fails rather than hangs.
            let all = tokio::time::timeout(
                std::time::Duration::from_secs(60),
                futures::future::join_all(reads),
            )
            .await
            .expect("every read finished");
            for read in all {
                assert_eq!(*read.unwrap().unwrap(), bars);
            }
        });
    }
}
