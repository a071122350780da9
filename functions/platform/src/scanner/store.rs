//! [`ScannerStore`] over any [`BlobStore`]. Decoded days are kept for a
//! while so a warm function answers from memory; what this process writes
//! it sees at once, what another process writes after at most `ttl`.

use super::{HistoryMonth, ScanDay, ScanTrade, ScannerStore, codec, history, month_of};
use crate::PortError;
use crate::marketdata::BlobStore;
use crate::marketdata::ranged::RangedReader;
use arrow_array::RecordBatch;
use async_trait::async_trait;
use chrono::NaiveDate;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where scan files live in the market data layout.
pub const PREFIX: &str = "scanner/";

/// The object key of a date's scan.
pub fn key(date: NaiveDate) -> String {
    format!("{PREFIX}{date}.parquet")
}

/// The object key of a month's history (`month` any day of it).
pub fn history_key(month: NaiveDate) -> String {
    format!(
        "{PREFIX}history/{}.parquet",
        month_of(month).format("%Y-%m")
    )
}

/// Decoded days kept at once; the least recently used goes first.
const CACHED_DAYS: usize = 8;

struct Cached<T> {
    at: Instant,
    used: Instant,
    value: T,
}

pub struct ParquetScannerStore {
    blobs: Arc<dyn BlobStore>,
    ttl: Duration,
    days: Mutex<HashMap<NaiveDate, Cached<Option<Arc<ScanDay>>>>>,
    dates: Mutex<Option<Cached<Arc<Vec<NaiveDate>>>>>,
    /// A month file is read, merged and written back: one writer at a time
    /// in this process (a backfill and the nightly job of another process
    /// must not write the same month at once, docs/scanner.md).
    history_writes: tokio::sync::Mutex<()>,
}

impl ParquetScannerStore {
    /// `ttl`: how long a decoded day or the list of dates is trusted.
    pub fn new(blobs: Arc<dyn BlobStore>, ttl: Duration) -> Self {
        ParquetScannerStore {
            blobs,
            ttl,
            days: Mutex::new(HashMap::new()),
            dates: Mutex::new(None),
            history_writes: tokio::sync::Mutex::new(()),
        }
    }

    fn remember(&self, date: NaiveDate, value: Option<Arc<ScanDay>>) {
        let now = Instant::now();
        let mut days = self.days.lock();
        days.insert(
            date,
            Cached {
                at: now,
                used: now,
                value,
            },
        );
        while days.len() > CACHED_DAYS {
            let oldest = days
                .iter()
                .min_by_key(|(_, c)| c.used)
                .map(|(d, _)| *d)
                .expect("not empty");
            days.remove(&oldest);
        }
    }
}

fn replaced(date: NaiveDate) -> PortError {
    PortError::unavailable(format!(
        "the scan of {date} was replaced while being read; ask again"
    ))
}

/// Which columns a read decodes.
#[derive(Clone, Copy, PartialEq)]
enum Columns {
    /// Everything but the trade lists.
    Summary,
    /// The trade lists, with the symbol and signal that check them.
    Trades,
}

/// Reads some columns (and, with `rows`, only those rows of `total`) of a
/// date's file through ranged requests; `None` when the date has no scan.
async fn read(
    blobs: &Arc<dyn BlobStore>,
    date: NaiveDate,
    columns: Columns,
    rows: Option<(&[usize], usize)>,
) -> Result<Option<RecordBatch>, PortError> {
    use parquet::arrow::arrow_reader::{ArrowReaderOptions, RowSelection};
    use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
    use parquet::file::metadata::PageIndexPolicy;
    let key = key(date);
    let Some(size) = blobs.size(&key).await? else {
        return Ok(None);
    };
    let reader = RangedReader::new(blobs.clone(), key.clone(), size);
    let selection = rows.map(|(rows, total)| {
        let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
        for r in rows {
            match ranges.last_mut() {
                Some(last) if last.end == *r => last.end += 1,
                _ => ranges.push(*r..*r + 1),
            }
        }
        RowSelection::from_consecutive_ranges(ranges.into_iter(), total)
    });
    let bad = move |e: parquet::errors::ParquetError| match e {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<PortError>() {
            Ok(port) => *port,
            Err(other) => PortError::internal(format!("{key}: {other}")),
        },
        other => PortError::internal(format!("{key}: {other}")),
    };
    // Decoding is CPU work: each row group is fetched here and decoded on
    // the blocking pool. (Driving the fetches from a blocking thread would
    // hold it while they wait, and with the pool full of such waits none
    // would be left for them.)
    let options = if selection.is_some() {
        ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional)
    } else {
        ArrowReaderOptions::new()
    };
    let mut builder = ParquetRecordBatchStreamBuilder::new_with_options(reader, options)
        .await
        .map_err(&bad)?;
    let wanted: Vec<usize> = builder
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            let list = codec::TRADE_COLUMNS.contains(&f.name().as_str());
            match columns {
                Columns::Summary => !list,
                Columns::Trades => list || f.name() == "symbol" || f.name() == "signal",
            }
        })
        .map(|(i, _)| i)
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), wanted);
    builder = builder.with_projection(mask).with_batch_size(64 * 1024);
    if let Some(s) = selection {
        builder = builder.with_row_selection(s);
    }
    let schema = builder.schema().clone();
    let mut groups = builder.build().map_err(&bad)?;
    let mut batches: Vec<RecordBatch> = Vec::new();
    while let Some(group) = groups.next_row_group().await.map_err(&bad)? {
        let decoded = tokio::task::spawn_blocking(move || {
            group.collect::<Result<Vec<RecordBatch>, arrow_schema::ArrowError>>()
        })
        .await
        .map_err(PortError::internal)?
        .map_err(PortError::internal)?;
        batches.extend(decoded);
    }
    let projected = batches.first().map(|b| b.schema()).unwrap_or(schema);
    let batch =
        arrow_select::concat::concat_batches(&projected, &batches).map_err(PortError::internal)?;
    Ok(Some(batch))
}

fn date_of(key: &str) -> Option<NaiveDate> {
    key.strip_prefix(PREFIX)?
        .strip_suffix(".parquet")?
        .parse()
        .ok()
}

#[async_trait]
impl ScannerStore for ParquetScannerStore {
    async fn put(&self, day: ScanDay) -> Result<(), PortError> {
        let date = day.date;
        let (bytes, summary) = tokio::task::spawn_blocking(move || {
            let bytes = codec::to_bytes(&day)?;
            let mut summary = day;
            for r in &mut summary.rows {
                r.trades = Vec::new();
            }
            Ok::<_, PortError>((bytes, summary))
        })
        .await
        .map_err(PortError::internal)??;
        self.blobs.put(&key(date), bytes).await?;
        let recorded = HistoryMonth::of_day(&summary);
        self.remember(date, Some(Arc::new(summary)));
        if let Some(c) = self.dates.lock().as_mut()
            && let Err(at) = c.value.binary_search(&date)
        {
            let mut v = c.value.as_ref().clone();
            v.insert(at, date);
            c.value = Arc::new(v);
        }
        self.put_history(recorded).await
    }

    async fn day(&self, date: NaiveDate) -> Result<Option<Arc<ScanDay>>, PortError> {
        {
            let mut days = self.days.lock();
            if let Some(c) = days.get_mut(&date)
                && c.at.elapsed() < self.ttl
            {
                c.used = Instant::now();
                return Ok(c.value.clone());
            }
        }
        let value = match read(&self.blobs, date, Columns::Summary, None).await? {
            Some(b) => Some(Arc::new(codec::from_batch(date, &b)?)),
            None => None,
        };
        self.remember(date, value.clone());
        Ok(value)
    }

    async fn trades(
        &self,
        day: &ScanDay,
        rows: &[usize],
    ) -> Result<Vec<Vec<ScanTrade>>, PortError> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let mut sorted = rows.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let total = day.rows.len();
        if sorted.last().is_some_and(|r| *r >= total) {
            return Err(PortError::Invalid(format!(
                "scan of {}: no row {} (it has {total})",
                day.date,
                sorted.last().expect("not empty")
            )));
        }
        let batch = read(
            &self.blobs,
            day.date,
            Columns::Trades,
            Some((&sorted, total)),
        )
        .await?
        .ok_or_else(|| replaced(day.date))?;
        let found = codec::trades_from_batch(&batch)?;
        if found.len() != sorted.len() {
            return Err(replaced(day.date));
        }
        let mut by_row = HashMap::with_capacity(sorted.len());
        for (row, (symbol, signal, trades)) in sorted.iter().zip(found) {
            let expected = &day.rows[*row];
            // Another run may have replaced the file since `day` was read.
            if expected.symbol != symbol || expected.signal != signal {
                self.days.lock().remove(&day.date);
                return Err(replaced(day.date));
            }
            by_row.insert(*row, trades);
        }
        Ok(rows.iter().map(|r| by_row[r].clone()).collect())
    }

    async fn dates(&self) -> Result<Arc<Vec<NaiveDate>>, PortError> {
        if let Some(c) = self.dates.lock().as_ref()
            && c.at.elapsed() < self.ttl
        {
            return Ok(c.value.clone());
        }
        let mut found: Vec<NaiveDate> = self
            .blobs
            .list(PREFIX)
            .await?
            .iter()
            .filter_map(|k| date_of(k))
            .collect();
        found.sort();
        found.dedup();
        let value = Arc::new(found);
        let now = Instant::now();
        *self.dates.lock() = Some(Cached {
            at: now,
            used: now,
            value: value.clone(),
        });
        Ok(value)
    }

    async fn put_history(&self, month: HistoryMonth) -> Result<(), PortError> {
        let Some(first) = month.sessions.first() else {
            return Ok(());
        };
        let name = month_of(*first);
        if month.sessions.iter().any(|d| month_of(*d) != name) {
            return Err(PortError::Invalid(format!(
                "scanner history: sessions outside the month of {name}"
            )));
        }
        let _one = self.history_writes.lock().await;
        let key = history_key(name);
        let old = self.blobs.get(&key).await?;
        let bytes = tokio::task::spawn_blocking(move || {
            let merged = match old {
                Some(b) => history::from_bytes(b)?.merged(month),
                None => HistoryMonth::default().merged(month),
            };
            history::to_bytes(&merged)
        })
        .await
        .map_err(PortError::internal)??;
        self.blobs.put(&key, bytes).await
    }

    async fn history(&self, month: NaiveDate) -> Result<Option<HistoryMonth>, PortError> {
        let Some(bytes) = self.blobs.get(&history_key(month)).await? else {
            return Ok(None);
        };
        let month = tokio::task::spawn_blocking(move || history::from_bytes(bytes))
            .await
            .map_err(PortError::internal)??;
        Ok(Some(month))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_dates() {
        let d = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        assert_eq!(key(d), "scanner/2026-11-20.parquet");
        assert_eq!(date_of(&key(d)), Some(d));
        assert_eq!(date_of("scanner/.2026-11-20.parquet.tmp"), None);
        assert_eq!(date_of("scanner/notes.txt"), None);
        assert_eq!(history_key(d), "scanner/history/2026-11.parquet");
        assert_eq!(date_of(&history_key(d)), None);
    }

    /// As the market data's reads: two blocking threads serve eight reads
    /// at once of days and their trades (each read held a blocking thread
    /// while its fetches waited for one).
    #[test]
    fn reads_at_once_beyond_the_blocking_threads_all_finish() {
        let runtime = crate::two_blocking_threads();
        runtime.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let blobs: Arc<dyn BlobStore> = Arc::new(crate::marketdata::LocalDir::new(dir.path()));
            let day = super::super::codec::tests::day();
            let dates: Vec<NaiveDate> = (0..8).map(|k| day.date - chrono::Days::new(k)).collect();
            let writer = ParquetScannerStore::new(blobs.clone(), Duration::from_secs(60));
            for d in &dates {
                writer
                    .put(ScanDay {
                        date: *d,
                        ..day.clone()
                    })
                    .await
                    .unwrap();
            }
            // A store of its own: nothing decoded is remembered yet.
            let store = Arc::new(ParquetScannerStore::new(blobs, Duration::from_secs(60)));
            let reads = dates.iter().map(|d| {
                let (store, d) = (store.clone(), *d);
                tokio::spawn(async move {
                    let got = store.day(d).await?.expect("the day was written");
                    let trades = store.trades(&got, &[0, 1]).await?;
                    Ok::<_, PortError>((got, trades))
                })
            });
            // Bounded only so that a regression fails rather than hangs.
            let all =
                tokio::time::timeout(Duration::from_secs(60), futures::future::join_all(reads))
                    .await
                    .expect("every read finished");
            for (read, d) in all.into_iter().zip(&dates) {
                let (got, trades) = read.unwrap().unwrap();
                assert_eq!(got.date, *d);
                assert_eq!(got.rows.len(), day.rows.len());
                assert!(got.rows.iter().all(|r| r.trades.is_empty()), "a summary");
                let want: Vec<_> = day.rows.iter().map(|r| r.trades.clone()).collect();
                assert_eq!(trades, want);
            }
        });
    }
}
