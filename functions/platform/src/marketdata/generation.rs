//! The data generation: a small object every import writes last, naming the
//! objects it changed, so a running process (the embedded server, a warm
//! Lambda instance) learns with one conditional read, at most every few
//! seconds, which of its decoded objects to read again.

use super::{BlobStore, Changed};
use crate::PortError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the generation is kept, beside the symbol catalog.
pub const KEY: &str = "reference/generation.json";

/// How often a process checks the generation unless told otherwise
/// (`MARKETLAB_DATA_CHECK_SECONDS`).
pub const DEFAULT_CHECK: Duration = Duration::from_secs(30);

/// The check interval from `MARKETLAB_DATA_CHECK_SECONDS` (whole or
/// fractional seconds), else [`DEFAULT_CHECK`].
pub fn check_from_env() -> Duration {
    std::env::var("MARKETLAB_DATA_CHECK_SECONDS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(DEFAULT_CHECK, Duration::from_secs_f64)
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    /// Counts imports; each writes the next number.
    pub number: u64,
    /// Every object an import changed, with the generation that changed it
    /// last (one entry an object, so the record stays as small as the layout).
    pub changed: BTreeMap<String, u64>,
}

impl Generation {
    pub fn decode(data: &[u8]) -> Result<Self, PortError> {
        serde_json::from_slice(data)
            .map_err(|e| PortError::internal(format!("{KEY} is unreadable: {e}")))
    }

    /// Objects changed after generation `number`.
    pub fn changed_since(&self, number: u64) -> impl Iterator<Item = &str> {
        self.changed
            .iter()
            .filter(move |(_, n)| **n > number)
            .map(|(k, _)| k.as_str())
    }

    /// The current generation in `blobs` (the first, 0, when none was written).
    pub async fn read(blobs: &dyn BlobStore) -> Result<Generation, PortError> {
        match blobs.get(KEY).await? {
            Some(data) => Generation::decode(&data),
            None => Ok(Generation::default()),
        }
    }

    /// Records `keys` as changed by the next generation and writes it: the
    /// last write of an import, after every object it names. Imports are
    /// serialized by their runner (one ingest at a time), so this
    /// read-then-write does not race another import.
    pub async fn publish(
        blobs: &dyn BlobStore,
        keys: impl IntoIterator<Item = String>,
    ) -> Result<u64, PortError> {
        let mut g = Generation::read(blobs).await?;
        g.number += 1;
        for k in keys {
            g.changed.insert(k, g.number);
        }
        let data = serde_json::to_vec(&g).map_err(PortError::internal)?;
        blobs.put(KEY, data.into()).await?;
        Ok(g.number)
    }
}

/// What a process must drop after a check.
#[derive(Debug, PartialEq)]
pub enum Stale {
    Nothing,
    /// These objects changed.
    Keys(Vec<String>),
    /// Everything may have: the first generation seen, or one that went back.
    All,
}

/// A process's view of the generation: checked when a read finds the last
/// check older than `every`; one check at a time, the others wait for it
/// (so no read after the interval answers from data older than the check).
pub struct Watch {
    every: Duration,
    origin: Instant,
    /// Nanoseconds after `origin` when the next check is due.
    due: AtomicU64,
    seen: tokio::sync::Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    tag: Option<String>,
    number: Option<u64>,
}

impl Watch {
    pub fn new(every: Duration) -> Self {
        Watch {
            every,
            origin: Instant::now(),
            due: AtomicU64::new(0),
            seen: Default::default(),
        }
    }

    fn now(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    /// The generation number last seen, if any.
    pub async fn number(&self) -> Option<u64> {
        self.seen.lock().await.number
    }

    /// Checks the generation when due and says what changed since the last
    /// check. A failed check keeps the data held (and is logged): an
    /// unreachable bucket must not make cached answers fail.
    pub async fn check(&self, blobs: &dyn BlobStore) -> Stale {
        if self.now() < self.due.load(Ordering::Acquire) {
            return Stale::Nothing;
        }
        let mut seen = self.seen.lock().await;
        if self.now() < self.due.load(Ordering::Acquire) {
            return Stale::Nothing;
        }
        let stale = match blobs.get_if_changed(KEY, seen.tag.as_deref()).await {
            Ok(Changed::Same) => Stale::Nothing,
            Ok(Changed::Missing) => {
                // Written by no import yet; if one was seen, it was removed.
                let was = seen.number.take();
                seen.tag = None;
                if was.is_some() {
                    Stale::All
                } else {
                    Stale::Nothing
                }
            }
            Ok(Changed::New { data, tag }) => match Generation::decode(&data) {
                Ok(g) => {
                    let stale = match seen.number {
                        Some(n) if n <= g.number => {
                            Stale::Keys(g.changed_since(n).map(str::to_string).collect())
                        }
                        _ => Stale::All,
                    };
                    seen.number = Some(g.number);
                    seen.tag = Some(tag);
                    stale
                }
                Err(e) => {
                    tracing::warn!(error = %e, "market data: generation not read");
                    Stale::Nothing
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "market data: generation not checked");
                Stale::Nothing
            }
        };
        self.due
            .store(self.now() + self.every.as_nanos() as u64, Ordering::Release);
        stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marketdata::LocalDir;

    #[tokio::test]
    async fn a_watch_names_what_each_import_changed_once() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = LocalDir::new(dir.path());
        // Every read checks (interval zero).
        let watch = Watch::new(Duration::ZERO);
        assert_eq!(watch.check(&blobs).await, Stale::Nothing);
        Generation::publish(&blobs, ["prices/daily/A.parquet".to_string()])
            .await
            .unwrap();
        // The first generation seen: whatever is held may predate it.
        assert_eq!(watch.check(&blobs).await, Stale::All);
        assert_eq!(watch.check(&blobs).await, Stale::Nothing);
        let n = Generation::publish(
            &blobs,
            [
                "prices/daily/B.parquet".to_string(),
                "reference/symbols.parquet".to_string(),
            ],
        )
        .await
        .unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            watch.check(&blobs).await,
            Stale::Keys(vec![
                "prices/daily/B.parquet".into(),
                "reference/symbols.parquet".into()
            ])
        );
        assert_eq!(watch.number().await, Some(2));
        Generation::publish(&blobs, ["prices/daily/A.parquet".to_string()])
            .await
            .unwrap();
        assert_eq!(
            watch.check(&blobs).await,
            Stale::Keys(vec!["prices/daily/A.parquet".into()])
        );
    }

    #[tokio::test]
    async fn between_checks_nothing_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = LocalDir::new(dir.path());
        let watch = Watch::new(Duration::from_secs(3600));
        assert_eq!(watch.check(&blobs).await, Stale::Nothing);
        Generation::publish(&blobs, ["prices/daily/A.parquet".to_string()])
            .await
            .unwrap();
        // Not due for an hour: the change is not looked for yet.
        assert_eq!(watch.check(&blobs).await, Stale::Nothing);
        assert_eq!(watch.number().await, None);
    }
}
