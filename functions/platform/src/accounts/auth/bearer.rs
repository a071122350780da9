//! Key logins (`Authorization: Bearer`): the key checked by the
//! [`KeyChecker`], its account read as password logins read it (kept for
//! `ACCOUNT_REFRESH`), and bad keys slowed three ways: wrong secrets lock
//! their key id and the account owning it, and an address that sends many
//! bad keys or passwords trickles.
//!
//! A right secret always passes: a key's secret cannot be guessed, so the
//! locks bound how fast bad keys are answered, and whoever knows a key's
//! prefix cannot lock its holder out.

use super::super::throttle::LoginPolicy;
use super::{Authenticator, account};
use crate::PortError;
use crate::accounts::Account;
use crate::keys::{INVALID_KEY, KeyChecker, KeyRecord, KeyVerdict};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a key login comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyLogin {
    Valid(Account, Arc<KeyRecord>),
    /// The reason, for the answer.
    Denied(&'static str),
    /// Too many wrong secrets for the key id or its account, or the address
    /// sent too many bad keys or passwords: retry after this.
    Locked(Duration),
    /// This deployment has no key store.
    Disabled,
}

/// A failure-log key, its policy, and whether it slows (an address) rather
/// than locks.
type Counted = (String, LoginPolicy, bool);

/// What a bad key counts against: for a wrong secret or an unknown id, the
/// id and its account, which lock (an id no key has stands for an account
/// of its own, so both take the same counts and lock alike); always the
/// address, which slows, shared with password logins.
fn counted(verdict: &KeyVerdict, client: Option<IpAddr>) -> Vec<Counted> {
    let mut keys = Vec::with_capacity(3);
    if let KeyVerdict::Wrong { id, account } = verdict {
        keys.push((format!("key-id#{id}"), LoginPolicy::KEY, false));
        let owner = match account {
            Some(email) => format!("key-account#{email}"),
            None => format!("key-account#?{id}"),
        };
        keys.push((owner, LoginPolicy::KEY, false));
    }
    if let Some(ip) = client {
        keys.push((format!("login-address#{ip}"), LoginPolicy::ADDRESS, true));
    }
    keys
}

impl Authenticator {
    /// Accepts keys checked by `keys`.
    pub fn with_keys(mut self, keys: KeyChecker) -> Self {
        self.keys = Some(Arc::new(keys));
        self
    }

    pub fn keys(&self) -> Option<&Arc<KeyChecker>> {
        self.keys.as_ref()
    }

    /// Checks `key` sent from `client`.
    pub async fn verify_key(
        &self,
        key: &str,
        client: Option<IpAddr>,
    ) -> Result<KeyLogin, PortError> {
        let Some(keys) = &self.keys else {
            return Ok(KeyLogin::Disabled);
        };
        let verdict = keys.check(key).await?;
        let why = match &verdict {
            KeyVerdict::Valid(record) => {
                return Ok(match self.key_account(&record.account).await? {
                    Some(a) => KeyLogin::Valid(a, record.clone()),
                    None => KeyLogin::Denied("the key's account no longer exists"),
                });
            }
            KeyVerdict::Wrong { .. } => INVALID_KEY,
            KeyVerdict::Denied(why) => *why,
        };
        Ok(
            match self.refusal(&counted(&verdict, client), client).await? {
                Some(wait) => KeyLogin::Locked(wait),
                None => KeyLogin::Denied(why),
            },
        )
    }

    /// Counts a refused key under `keys`, unless one of them is locked (then
    /// how long) or the address's trickle has no turn for it. Like a
    /// password, a locked refusal is not counted again.
    async fn refusal(
        &self,
        keys: &[Counted],
        client: Option<IpAddr>,
    ) -> Result<Option<Duration>, PortError> {
        let now = self.epoch_ms();
        let (mut locked, mut busy) = (None, false);
        for (k, policy, slows) in keys {
            let f = self.failures.get(k, now, policy.window).await?;
            if *slows {
                busy = policy.exceeded(f, now);
            } else {
                locked = locked.max(policy.locked_for(f, now));
            }
        }
        if locked.is_some() {
            return Ok(locked);
        }
        if busy
            && let Some(ip) = client
            && let Err(retry) = self.trickle.turn(ip).await
        {
            return Ok(Some(retry));
        }
        let now = self.epoch_ms();
        for (k, policy, _) in keys {
            self.failures.record(k, now, policy.window).await?;
        }
        Ok(None)
    }

    /// The account of a key, read again when the account refresh has passed.
    async fn key_account(&self, email: &str) -> Result<Option<Account>, PortError> {
        if let Some((at, a)) = self.key_accounts.lock().get(email)
            && at.elapsed() < self.refresh
        {
            return Ok(a.clone());
        }
        let found = self.store.get(email).await?.and_then(account);
        self.key_accounts
            .lock()
            .insert(email.to_string(), (Instant::now(), found.clone()));
        Ok(found)
    }
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    //! On a clock that stands still: a lock lasts until the test moves it.
    use super::*;
    use crate::accounts::{MemoryFailureLog, SqliteAccountStore, add_account};
    use crate::clock::ManualClock;
    use crate::keys::{KeyStore, Mode, Pepper, SqliteKeyStore, issue};
    use crate::sqlite::Database;

    struct Setup {
        auth: Authenticator,
        clock: Arc<ManualClock>,
        pepper: Pepper,
        keys: Arc<SqliteKeyStore>,
    }

    async fn setup() -> Setup {
        let db = Database::in_memory().unwrap();
        let accounts = Arc::new(SqliteAccountStore::new(db.clone()));
        add_account(
            accounts.as_ref(),
            "owner@b.test",
            "a long password",
            "pro",
            vec![],
        )
        .await
        .unwrap();
        let keys = Arc::new(SqliteKeyStore::new(db));
        let pepper = Pepper::new([5; 32]);
        let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
        let auth = Authenticator::with_permits(
            accounts,
            Duration::from_secs(60),
            Arc::new(MemoryFailureLog::default()),
            1,
        )
        .unwrap()
        .with_clock(clock.clone())
        .with_keys(KeyChecker::new(keys.clone(), pepper.clone()));
        Setup {
            auth,
            clock,
            pepper,
            keys,
        }
    }

    /// A live read key of `owner@b.test`; its text.
    async fn make_key(s: &Setup) -> String {
        let issued = issue(Mode::Live, &s.pepper).unwrap();
        let record = KeyRecord::for_test(&issued, "owner@b.test");
        assert!(s.keys.insert(record, usize::MAX).await.unwrap());
        issued.key
    }

    /// `key` with another secret.
    fn wrong(key: &str) -> String {
        format!("{}{}", &key[..key.len() - 43], "W".repeat(43))
    }

    /// The i-th of many addresses, none of them sending more than a few.
    fn address(i: usize) -> Option<IpAddr> {
        Some(IpAddr::from([198, 51, 100, i as u8]))
    }

    async fn denials_before_the_lock(s: &Setup, keys: &[String]) -> usize {
        for n in 0..20 {
            let key = &keys[n % keys.len()];
            match s.auth.verify_key(key, address(n)).await.unwrap() {
                KeyLogin::Denied(why) => assert_eq!(why, INVALID_KEY),
                KeyLogin::Locked(wait) => {
                    assert!(wait > Duration::ZERO && wait <= Duration::from_secs(1));
                    return n;
                }
                other => panic!("{other:?}"),
            }
        }
        panic!("never locked")
    }

    #[tokio::test]
    async fn wrong_secrets_for_one_key_id_from_many_addresses_lock_the_id_not_its_holder() {
        let s = setup().await;
        let key = make_key(&s).await;
        let bad = wrong(&key);
        // Five free, a sixth counted and locking; each from its own address.
        assert_eq!(
            denials_before_the_lock(&s, std::slice::from_ref(&bad)).await,
            6
        );
        // The holder's right secret passes the lock.
        assert!(matches!(
            s.auth.verify_key(&key, address(200)).await.unwrap(),
            KeyLogin::Valid(..)
        ));
        // The lock ends with its second, and the next failure doubles it.
        s.clock.advance(chrono::TimeDelta::milliseconds(1_001));
        assert_eq!(
            s.auth.verify_key(&bad, address(201)).await.unwrap(),
            KeyLogin::Denied(INVALID_KEY)
        );
        assert!(matches!(
            s.auth.verify_key(&bad, address(202)).await.unwrap(),
            KeyLogin::Locked(d) if d > Duration::from_secs(1)
        ));
    }

    #[tokio::test]
    async fn wrong_secrets_spread_over_an_accounts_keys_lock_the_account() {
        let s = setup().await;
        let mut bad = Vec::new();
        for _ in 0..3 {
            bad.push(wrong(&make_key(&s).await));
        }
        // Two wrong secrets per id, under each id's free five: the account's
        // count locks at its sixth.
        assert_eq!(denials_before_the_lock(&s, &bad).await, 6);
        // Another account's key is not held back.
        let other = issue(Mode::Live, &s.pepper).unwrap();
        assert_eq!(
            s.auth.verify_key(&other.key, address(100)).await.unwrap(),
            KeyLogin::Denied(INVALID_KEY)
        );
    }

    #[tokio::test]
    async fn an_unknown_id_is_counted_and_locked_as_a_known_one() {
        let s = setup().await;
        let unknown = issue(Mode::Live, &s.pepper).unwrap().key;
        assert_eq!(denials_before_the_lock(&s, &[unknown]).await, 6);
        // Text that is not a key counts against its address only.
        for n in 0..10 {
            assert_eq!(
                s.auth
                    .verify_key("mlk_live_nope", address(n))
                    .await
                    .unwrap(),
                KeyLogin::Denied("not an API key")
            );
        }
    }
}
