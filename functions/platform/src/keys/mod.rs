//! API keys: what a key may do (scopes), which data it runs against (live or
//! test), and the store that keeps them, hashed.
//!
//! A key is `mlk_<mode>_<id>_<secret>`: the id addresses its record in one
//! read, the secret is 256 random bits, kept only as a keyed hash. The
//! visible prefix (`mlk_<mode>_<id>`) names it in lists and logs.

mod check;
#[cfg(feature = "sqlite")]
mod sqlite;
mod token;

pub use check::{INVALID_KEY, KEY_REFRESH, KeyChecker, KeyVerdict};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteKeyStore;
pub use token::{Issued, Pepper, Token, digest, issue};

use crate::PortError;
use async_trait::async_trait;
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// Live keys an account may hold at once (revoked and expired ones do not count).
pub const MAX_LIVE_KEYS: usize = 20;

/// What a key may do. A password login may do everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Market data, analytics answers, task status and results.
    Read,
    /// Tasks and batches: anything that queues work.
    Submit,
    /// Keys, webhook endpoints and alerts.
    Manage,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Submit, Scope::Manage];

    pub fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Submit => "submit",
            Scope::Manage => "manage",
        }
    }

    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.name() == text)
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which data and books a caller works in: `test` keys run against the
/// sample data set, and their tasks and usage are kept apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Live,
    Test,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Live => "live",
            Mode::Test => "test",
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "live" => Some(Mode::Live),
            "test" => Some(Mode::Test),
            _ => None,
        }
    }
}

/// What test-mode tasks and usage are kept under: the account's e-mail
/// behind this mark, which no e-mail address starts with (an account's
/// address must not hold a `:`; `accounts::add_account`).
const TEST_OWNER: &str = "test:";

/// The owner of tasks and usage of `email` in `mode`.
pub fn owner(email: &str, mode: Mode) -> String {
    match mode {
        Mode::Live => email.to_string(),
        Mode::Test => format!("{TEST_OWNER}{email}"),
    }
}

/// The account and mode an owner names.
pub fn account_of(owner: &str) -> (&str, Mode) {
    match owner.strip_prefix(TEST_OWNER) {
        Some(email) => (email, Mode::Test),
        None => (owner, Mode::Live),
    }
}

/// A stored key: everything but its secret, which is kept as a keyed hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// 12 random hex digits; the store's key.
    pub id: String,
    /// The owning account's e-mail.
    pub account: String,
    pub name: String,
    pub scopes: Vec<Scope>,
    pub mode: Mode,
    /// Hex HMAC-SHA256 of the secret under the deployment's pepper.
    pub hash: String,
    pub created_at: NaiveDateTime,
    pub expires_at: Option<NaiveDateTime>,
    pub revoked_at: Option<NaiveDateTime>,
    /// Written at most once a minute per instance.
    pub last_used_at: Option<NaiveDateTime>,
}

impl KeyRecord {
    /// A live read key of `account` for `issued`, made now: the tests' key.
    #[cfg(test)]
    pub(crate) fn for_test(issued: &token::Issued, account: &str) -> KeyRecord {
        KeyRecord {
            id: issued.id.clone(),
            account: account.into(),
            name: "k".into(),
            scopes: vec![Scope::Read],
            mode: Mode::Live,
            hash: issued.hash.clone(),
            created_at: crate::tasks::now(),
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        }
    }

    /// `mlk_<mode>_<id>`: shown in lists and logs, and enough to tell keys apart.
    pub fn prefix(&self) -> String {
        token::prefix(self.mode, &self.id)
    }

    /// Neither revoked nor expired at `now`.
    pub fn live_at(&self, now: NaiveDateTime) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| e > now)
    }

    pub fn allows(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
}

/// Where keys are kept: one record per key id, listed by account.
#[async_trait]
pub trait KeyStore: Send + Sync {
    async fn get(&self, id: &str) -> Result<Option<KeyRecord>, PortError>;
    /// Adds `record` unless its account already holds `max_live` keys live
    /// at `record.created_at`; false when refused.
    async fn insert(&self, record: KeyRecord, max_live: usize) -> Result<bool, PortError>;
    /// The account's keys, newest first, revoked and expired ones included.
    async fn list(&self, account: &str) -> Result<Vec<KeyRecord>, PortError>;
    /// Marks the account's key revoked at `at`; false when it has no such
    /// key. Revoking a revoked key keeps the first time.
    async fn revoke(&self, account: &str, id: &str, at: NaiveDateTime) -> Result<bool, PortError>;
    /// Notes the key was used at `at`.
    async fn touch(&self, id: &str, at: NaiveDateTime) -> Result<(), PortError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_keep_the_mode_and_give_back_the_account() {
        assert_eq!(owner("a@b.example", Mode::Live), "a@b.example");
        let t = owner("a@b.example", Mode::Test);
        assert_ne!(t, "a@b.example");
        assert_eq!(account_of(&t), ("a@b.example", Mode::Test));
        assert_eq!(account_of("a@b.example"), ("a@b.example", Mode::Live));
    }
}
