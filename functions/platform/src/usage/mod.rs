//! What each account used, counted per day: requests per service, task
//! compute milliseconds per task kind, rows and bytes the data service
//! returned. Counters only grow; a store adds to them atomically, so any
//! number of processes (or Lambda instances) may add at once.
//!
//! Requests do not write to the store: they add to a [`Meter`] in memory,
//! which a background flush empties into the store every few seconds.

use crate::{PortError, PortResult};
use async_trait::async_trait;
use chrono::NaiveDate;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};

#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "sqlite")]
pub use sqlite::SqliteUsageStore;

/// An amount to add to one counter of an account on a day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    pub account: String,
    pub day: NaiveDate,
    /// `requests:<service>`, `compute_ms:<task kind>`, `rows:data`, `bytes:data`.
    pub counter: String,
    pub n: u64,
}

/// An account's counters on one day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageDay {
    pub day: NaiveDate,
    pub counters: BTreeMap<String, u64>,
}

/// Days from the first to the last, both included.
pub type DateSpan = std::ops::RangeInclusive<NaiveDate>;

#[async_trait]
pub trait UsageStore: Send + Sync {
    /// Adds each count to its counter (created at zero when new).
    async fn add(&self, counts: &[Count]) -> Result<(), PortError>;

    /// The account's days with any usage within `span`, ascending.
    async fn days(&self, account: &str, span: DateSpan) -> PortResult<Vec<UsageDay>>;
}

/// Counts gathered in memory until the next flush: recording is a map
/// update under a lock, far below a millisecond, and allocates only for a
/// counter not seen since the last flush.
#[derive(Default)]
pub struct Meter {
    /// Account, then day and counter.
    pending: Mutex<HashMap<String, Days>>,
    /// When the oldest count not yet flushed was recorded: its age at the
    /// flush is the metering flush lag.
    since: Mutex<Option<std::time::Instant>>,
}

/// One account's pending counts: day, then counter.
type Days = HashMap<NaiveDate, HashMap<String, u64>>;

impl Meter {
    pub fn record(&self, account: &str, day: NaiveDate, counter: &str, n: u64) {
        if n == 0 {
            return;
        }
        let mut p = self.pending.lock();
        if p.is_empty() {
            self.since
                .lock()
                .get_or_insert_with(std::time::Instant::now);
        }
        let days = match p.get_mut(account) {
            Some(d) => d,
            None => p.entry(account.to_string()).or_default(),
        };
        let counters = days.entry(day).or_default();
        match counters.get_mut(counter) {
            Some(c) => *c += n,
            None => {
                counters.insert(counter.to_string(), n);
            }
        }
    }

    /// Counts not yet flushed for `account` in `day`'s month, over the
    /// counters starting with `prefix`.
    pub fn pending(&self, account: &str, day: NaiveDate, prefix: &str) -> u64 {
        use chrono::Datelike;
        let p = self.pending.lock();
        p.get(account)
            .into_iter()
            .flat_map(|days| days.iter())
            .filter(|(d, _)| (d.year(), d.month()) == (day.year(), day.month()))
            .flat_map(|(_, counters)| counters.iter())
            .filter(|(c, _)| c.starts_with(prefix))
            .map(|(_, n)| *n)
            .sum()
    }

    /// Moves what was recorded into `store`. On failure the counts go back
    /// to the meter for the next flush, so none are lost or doubled.
    pub async fn flush(&self, store: &dyn UsageStore) -> Result<usize, PortError> {
        let (taken, since): (Vec<Count>, _) = {
            let mut p = self.pending.lock();
            let since = self.since.lock().take();
            let mut out = Vec::new();
            for (account, days) in p.drain() {
                for (day, counters) in days {
                    for (counter, n) in counters {
                        out.push(Count {
                            account: account.clone(),
                            day,
                            counter,
                            n,
                        });
                    }
                }
            }
            (out, since)
        };
        if taken.is_empty() {
            return Ok(0);
        }
        match store.add(&taken).await {
            Ok(()) => {
                if let Some(at) = since {
                    crate::telemetry::metering_flushed(at.elapsed());
                }
                Ok(taken.len())
            }
            Err(e) => {
                // The counts go back, and with them the lag's start.
                if let Some(at) = since {
                    let mut s = self.since.lock();
                    *s = Some(s.map_or(at, |t| t.min(at)));
                }
                for c in taken {
                    self.record(&c.account, c.day, &c.counter, c.n);
                }
                Err(e)
            }
        }
    }
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_meter_sums_in_memory_and_keeps_counts_a_store_refused() {
        struct Refuses;
        #[async_trait]
        impl UsageStore for Refuses {
            async fn add(&self, _: &[Count]) -> Result<(), PortError> {
                Err(PortError::unavailable("down"))
            }
            async fn days(&self, _: &str, _: DateSpan) -> PortResult<Vec<UsageDay>> {
                Ok(Vec::new())
            }
        }
        let d = NaiveDate::from_ymd_opt(2026, 11, 24).unwrap();
        let m = Meter::default();
        m.record("a@x", d, "requests:backtest", 1);
        m.record("a@x", d, "requests:backtest", 2);
        m.record("b@x", d, "requests:backtest", 0);
        assert!(m.flush(&Refuses).await.is_err());
        let db = crate::sqlite::Database::open(&tempfile::tempdir().unwrap().path().join("u.db"))
            .unwrap();
        let store = SqliteUsageStore::new(db);
        assert_eq!(m.flush(&store).await.unwrap(), 1);
        assert_eq!(m.flush(&store).await.unwrap(), 0);
        let days = store.days("a@x", d..=d).await.unwrap();
        assert_eq!(days[0].counters["requests:backtest"], 3);
    }
}
