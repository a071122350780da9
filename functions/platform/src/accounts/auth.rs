//! Credential verification: argon2 hashes, checked in constant time, with a
//! short-lived cache of verified credentials so a client's steady stream of
//! requests does not pay one slow hash each.

use super::{Account, AccountStore, normalize_email, plan};
use crate::PortError;
use argon2::Argon2;
use argon2::password_hash::{
    PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng,
};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Hashes a password as an argon2id PHC string with a random salt.
pub fn hash_password(password: &str) -> Result<String, PortError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(PortError::internal)
}

pub struct Authenticator {
    store: Arc<dyn AccountStore>,
    /// Keyed by SHA-256(secret || email || password): the cache never holds a password.
    cache: Mutex<HashMap<[u8; 32], (Account, Instant)>>,
    secret: [u8; 32],
    ttl: Duration,
    /// Verified against for unknown users so their answer takes as long as a wrong password.
    dummy_hash: String,
}

impl Authenticator {
    pub fn new(store: Arc<dyn AccountStore>, ttl: Duration) -> Result<Self, PortError> {
        let mut secret = [0u8; 32];
        use argon2::password_hash::rand_core::RngCore;
        OsRng.fill_bytes(&mut secret);
        Ok(Authenticator {
            store,
            cache: Mutex::new(HashMap::new()),
            secret,
            ttl,
            dummy_hash: hash_password("not a real password")?,
        })
    }

    pub fn store(&self) -> &Arc<dyn AccountStore> {
        &self.store
    }

    /// The account for these credentials, or `None` when the user is unknown,
    /// the password is wrong, or the account's plan code is not known.
    pub async fn verify(&self, email: &str, password: &str) -> Result<Option<Account>, PortError> {
        let email = normalize_email(email);
        let key = self.cache_key(&email, password);
        if let Some(hit) = self.cached(&key) {
            return Ok(Some(hit));
        }
        let record = self.store.get(&email).await?;
        let hash = record
            .as_ref()
            .map(|r| r.password_hash.clone())
            .unwrap_or_else(|| self.dummy_hash.clone());
        let pw = password.to_string();
        let matches = tokio::task::spawn_blocking(move || {
            PasswordHash::new(&hash)
                .map(|parsed| {
                    Argon2::default()
                        .verify_password(pw.as_bytes(), &parsed)
                        .is_ok()
                })
                .unwrap_or(false)
        })
        .await
        .map_err(PortError::internal)?;
        let account = match record {
            Some(r) if matches => plan(&r.plan).map(|p| Account {
                email: r.email,
                plan: p,
                selected_indicators: r.selected_indicators,
                custom_indicators: r.custom_indicators,
            }),
            _ => None,
        };
        if let Some(a) = &account {
            let mut cache = self.cache.lock().expect("auth cache lock");
            let now = Instant::now();
            cache.retain(|_, (_, at)| now.duration_since(*at) < self.ttl);
            cache.insert(key, (a.clone(), now));
        }
        Ok(account)
    }

    /// Drops cached verifications, e.g. after a password or plan change.
    pub fn forget_all(&self) {
        self.cache.lock().expect("auth cache lock").clear();
    }

    fn cached(&self, key: &[u8; 32]) -> Option<Account> {
        let cache = self.cache.lock().expect("auth cache lock");
        cache
            .get(key)
            .filter(|(_, at)| at.elapsed() < self.ttl)
            .map(|(a, _)| a.clone())
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
