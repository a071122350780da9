//! Failed-login limits: failures are counted per account, per client
//! address and account together, and per client address. Past a free
//! allowance each further failure of an account, or of an account from one
//! address, locks that key for twice as long as the last (1 s, 2 s, 4 s, ...
//! up to 15 minutes); a locked key is answered without hashing, so guessing
//! one password costs a counter read, not an argon2 hash. An address past
//! its allowance is not locked but slowed ([`super::Trickle`]), so users
//! sharing it with a flood still sign in. Wrong API key secrets are counted
//! the same way per key id and per account owning it ([`LoginPolicy::KEY`]).

use crate::PortError;
use crate::PortResult;
use async_trait::async_trait;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::Duration;

/// Recent failures under one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failures {
    pub count: u32,
    /// Epoch milliseconds of the latest failure.
    pub last_ms: i64,
}

impl Failures {
    /// Whether the latest failure is less than `window` before `now_ms`:
    /// older failures are forgotten.
    pub fn within(&self, now_ms: i64, window: Duration) -> bool {
        now_ms.saturating_sub(self.last_ms) < i64::try_from(window.as_millis()).unwrap_or(i64::MAX)
    }
}

/// How failures under one kind of key turn into a lock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoginPolicy {
    /// Failures allowed before any lock.
    pub free: u32,
    /// The first lock; each further failure doubles it.
    pub base: Duration,
    pub max: Duration,
    /// Failures older than this (after the latest) are forgotten.
    pub window: Duration,
}

impl LoginPolicy {
    /// Per account: a user who mistypes a few times is never slowed.
    pub const ACCOUNT: LoginPolicy = LoginPolicy {
        free: 5,
        base: Duration::from_secs(1),
        max: Duration::from_secs(15 * 60),
        window: Duration::from_secs(15 * 60),
    };
    /// Per account from one client address: its guesses stay locked even
    /// after the account's owner signs in elsewhere (which clears the account's count).
    pub const PAIR: LoginPolicy = LoginPolicy {
        free: 5,
        base: Duration::from_secs(1),
        max: Duration::from_secs(15 * 60),
        window: Duration::from_secs(15 * 60),
    };
    /// Per API key id, whether or not a key has it, and per account owning
    /// the ids: wrong secrets lock the id's (and the account's) refusals as
    /// wrong passwords lock an account.
    pub const KEY: LoginPolicy = LoginPolicy::ACCOUNT;
    /// Per client address: room for several users behind one address before
    /// its checks trickle.
    pub const ADDRESS: LoginPolicy = LoginPolicy {
        free: 20,
        base: Duration::from_secs(1),
        max: Duration::from_secs(15 * 60),
        window: Duration::from_secs(15 * 60),
    };

    /// Whether `failures` are past the free allowance at `now_ms`.
    pub fn exceeded(&self, failures: Option<Failures>, now_ms: i64) -> bool {
        failures.is_some_and(|f| f.count > self.free && f.within(now_ms, self.window))
    }

    /// How much longer `failures` lock their key at `now_ms`, if at all.
    pub fn locked_for(&self, failures: Option<Failures>, now_ms: i64) -> Option<Duration> {
        let f = failures?;
        let since = Duration::from_millis(now_ms.saturating_sub(f.last_ms).max(0) as u64);
        if since >= self.window || f.count <= self.free {
            return None;
        }
        let doublings = (f.count - self.free - 1).min(30);
        let lock = self.base.saturating_mul(1 << doublings).min(self.max);
        lock.checked_sub(since).filter(|d| !d.is_zero())
    }
}

/// Where failure counts live: process memory embedded, a DynamoDB table on
/// AWS (shared by every instance of every function).
#[async_trait]
pub trait FailureLog: Send + Sync {
    /// The failures under `key`, if any were recorded within `window` of `now_ms`.
    async fn get(&self, key: &str, now_ms: i64, window: Duration) -> PortResult<Option<Failures>>;
    /// Counts one failure at `now_ms`; failures older than `window` start over.
    async fn record(&self, key: &str, now_ms: i64, window: Duration) -> PortResult<Failures>;
    /// Forgets `key` (after a successful login).
    async fn clear(&self, key: &str) -> Result<(), PortError>;
}

/// The embedded failure log. Bounded: when full, expired keys go first, then
/// the least recently failed, so a flood of invented e-mails cannot grow it.
pub struct MemoryFailureLog {
    entries: Mutex<HashMap<String, Failures>>,
    capacity: usize,
}

impl MemoryFailureLog {
    pub fn new(capacity: usize) -> Self {
        MemoryFailureLog {
            entries: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }
}

impl Default for MemoryFailureLog {
    fn default() -> Self {
        Self::new(100_000)
    }
}

#[async_trait]
impl FailureLog for MemoryFailureLog {
    async fn get(&self, key: &str, now_ms: i64, window: Duration) -> PortResult<Option<Failures>> {
        let entries = self.entries.lock();
        Ok(entries
            .get(key)
            .copied()
            .filter(|f| f.within(now_ms, window)))
    }

    async fn record(&self, key: &str, now_ms: i64, window: Duration) -> PortResult<Failures> {
        let mut entries = self.entries.lock();
        if !entries.contains_key(key) && entries.len() >= self.capacity {
            entries.retain(|_, f| f.within(now_ms, window));
            if entries.len() >= self.capacity
                && let Some(oldest) = entries
                    .iter()
                    .min_by_key(|(_, f)| f.last_ms)
                    .map(|(k, _)| k.clone())
            {
                entries.remove(&oldest);
            }
        }
        let f = entries.entry(key.to_string()).or_insert(Failures {
            count: 0,
            last_ms: now_ms,
        });
        if !f.within(now_ms, window) {
            f.count = 0;
        }
        f.count += 1;
        f.last_ms = now_ms;
        Ok(*f)
    }

    async fn clear(&self, key: &str) -> Result<(), PortError> {
        self.entries.lock().remove(key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(count: u32, last_ms: i64) -> Option<Failures> {
        Some(Failures { count, last_ms })
    }

    #[test]
    fn locks_double_past_the_allowance_and_expire() {
        let p = LoginPolicy::ACCOUNT;
        assert_eq!(p.locked_for(None, 0), None);
        assert_eq!(p.locked_for(f(5, 0), 0), None, "five failures are free");
        assert_eq!(p.locked_for(f(6, 0), 0), Some(Duration::from_secs(1)));
        assert_eq!(
            p.locked_for(f(7, 0), 500),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(p.locked_for(f(8, 0), 4_000), None, "a 4 s lock has passed");
        assert_eq!(
            p.locked_for(f(40, 0), 0),
            Some(Duration::from_secs(900)),
            "capped"
        );
        assert_eq!(p.locked_for(f(40, 0), 900_000), None, "the window forgets");
    }

    #[tokio::test]
    async fn memory_log_is_bounded() {
        let log = MemoryFailureLog::new(3);
        let w = Duration::from_secs(60);
        for (i, key) in ["a", "b", "c", "d"].iter().enumerate() {
            log.record(key, i as i64, w).await.unwrap();
        }
        assert_eq!(log.entries.lock().len(), 3);
        assert_eq!(
            log.get("a", 10, w).await.unwrap(),
            None,
            "the oldest went first"
        );
        assert_eq!(log.get("d", 10, w).await.unwrap(), f(1, 3));
    }
}
