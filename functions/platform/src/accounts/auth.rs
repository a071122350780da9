//! Credential verification: argon2 hashes, checked in constant time, with a
//! short-lived cache of verified credentials so a client's steady stream of
//! requests does not pay one slow hash each, and bounds on what hashing may
//! cost under a flood.

mod bearer;

pub use bearer::KeyLogin;

use super::hashing::{dummy_hash, verify_with};
use super::throttle::{FailureLog, LoginPolicy};
use super::trickle::Trickle;
use super::{Account, AccountStore, normalize_email, plan};
use crate::PortError;
use argon2::Block;
use argon2::password_hash::rand_core::OsRng;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, Semaphore};

/// What a login attempt comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Valid(Account),
    /// Unknown user, wrong password, or an account whose plan code is unknown.
    Denied,
    /// Too many recent failures for this account (or this account from this
    /// address), or the address's trickle is full: retry after this long.
    Locked(Duration),
}

/// Verifies credentials with bounded cost: a cache of verified credentials,
/// at most `permits` argon2 hashes at once, in order of arrival (each on the
/// blocking pool, each with a reused memory buffer, so memory stays at
/// `permits` buffers however many logins arrive), one hash for a burst of the
/// same credentials, failed-login locks per account and per account from one
/// address, and a trickle of checks for an address past its failures.
pub struct Authenticator {
    store: Arc<dyn AccountStore>,
    failures: Arc<dyn FailureLog>,
    trickle: Trickle,
    /// Keyed by SHA-256(secret || email || password): the cache never holds a password.
    cache: Mutex<HashMap<[u8; 32], Verified>>,
    /// Checks under way, by the same key: later arrivals wait for the first.
    inflight: Mutex<HashMap<[u8; 32], Arc<Check>>>,
    hashing: Arc<Semaphore>,
    buffers: Arc<Mutex<Vec<Vec<Block>>>>,
    secret: [u8; 32],
    ttl: Duration,
    refresh: Duration,
    /// The time failed logins are counted and locked on.
    clock: Arc<dyn crate::clock::Clock>,
    /// Key logins; none refuses them.
    keys: Option<Arc<crate::keys::KeyChecker>>,
    /// Accounts of key logins, by e-mail, with when they were read.
    key_accounts: Mutex<HashMap<String, (Instant, Option<Account>)>>,
}

/// The shared outcome of one credential check: the account and the hash
/// its password was checked against.
type Check = OnceCell<Option<(Account, String)>>;

/// A cached verification.
#[derive(Clone)]
struct Verified {
    account: Account,
    /// The stored hash the password matched: a changed one ends the entry.
    hash: String,
    at: Instant,
    /// When the account record was last read.
    read: Instant,
}

/// How long a cached verification uses its account record before reading it
/// again: plan changes, selections, custom indicators and password changes
/// made by an operator reach every instance within this.
pub const ACCOUNT_REFRESH: Duration = Duration::from_secs(5);

/// Hashes at once: one core stays free to serve requests that need no hash.
fn default_permits() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
        .max(1)
}

impl Authenticator {
    pub fn new(
        store: Arc<dyn AccountStore>,
        ttl: Duration,
        failures: Arc<dyn FailureLog>,
    ) -> Result<Self, PortError> {
        Self::with_permits(store, ttl, failures, default_permits())
    }

    /// The embedded wiring: failure counts in process memory.
    pub fn embedded(store: Arc<dyn AccountStore>, ttl: Duration) -> Result<Self, PortError> {
        Self::new(store, ttl, Arc::new(super::MemoryFailureLog::default()))
    }

    pub fn with_permits(
        store: Arc<dyn AccountStore>,
        ttl: Duration,
        failures: Arc<dyn FailureLog>,
        permits: usize,
    ) -> Result<Self, PortError> {
        let mut secret = [0u8; 32];
        use argon2::password_hash::rand_core::RngCore;
        OsRng.fill_bytes(&mut secret);
        Ok(Authenticator {
            store,
            failures,
            trickle: Trickle::default(),
            cache: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
            hashing: Arc::new(Semaphore::new(permits.max(1))),
            buffers: Arc::new(Mutex::new(Vec::new())),
            secret,
            ttl,
            refresh: ACCOUNT_REFRESH,
            clock: Arc::new(crate::clock::SystemClock),
            keys: None,
            key_accounts: Mutex::new(HashMap::new()),
        })
    }

    /// Spaces a busy address's checks by `trickle` instead of the default.
    pub fn with_trickle(mut self, trickle: Trickle) -> Self {
        self.trickle = trickle;
        self
    }

    /// Counts failed logins and their locks on `clock` instead of the system's.
    pub fn with_clock(mut self, clock: Arc<dyn crate::clock::Clock>) -> Self {
        self.clock = clock;
        self
    }

    fn epoch_ms(&self) -> i64 {
        self.clock.now().timestamp_millis()
    }

    /// Reads a cached account again after `refresh` instead of [`ACCOUNT_REFRESH`].
    pub fn with_account_refresh(mut self, refresh: Duration) -> Self {
        self.refresh = refresh;
        self
    }

    pub fn store(&self) -> &Arc<dyn AccountStore> {
        &self.store
    }

    /// Checks credentials from `client` (when the runtime knows the address).
    /// Cached valid credentials answer at once, even while a key is locked, so
    /// a flood of wrong passwords never slows a signed-in client.
    pub async fn verify(
        &self,
        email: &str,
        password: &str,
        client: Option<IpAddr>,
    ) -> Result<Verdict, PortError> {
        let email = normalize_email(email);
        let key = self.cache_key(&email, password);
        if let Some(hit) = self.cached(&key, &email).await {
            return Ok(Verdict::Valid(hit));
        }
        let keys = failure_keys(&email, client);
        let now = self.epoch_ms();
        let (mut locked, mut busy, mut failed) = (None, false, Vec::new());
        for (k, policy, slows) in &keys {
            let f = self.failures.get(k, now, policy.window).await?;
            if *slows {
                busy = policy.exceeded(f, now);
            } else {
                locked = locked.max(policy.locked_for(f, now));
                if f.is_some() {
                    failed.push(k);
                }
            }
        }
        if let Some(d) = locked {
            return Ok(Verdict::Locked(d));
        }
        if busy
            && let Some(ip) = client
            && let Err(retry) = self.trickle.turn(ip).await
        {
            return Ok(Verdict::Locked(retry));
        }
        let account = self.check_once(key, &email, password).await?;
        match account {
            Some(a) => {
                for k in failed {
                    self.failures.clear(k).await?;
                }
                Ok(Verdict::Valid(a))
            }
            None => {
                let now = self.epoch_ms();
                for (k, policy, _) in &keys {
                    self.failures.record(k, now, policy.window).await?;
                }
                Ok(Verdict::Denied)
            }
        }
    }

    /// Drops cached verifications, e.g. after a password or plan change.
    pub fn forget_all(&self) {
        self.cache.lock().clear();
    }

    /// One look-up and hash for every concurrent request with these credentials.
    async fn check_once(
        &self,
        key: [u8; 32],
        email: &str,
        password: &str,
    ) -> Result<Option<Account>, PortError> {
        let cell = self
            .inflight
            .lock()
            .entry(key)
            .or_insert_with(|| Arc::new(OnceCell::new()))
            .clone();
        let result = cell
            .get_or_try_init(|| self.check(email, password))
            .await
            .cloned();
        let mut inflight = self.inflight.lock();
        if inflight.get(&key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            inflight.remove(&key);
        }
        drop(inflight);
        if let Ok(Some((a, hash))) = &result {
            let mut cache = self.cache.lock();
            let now = Instant::now();
            cache.retain(|_, v| now.duration_since(v.at) < self.ttl);
            cache.insert(
                key,
                Verified {
                    account: a.clone(),
                    hash: hash.clone(),
                    at: now,
                    read: now,
                },
            );
        }
        result.map(|r| r.map(|(a, _)| a))
    }

    async fn check(
        &self,
        email: &str,
        password: &str,
    ) -> Result<Option<(Account, String)>, PortError> {
        let record = self.store.get(email).await?;
        let hash = match &record {
            Some(r) => r.password_hash.clone(),
            None => dummy_hash().await?,
        };
        let matches = self.matches(hash, password.to_string()).await?;
        Ok(match record {
            Some(r) if matches => {
                let hash = r.password_hash.clone();
                account(r).map(|a| (a, hash))
            }
            _ => None,
        })
    }

    /// Whether `password` matches the PHC string `hash`, computed under a
    /// permit with a pooled buffer.
    async fn matches(&self, hash: String, password: String) -> Result<bool, PortError> {
        let permit = self
            .hashing
            .clone()
            .acquire_owned()
            .await
            .map_err(PortError::internal)?;
        let buffers = self.buffers.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut blocks = buffers.lock().pop().unwrap_or_default();
            let ok = verify_with(&hash, password.as_bytes(), &mut blocks);
            buffers.lock().push(blocks);
            ok
        })
        .await
        .map_err(PortError::internal)
    }

    /// A cached verification, its account read again when
    /// [`ACCOUNT_REFRESH`] old; none when the account is gone, its password
    /// or plan changed (the credentials are then checked again in full).
    async fn cached(&self, key: &[u8; 32], email: &str) -> Option<Account> {
        let hit = {
            let mut cache = self.cache.lock();
            let v = cache.get_mut(key).filter(|v| v.at.elapsed() < self.ttl)?;
            if v.read.elapsed() < self.refresh {
                return Some(v.account.clone());
            }
            // Concurrent requests keep using the entry while one reads.
            v.read = Instant::now();
            v.clone()
        };
        match self.store.get(email).await {
            Ok(Some(r)) if r.password_hash == hit.hash && plan(&r.plan).is_some() => {
                let fresh = account(r)?;
                if let Some(v) = self.cache.lock().get_mut(key) {
                    v.account = fresh.clone();
                }
                Some(fresh)
            }
            Ok(_) => {
                self.cache.lock().remove(key);
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "account not read again; the cached one is used");
                Some(hit.account)
            }
        }
    }

    fn cache_key(&self, email: &str, password: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.secret);
        h.update((email.len() as u64).to_le_bytes());
        h.update(email.as_bytes());
        h.update(password.as_bytes());
        h.finalize().into()
    }
}

/// The account of a record, if its plan code is known.
fn account(r: super::AccountRecord) -> Option<Account> {
    plan(&r.plan).map(|p| Account {
        email: r.email,
        plan: p,
        selected_indicators: r.selected_indicators,
        custom_indicators: r.custom_indicators,
    })
}

/// The failure-log keys of an attempt: the account and the account from
/// this address (which lock), the address (which slows, `true`).
fn failure_keys(email: &str, client: Option<IpAddr>) -> Vec<(String, LoginPolicy, bool)> {
    let mut keys = vec![(
        format!("login-account#{email}"),
        LoginPolicy::ACCOUNT,
        false,
    )];
    if let Some(ip) = client {
        keys.push((format!("login-pair#{ip}#{email}"), LoginPolicy::PAIR, false));
        keys.push((format!("login-address#{ip}"), LoginPolicy::ADDRESS, true));
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::hash_password;
    use crate::accounts::{AccountRecord, MemoryFailureLog};
    use async_trait::async_trait;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// One account; counts look-ups, which happen once per real hash.
    struct OneAccount(AccountRecord, AtomicUsize);

    #[async_trait]
    impl AccountStore for OneAccount {
        async fn get(&self, email: &str) -> Result<Option<AccountRecord>, PortError> {
            self.1.fetch_add(1, Ordering::SeqCst);
            Ok((email == self.0.email).then(|| self.0.clone()))
        }
        async fn put(&self, _: AccountRecord) -> Result<(), PortError> {
            Ok(())
        }
        async fn list(&self) -> Result<Vec<AccountRecord>, PortError> {
            Ok(vec![self.0.clone()])
        }
    }

    fn auth() -> (Arc<OneAccount>, Authenticator) {
        let store = Arc::new(OneAccount(
            AccountRecord {
                email: "a@b.test".into(),
                password_hash: hash_password("right-password").unwrap(),
                plan: "pro".into(),
                ..Default::default()
            },
            AtomicUsize::new(0),
        ));
        let a = Authenticator::with_permits(
            store.clone(),
            Duration::from_secs(60),
            Arc::new(MemoryFailureLog::default()),
            2,
        )
        .unwrap();
        (store, a)
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_burst_of_one_login_hashes_once() {
        let (store, a) = auth();
        let a = Arc::new(a);
        let mut joins = Vec::new();
        for _ in 0..16 {
            let a = a.clone();
            joins.push(tokio::spawn(async move {
                a.verify("A@b.test", "right-password", None).await
            }));
        }
        for j in joins {
            assert!(matches!(j.await.unwrap().unwrap(), Verdict::Valid(_)));
        }
        assert_eq!(store.1.load(Ordering::SeqCst), 1, "one look-up, one hash");
    }

    #[tokio::test]
    async fn failures_lock_the_account_but_not_cached_logins() {
        let (_, a) = auth();
        let ip: Option<IpAddr> = Some("192.0.2.7".parse().unwrap());
        assert!(matches!(
            a.verify("a@b.test", "right-password", ip).await.unwrap(),
            Verdict::Valid(_)
        ));
        for _ in 0..6 {
            assert_eq!(
                a.verify("a@b.test", "wrong", ip).await.unwrap(),
                Verdict::Denied
            );
        }
        assert!(matches!(
            a.verify("a@b.test", "wrong", ip).await.unwrap(),
            Verdict::Locked(d) if d <= Duration::from_secs(1)
        ));
        assert!(
            matches!(
                a.verify("a@b.test", "right-password", ip).await.unwrap(),
                Verdict::Valid(_)
            ),
            "cached credentials pass a lock"
        );
        a.forget_all();
        assert!(matches!(
            a.verify("a@b.test", "right-password", ip).await.unwrap(),
            Verdict::Locked(_)
        ));
    }

    /// Accounts an operator changes while the authenticator runs.
    #[derive(Default)]
    struct Records(Mutex<HashMap<String, AccountRecord>>);

    #[async_trait]
    impl AccountStore for Records {
        async fn get(&self, email: &str) -> Result<Option<AccountRecord>, PortError> {
            Ok(self.0.lock().get(email).cloned())
        }
        async fn put(&self, r: AccountRecord) -> Result<(), PortError> {
            self.0.lock().insert(r.email.clone(), r);
            Ok(())
        }
        async fn list(&self) -> Result<Vec<AccountRecord>, PortError> {
            Ok(self.0.lock().values().cloned().collect())
        }
    }

    #[tokio::test]
    async fn cached_logins_see_operator_changes_after_the_refresh() {
        let store = Arc::new(Records::default());
        let record = AccountRecord {
            email: "a@b.test".into(),
            password_hash: hash_password("right-password").unwrap(),
            plan: "trial".into(),
            ..Default::default()
        };
        store.put(record.clone()).await.unwrap();
        let refresh = Duration::from_millis(50);
        let a = Authenticator::with_permits(
            store.clone(),
            Duration::from_secs(60),
            Arc::new(MemoryFailureLog::default()),
            1,
        )
        .unwrap()
        .with_account_refresh(refresh);
        let plan_of = |v: Verdict| match v {
            Verdict::Valid(a) => a.plan.code,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            plan_of(a.verify("a@b.test", "right-password", None).await.unwrap()),
            "trial"
        );
        // A new plan and a new custom selection: seen after the refresh, with no new hash.
        let mut changed = record.clone();
        changed.plan = "pro".into();
        changed.selected_indicators = vec!["XLK_OPTIX".into()];
        store.put(changed.clone()).await.unwrap();
        assert_eq!(
            plan_of(a.verify("a@b.test", "right-password", None).await.unwrap()),
            "trial",
            "within the refresh the cached account answers"
        );
        tokio::time::sleep(refresh * 2).await;
        match a.verify("a@b.test", "right-password", None).await.unwrap() {
            Verdict::Valid(acc) => {
                assert_eq!(acc.plan.code, "pro");
                assert_eq!(acc.selected_indicators, ["XLK_OPTIX"]);
            }
            other => panic!("{other:?}"),
        }
        // A new password ends the cached login.
        changed.password_hash = hash_password("new-password").unwrap();
        store.put(changed).await.unwrap();
        tokio::time::sleep(refresh * 2).await;
        assert_eq!(
            a.verify("a@b.test", "right-password", None).await.unwrap(),
            Verdict::Denied
        );
        assert!(matches!(
            a.verify("a@b.test", "new-password", None).await.unwrap(),
            Verdict::Valid(_)
        ));
    }

    #[tokio::test]
    async fn a_successful_login_clears_the_account_count() {
        let (_, a) = auth();
        for _ in 0..4 {
            a.verify("a@b.test", "wrong", None).await.unwrap();
        }
        assert!(matches!(
            a.verify("a@b.test", "right-password", None).await.unwrap(),
            Verdict::Valid(_)
        ));
        for _ in 0..5 {
            assert_eq!(
                a.verify("a@b.test", "wrong", None).await.unwrap(),
                Verdict::Denied,
                "the allowance starts over"
            );
        }
    }

    #[tokio::test]
    async fn a_busy_address_trickles_and_its_innocent_user_signs_in() {
        let (_, a) = auth();
        // Spaced a second apart, so a check that skips the queue stands
        // out from one that waits however loaded the machine is.
        let a = a.with_trickle(Trickle::new(
            Duration::from_secs(1),
            4,
            Duration::from_secs(10),
        ));
        let ip: Option<IpAddr> = Some("198.51.100.1".parse().unwrap());
        for i in 0..21 {
            let v = a
                .verify(&format!("user{i}@x.test"), "pw", ip)
                .await
                .unwrap();
            assert_eq!(v, Verdict::Denied, "attempt {i}");
        }
        // Past its 20 free failures the address is slowed, not locked: its
        // checks start at most one a second, and the right password passes.
        let started = Instant::now();
        for i in 0..3 {
            let v = a
                .verify(&format!("more{i}@x.test"), "pw", ip)
                .await
                .unwrap();
            assert_eq!(v, Verdict::Denied);
        }
        assert!(
            started.elapsed() >= Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert!(matches!(
            a.verify("a@b.test", "right-password", ip).await.unwrap(),
            Verdict::Valid(_)
        ));
        // Another address is not slowed.
        let other = Some("198.51.100.2".parse().unwrap());
        let started = Instant::now();
        assert_eq!(
            a.verify("someone@x.test", "pw", other).await.unwrap(),
            Verdict::Denied
        );
        assert!(
            started.elapsed() < Duration::from_millis(900),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn guesses_from_one_address_stay_locked_after_the_owner_signs_in() {
        let (_, a) = auth();
        let clock = Arc::new(crate::clock::ManualClock::new(chrono::Utc::now()));
        let a = a.with_clock(clock.clone());
        let attacker: Option<IpAddr> = Some("203.0.113.5".parse().unwrap());
        let owner: Option<IpAddr> = Some("203.0.113.6".parse().unwrap());
        for _ in 0..6 {
            a.verify("a@b.test", "guess", attacker).await.unwrap();
        }
        assert!(matches!(
            a.verify("a@b.test", "guess", attacker).await.unwrap(),
            Verdict::Locked(_)
        ));
        // The owner waits out the account's lock, signs in, and so clears it...
        clock.advance(chrono::TimeDelta::milliseconds(1100));
        assert!(matches!(
            a.verify("a@b.test", "right-password", owner).await.unwrap(),
            Verdict::Valid(_)
        ));
        // ...but not the attacker's count on the account from its address:
        // one more guess, and it is locked again (not five free ones).
        assert_eq!(
            a.verify("a@b.test", "guess", attacker).await.unwrap(),
            Verdict::Denied
        );
        assert!(matches!(
            a.verify("a@b.test", "guess", attacker).await.unwrap(),
            Verdict::Locked(d) if d > Duration::from_secs(1)
        ));
    }
}
