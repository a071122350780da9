//! Key logins (`Authorization: Bearer`): the key checked by the
//! [`KeyChecker`], its account read as password logins read it (kept for
//! `ACCOUNT_REFRESH`), and an address that sends many bad keys slowed
//! like one that guesses passwords.

use super::super::throttle::LoginPolicy;
use super::{Authenticator, account};
use crate::PortError;
use crate::accounts::Account;
use crate::keys::{KeyChecker, KeyRecord, KeyVerdict};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a key login comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyLogin {
    Valid(Account, Arc<KeyRecord>),
    /// The reason, for the answer.
    Denied(&'static str),
    /// The address sent too many bad keys or passwords: retry after this.
    Locked(Duration),
    /// This deployment has no key store.
    Disabled,
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
        let address = client.map(|ip| format!("login-address#{ip}"));
        let policy = LoginPolicy::ADDRESS;
        let verdict = keys.check(key).await?;
        let record = match verdict {
            KeyVerdict::Valid(r) => r,
            KeyVerdict::Denied(why) => {
                if let (Some(k), Some(ip)) = (&address, client) {
                    let now = self.epoch_ms();
                    let f = self.failures.get(k, now, policy.window).await?;
                    if policy.exceeded(f, now)
                        && let Err(retry) = self.trickle.turn(ip).await
                    {
                        return Ok(KeyLogin::Locked(retry));
                    }
                    self.failures.record(k, now, policy.window).await?;
                }
                return Ok(KeyLogin::Denied(why));
            }
        };
        match self.key_account(&record.account).await? {
            Some(a) => Ok(KeyLogin::Valid(a, record)),
            None => Ok(KeyLogin::Denied("the key's account no longer exists")),
        }
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
