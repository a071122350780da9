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
    Valid(Arc<KeyRecord>),
    /// Not a key, unknown, wrong secret, revoked or expired; the reason is
    /// for the caller (it says `revoked` only to the holder of the secret).
    Denied(&'static str),
}

/// A key's record with its stored hash's bytes; `None`: no key has the id.
type Found = Option<(Arc<KeyRecord>, [u8; 32])>;

struct Entry {
    record: Found,
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
        let Some((record, expected)) = record else {
            return Ok(KeyVerdict::Denied("invalid API key"));
        };
        if record.mode != token.mode
            || !self
                .pepper
                .matches_digest(token.id, token.secret, &expected)
        {
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

    fn cached(&self, id: &str) -> Option<Found> {
        let cache = self.cache.lock();
        let e = cache.get(id)?;
        (e.read.elapsed() < self.refresh).then(|| e.record.clone())
    }

    async fn read(&self, id: &str) -> Result<Found, PortError> {
        let cell = self
            .inflight
            .lock()
            .entry(id.to_string())
            .or_insert_with(|| Arc::new(OnceCell::new()))
            .clone();
        let result = cell.get_or_try_init(|| self.store.get(id)).await.map(|r| {
            // A record whose hash is not 64 hex digits matches nothing.
            r.as_ref()
                .and_then(|r| Some((Arc::new(r.clone()), super::digest(&r.hash)?)))
        });
        // Kept before the read is let go, so no check in between reads again.
        if let Ok(record) = &result {
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
        }
        let mut inflight = self.inflight.lock();
        if inflight.get(id).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            inflight.remove(id);
        }
        drop(inflight);
        result
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Mode, Scope, issue};
    use async_trait::async_trait;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// One key; counts reads.
    struct OneKey(KeyRecord, AtomicUsize);

    #[async_trait]
    impl KeyStore for OneKey {
        async fn get(&self, id: &str) -> Result<Option<KeyRecord>, PortError> {
            self.1.fetch_add(1, Ordering::SeqCst);
            tokio::task::yield_now().await;
            Ok((id == self.0.id).then(|| self.0.clone()))
        }
        async fn insert(&self, _: KeyRecord, _: usize) -> Result<bool, PortError> {
            Ok(false)
        }
        async fn list(&self, _: &str) -> Result<Vec<KeyRecord>, PortError> {
            Ok(vec![self.0.clone()])
        }
        async fn revoke(
            &self,
            _: &str,
            _: &str,
            _: chrono::NaiveDateTime,
        ) -> Result<bool, PortError> {
            Ok(false)
        }
        async fn touch(&self, _: &str, _: chrono::NaiveDateTime) -> Result<(), PortError> {
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_cold_check_is_one_read_and_a_burst_on_a_cold_key_shares_it() {
        let pepper = Pepper::new([2; 32]);
        let issued = issue(Mode::Live, &pepper).unwrap();
        let store = Arc::new(OneKey(
            KeyRecord {
                id: issued.id.clone(),
                account: "a@b.example".into(),
                name: "k".into(),
                scopes: vec![Scope::Read],
                mode: Mode::Live,
                hash: issued.hash,
                created_at: crate::tasks::now(),
                expires_at: None,
                revoked_at: None,
                last_used_at: None,
            },
            AtomicUsize::new(0),
        ));
        let checker = Arc::new(KeyChecker::new(store.clone(), pepper));
        let burst: Vec<_> = (0..16)
            .map(|_| {
                let (c, key) = (checker.clone(), issued.key.clone());
                tokio::spawn(async move { c.check(&key).await.unwrap() })
            })
            .collect();
        for b in burst {
            assert!(matches!(b.await.unwrap(), KeyVerdict::Valid(_)));
        }
        assert_eq!(store.1.load(Ordering::SeqCst), 1, "one read for the burst");
        for _ in 0..100 {
            checker.check(&issued.key).await.unwrap();
        }
        assert_eq!(store.1.load(Ordering::SeqCst), 1, "none while warm");
        // An unknown id is read once and then answered from memory too.
        let other = issue(Mode::Live, &Pepper::new([2; 32])).unwrap();
        for _ in 0..3 {
            assert_eq!(
                checker.check(&other.key).await.unwrap(),
                KeyVerdict::Denied("invalid API key")
            );
        }
        assert_eq!(store.1.load(Ordering::SeqCst), 2);
    }
}
