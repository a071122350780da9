//! Checking a presented key: its record read once and kept for
//! [`KEY_REFRESH`] (so a revocation anywhere reaches every instance within
//! that), the secret compared with the stored hash in constant time, and the
//! last-used time written at most once a minute.

use super::{KeyRecord, KeyStore, Pepper, Token};
use crate::PortError;
use crate::clock::Clock;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// How long an instance uses a key's record before reading it again: the
/// bound on how late a revocation or expiry made elsewhere is honoured.
pub const KEY_REFRESH: Duration = crate::accounts::ACCOUNT_REFRESH;
/// How often a key's last-used time is written.
const TOUCH_EVERY: Duration = Duration::from_secs(60);
/// Records kept at most: past it, the oldest reads are dropped.
const CACHED: usize = 100_000;

/// What a presented key comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyVerdict {
    Valid(KeyRecord),
    /// Not a key, unknown, wrong secret, revoked or expired; the reason is
    /// for the caller (it says `revoked` only to the holder of the secret).
    Denied(&'static str),
}

struct Entry {
    /// `None`: no key has this id.
    record: Option<KeyRecord>,
    read: Instant,
    touched: Option<Instant>,
}

type Read = OnceCell<Option<KeyRecord>>;

pub struct KeyChecker {
    store: Arc<dyn KeyStore>,
    pepper: Pepper,
    cache: Mutex<HashMap<String, Entry>>,
    /// Reads under way, by id: a burst on a cold key reads it once.
    inflight: Mutex<HashMap<String, Arc<Read>>>,
    refresh: Duration,
    clock: Arc<dyn Clock>,
}

impl KeyChecker {
    pub fn new(store: Arc<dyn KeyStore>, pepper: Pepper) -> Self {
        KeyChecker {
            store,
            pepper,
            cache: Mutex::default(),
            inflight: Mutex::default(),
            refresh: KEY_REFRESH,
            clock: Arc::new(crate::clock::SystemClock),
        }
    }

    /// Reads a cached record again after `refresh` instead of [`KEY_REFRESH`].
    pub fn with_refresh(mut self, refresh: Duration) -> Self {
        self.refresh = refresh;
        self
    }

    /// Expiry and last-used times on `clock` instead of the system's.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn store(&self) -> &Arc<dyn KeyStore> {
        &self.store
    }

    pub fn pepper(&self) -> &Pepper {
        &self.pepper
    }

    /// Checks `text` as a key.
    pub async fn check(&self, text: &str) -> Result<KeyVerdict, PortError> {
        let Some(token) = Token::parse(text) else {
            return Ok(KeyVerdict::Denied("not an API key"));
        };
        let record = match self.cached(token.id) {
            Some(r) => r,
            None => self.read(token.id).await?,
        };
        let Some(record) = record else {
            return Ok(KeyVerdict::Denied("invalid API key"));
        };
        if record.mode != token.mode || !self.pepper.matches(token.id, token.secret, &record.hash) {
            return Ok(KeyVerdict::Denied("invalid API key"));
        }
        let now = self.clock.now().naive_utc();
        if record.revoked_at.is_some() {
            return Ok(KeyVerdict::Denied("this API key was revoked"));
        }
        if !record.live_at(now) {
            return Ok(KeyVerdict::Denied("this API key has expired"));
        }
        self.touch(token.id, now);
        Ok(KeyVerdict::Valid(record))
    }

    /// Drops what this instance holds of a key (its own revocation).
    pub fn forget(&self, id: &str) {
        self.cache.lock().remove(id);
    }

    fn cached(&self, id: &str) -> Option<Option<KeyRecord>> {
        let cache = self.cache.lock();
        let e = cache.get(id)?;
        (e.read.elapsed() < self.refresh).then(|| e.record.clone())
    }

    async fn read(&self, id: &str) -> Result<Option<KeyRecord>, PortError> {
        let cell = self
            .inflight
            .lock()
            .entry(id.to_string())
            .or_insert_with(|| Arc::new(OnceCell::new()))
            .clone();
        let result = cell.get_or_try_init(|| self.store.get(id)).await.cloned();
        let mut inflight = self.inflight.lock();
        if inflight.get(id).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            inflight.remove(id);
        }
        drop(inflight);
        let record = result?;
        let mut cache = self.cache.lock();
        if cache.len() >= CACHED {
            let refresh = self.refresh;
            cache.retain(|_, e| e.read.elapsed() < refresh);
        }
        let touched = cache.get(id).and_then(|e| e.touched);
        cache.insert(
            id.to_string(),
            Entry {
                record: record.clone(),
                read: Instant::now(),
                touched,
            },
        );
        Ok(record)
    }

    /// Writes the last-used time in the background, once a minute at most.
    fn touch(&self, id: &str, now: chrono::NaiveDateTime) {
        {
            let mut cache = self.cache.lock();
            let Some(e) = cache.get_mut(id) else { return };
            if e.touched.is_some_and(|t| t.elapsed() < TOUCH_EVERY) {
                return;
            }
            e.touched = Some(Instant::now());
        }
        let (store, id) = (self.store.clone(), id.to_string());
        tokio::spawn(async move {
            if let Err(e) = store.touch(&id, now).await {
                tracing::warn!(error = %e, "key last-used time not written");
            }
        });
    }
}
