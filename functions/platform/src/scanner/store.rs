//! [`ScannerStore`] over any [`BlobStore`]. Decoded days are kept for a
//! while so a warm function answers from memory; what this process writes
//! it sees at once, what another process writes after at most `ttl`.

use super::{ScanDay, ScannerStore, codec};
use crate::PortError;
use crate::marketdata::BlobStore;
use async_trait::async_trait;
use chrono::NaiveDate;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where scan files live in the market data layout.
pub const PREFIX: &str = "scanner/";

/// The object key of a date's scan.
pub fn key(date: NaiveDate) -> String {
    format!("{PREFIX}{date}.parquet")
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
}

impl ParquetScannerStore {
    /// `ttl`: how long a decoded day or the list of dates is trusted.
    pub fn new(blobs: Arc<dyn BlobStore>, ttl: Duration) -> Self {
        ParquetScannerStore {
            blobs,
            ttl,
            days: Mutex::new(HashMap::new()),
            dates: Mutex::new(None),
        }
    }

    fn remember(&self, date: NaiveDate, value: Option<Arc<ScanDay>>) {
        let now = Instant::now();
        let mut days = self.days.lock().expect("scanner cache");
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
        let day = Arc::new(day);
        let encode = day.clone();
        let bytes = tokio::task::spawn_blocking(move || codec::to_bytes(&encode))
            .await
            .map_err(PortError::internal)??;
        self.blobs.put(&key(date), bytes).await?;
        self.remember(date, Some(day));
        let mut dates = self.dates.lock().expect("scanner cache");
        if let Some(c) = dates.as_mut()
            && let Err(at) = c.value.binary_search(&date)
        {
            let mut v = c.value.as_ref().clone();
            v.insert(at, date);
            c.value = Arc::new(v);
        }
        Ok(())
    }

    async fn day(&self, date: NaiveDate) -> Result<Option<Arc<ScanDay>>, PortError> {
        {
            let mut days = self.days.lock().expect("scanner cache");
            if let Some(c) = days.get_mut(&date)
                && c.at.elapsed() < self.ttl
            {
                c.used = Instant::now();
                return Ok(c.value.clone());
            }
        }
        let value = match self.blobs.get(&key(date)).await? {
            Some(bytes) => Some(Arc::new(
                tokio::task::spawn_blocking(move || codec::from_bytes(date, bytes))
                    .await
                    .map_err(PortError::internal)??,
            )),
            None => None,
        };
        self.remember(date, value.clone());
        Ok(value)
    }

    async fn dates(&self) -> Result<Arc<Vec<NaiveDate>>, PortError> {
        if let Some(c) = self.dates.lock().expect("scanner cache").as_ref()
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
        *self.dates.lock().expect("scanner cache") = Some(Cached {
            at: now,
            used: now,
            value: value.clone(),
        });
        Ok(value)
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
    }
}
