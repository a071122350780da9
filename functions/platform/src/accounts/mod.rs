//! Accounts, plans and credential checks.

mod auth;
mod hashing;
mod plans;
mod records;
#[cfg(feature = "sqlite")]
mod sqlite;
mod throttle;
mod trickle;

pub use auth::{ACCOUNT_REFRESH, Authenticator, KeyLogin, Verdict};
pub use hashing::hash_password;
pub use plans::{PLANS, Plan, Service, plan};
pub use records::{add_account, new_record};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteAccountStore;
pub use throttle::{FailureLog, Failures, LoginPolicy, MemoryFailureLog};
pub use trickle::Trickle;

use crate::PortError;
use async_trait::async_trait;
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// A custom indicator an account defined: two indicators combined, on a
/// timeframe, optionally smoothed (data service 4.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomIndicator {
    /// The identifier used by `getUserIndicatorData?url=`.
    pub url: String,
    pub name: String,
    pub indicator_1_url: String,
    pub indicator_2_url: String,
    /// `ratio`, `difference`, `sum`, `product` or `average`.
    pub calculate: String,
    /// `Daily`, `Weekly` or `Monthly`.
    pub timeframe: String,
    /// Moving-average periods as text; `0` for none.
    pub ma: String,
    pub upper_extreme_value: f64,
    pub lower_extreme_value: f64,
    pub create_date: NaiveDateTime,
}

/// A stored account. The password is kept only as an argon2 PHC string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct AccountRecord {
    /// Lower-cased e-mail; the account's identity and the task owner.
    pub email: String,
    pub password_hash: String,
    /// A plan code from [`PLANS`].
    pub plan: String,
    /// Indicator codes the user picked (data service selections).
    pub selected_indicators: Vec<String>,
    pub created_at: NaiveDateTime,
    #[serde(default)]
    pub custom_indicators: Vec<CustomIndicator>,
}

/// A caller whose credentials were verified.
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    pub email: String,
    pub plan: &'static Plan,
    pub selected_indicators: Vec<String>,
    pub custom_indicators: Vec<CustomIndicator>,
}

impl Account {
    pub fn can_use(&self, service: Service) -> bool {
        self.plan.services.contains(&service)
    }
}

#[async_trait]
pub trait AccountStore: Send + Sync {
    async fn get(&self, email: &str) -> Result<Option<AccountRecord>, PortError>;
    /// Creates or replaces the account with this e-mail.
    async fn put(&self, record: AccountRecord) -> Result<(), PortError>;
    async fn list(&self) -> Result<Vec<AccountRecord>, PortError>;
}

/// E-mails compare case-insensitively and without surrounding blanks.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}
