//! Checking a presented key: its record read once and kept for
//! [`KEY_REFRESH`] (so a revocation anywhere reaches every instance within
//! that), the secret compared with the stored hash in constant time, and the
//! last-used time written at most once a minute.
//!
//! Only a right secret is answered from memory. A refusal always reads the
//! record and hashes the secret against it, or, for an id no key has, against
//! a fixed dummy hash, so that an unknown id and a wrong secret, whether or
//! not this instance holds the key's record, each cost one read and two
//! hashes, and the time of an answer does not tell whether an id exists.

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
/// What the secret of an id no key has is hashed against: hex like a stored
/// hash, read from hex as one is. No secret's HMAC is this.
const DUMMY_HASH: &str = "6d6c6b5f64756d6d795f686173685f666f725f756e6b6e6f776e5f6b65795f69";
/// [`DUMMY_HASH`]'s bytes.
const DUMMY: [u8; 32] = *b"mlk_dummy_hash_for_unknown_key_i";

/// What a presented key comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyVerdict {
    Valid(Arc<KeyRecord>),
    /// A wrong secret for `id`, or an id no key has: the two are answered
    /// alike, and counted against the id and the account that owns it (none
    /// when no key has the id).
    Wrong {
        id: String,
        account: Option<String>,
    },
    /// Not a key at all, or the right secret of a revoked or expired key;
    /// the reason is for the caller (it says `revoked` only to the holder
    /// of the secret).
    Denied(&'static str),
}

/// The reason given for [`KeyVerdict::Wrong`].
pub const INVALID_KEY: &str = "invalid API key";

/// A key id's record with its stored hash's bytes; for an id no key has,
/// no record and the dummy hash's: both are checked the same way.
#[derive(Clone)]
struct Found {
    record: Option<Arc<KeyRecord>>,
    hash: [u8; 32],
}

impl Found {
    /// What a read of the store came to, the hash read from its hex either way.
    fn of(record: Option<KeyRecord>) -> Found {
        let hash = super::digest(record.as_ref().map_or(DUMMY_HASH, |r| r.hash.as_str()));
        match (record, hash) {
            (Some(r), Some(hash)) => Found {
                record: Some(Arc::new(r)),
                hash,
            },
            // No key, or a stored hash that is not 64 hex digits: matches nothing.
            _ => Found::none(),
        }
    }

    fn none() -> Found {
        Found {
            record: None,
            hash: DUMMY,
        }
    }
}

struct Entry {
    /// Always a key's record: ids no key has are not kept.
    found: Found,
    read: Instant,
    touched: Option<Instant>,
}

type Read = OnceCell<Found>;

pub struct KeyChecker {
    store: Arc<dyn KeyStore>,
    pepper: Pepper,
    cache: Mutex<HashMap<String, Entry>>,
    /// Reads under way, by id: a burst on a cold key reads it once.
    inflight: Mutex<HashMap<String, Arc<Read>>>,
    refresh: Duration,
    clock: Arc<dyn Clock>,
    /// Secrets hashed and compared, counted for the tests that hold the
    /// paths of a check to the same work.
    #[cfg(test)]
    hashed: std::sync::atomic::AtomicUsize,
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
            #[cfg(test)]
            hashed: Default::default(),
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
        // A miss is hashed against the dummy, so every refusal hashes twice.
        let cached = self.cached(token.id).unwrap_or_else(Found::none);
        if let Some(record) = self.verify(&token, &cached) {
            return Ok(self.admit(token.id, record));
        }
        let found = self.read(token.id).await?;
        Ok(match self.verify(&token, &found) {
            Some(record) => self.admit(token.id, record),
            None => KeyVerdict::Wrong {
                id: token.id.to_string(),
                account: found.record.map(|r| r.account.clone()),
            },
        })
    }

    /// Drops what this instance holds of a key (its own revocation).
    pub fn forget(&self, id: &str) {
        self.cache.lock().remove(id);
    }

    /// The record if `token`'s secret is its key's: one HMAC and one
    /// constant-time comparison whether or not there is a record.
    fn verify(&self, token: &Token<'_>, found: &Found) -> Option<Arc<KeyRecord>> {
        #[cfg(test)]
        self.hashed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let matches = self
            .pepper
            .matches_digest(token.id, token.secret, &found.hash);
        found
            .record
            .as_ref()
            .filter(|r| matches && r.mode == token.mode)
            .cloned()
    }

    /// The verdict on a right secret: the key's, unless revoked or expired.
    fn admit(&self, id: &str, record: Arc<KeyRecord>) -> KeyVerdict {
        let now = self.clock.now().naive_utc();
        if record.revoked_at.is_some() {
            return KeyVerdict::Denied("this API key was revoked");
        }
        if !record.live_at(now) {
            return KeyVerdict::Denied("this API key has expired");
        }
        self.touch(id, now);
        KeyVerdict::Valid(record)
    }

    fn cached(&self, id: &str) -> Option<Found> {
        let cache = self.cache.lock();
        let e = cache.get(id)?;
        (e.read.elapsed() < self.refresh).then(|| e.found.clone())
    }

    async fn read(&self, id: &str) -> Result<Found, PortError> {
        let cell = self
            .inflight
            .lock()
            .entry(id.to_string())
            .or_insert_with(|| Arc::new(OnceCell::new()))
            .clone();
        let result = cell
            .get_or_try_init(|| async { self.store.get(id).await.map(Found::of) })
            .await
            .cloned();
        // Kept before the read is let go, so no check in between reads again.
        if let Ok(found) = &result {
            let mut cache = self.cache.lock();
            if found.record.is_none() {
                cache.remove(id);
            } else {
                if cache.len() >= CACHED {
                    let refresh = self.refresh;
                    cache.retain(|_, e| e.read.elapsed() < refresh);
                }
                let touched = cache.get(id).and_then(|e| e.touched);
                cache.insert(
                    id.to_string(),
                    Entry {
                        found: found.clone(),
                        read: Instant::now(),
                        touched,
                    },
                );
            }
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
    use crate::keys::{Mode, issue};
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
            KeyRecord::for_test(&issued, "a@b.example"),
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
        // A refusal is never answered from memory: an unknown id is read
        // each time it is sent.
        let other = issue(Mode::Live, &Pepper::new([2; 32])).unwrap();
        for _ in 0..3 {
            assert_eq!(
                checker.check(&other.key).await.unwrap(),
                KeyVerdict::Wrong {
                    id: other.id.clone(),
                    account: None
                }
            );
        }
        assert_eq!(store.1.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn the_dummy_hash_reads_as_its_bytes() {
        assert_eq!(crate::keys::digest(DUMMY_HASH), Some(DUMMY));
    }

    /// Reads and hashes of one check of `key`, and its verdict.
    async fn work(checker: &KeyChecker, store: &OneKey, key: &str) -> (usize, usize, KeyVerdict) {
        let (reads, hashed) = (
            store.1.load(Ordering::SeqCst),
            checker.hashed.load(Ordering::SeqCst),
        );
        let verdict = checker.check(key).await.unwrap();
        (
            store.1.load(Ordering::SeqCst) - reads,
            checker.hashed.load(Ordering::SeqCst) - hashed,
            verdict,
        )
    }

    #[tokio::test]
    async fn an_unknown_id_takes_the_same_read_and_hashes_as_a_wrong_secret() {
        let pepper = Pepper::new([3; 32]);
        let issued = issue(Mode::Live, &pepper).unwrap();
        let store = OneKey(
            KeyRecord::for_test(&issued, "owner@b.example"),
            AtomicUsize::new(0),
        );
        let store = Arc::new(store);
        let checker = KeyChecker::new(store.clone(), pepper.clone());
        let secret = &issued.key[issued.key.len() - 43..];
        let wrong = issued.key.replace(secret, &"A".repeat(43));
        let unknown = issue(Mode::Live, &pepper).unwrap();
        let known_wrong = KeyVerdict::Wrong {
            id: issued.id.clone(),
            account: Some("owner@b.example".into()),
        };
        let unknown_wrong = KeyVerdict::Wrong {
            id: unknown.id.clone(),
            account: None,
        };
        // Cold: a wrong secret and an unknown id, each one read and two hashes.
        assert_eq!(
            work(&checker, &store, &wrong).await,
            (1, 2, known_wrong.clone())
        );
        assert_eq!(
            work(&checker, &store, &unknown.key).await,
            (1, 2, unknown_wrong.clone())
        );
        // Warm (the key just used by its holder): the same again.
        let (_, _, valid) = work(&checker, &store, &issued.key).await;
        assert!(matches!(valid, KeyVerdict::Valid(_)));
        assert_eq!(
            work(&checker, &store, &wrong).await,
            (1, 2, known_wrong.clone())
        );
        assert_eq!(
            work(&checker, &store, &unknown.key).await,
            (1, 2, unknown_wrong)
        );
        // The right secret under the other mode is a wrong key, checked alike.
        let other_mode = issued.key.replacen("mlk_live_", "mlk_test_", 1);
        assert_eq!(
            work(&checker, &store, &other_mode).await,
            (1, 2, known_wrong)
        );
        // A right secret on a warm key: one hash, no read.
        let (reads, hashed, valid) = work(&checker, &store, &issued.key).await;
        assert_eq!((reads, hashed), (0, 1));
        assert!(matches!(valid, KeyVerdict::Valid(_)));
        // Text without the shape of a key is refused by its shape alone.
        assert_eq!(
            work(&checker, &store, "mlk_live_nope").await,
            (0, 0, KeyVerdict::Denied("not an API key"))
        );
    }
}
