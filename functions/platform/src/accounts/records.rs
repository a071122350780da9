//! New account records: the one way an account is made (the embedded CLI,
//! the demo accounts, the AWS provisioning tool), its password hashed.

use super::{AccountRecord, AccountStore, CustomIndicator, PLANS, hash_password, plan};
use crate::PortError;

/// Adds or replaces an account; refuses unknown plan codes.
pub async fn add_account(
    store: &dyn AccountStore,
    email: &str,
    password: &str,
    plan_code: &str,
    selected: Vec<String>,
) -> Result<(), PortError> {
    if plan(plan_code).is_none() {
        let codes: Vec<&str> = PLANS.iter().map(|p| p.code).collect();
        return Err(PortError::Invalid(format!(
            "unknown plan '{plan_code}' (one of: {})",
            codes.join(", ")
        )));
    }
    if !email.contains('@') || password.len() < 8 {
        return Err(PortError::Invalid(
            "an account needs an e-mail address and a password of at least 8 characters".into(),
        ));
    }
    // `test:` marks test-mode owners (`keys::owner`): no address may look like one.
    if email.contains(':') {
        return Err(PortError::Invalid(format!(
            "'{email}' is not an e-mail address (':' is not allowed)"
        )));
    }
    store
        .put(new_record(
            email,
            password,
            plan_code,
            selected,
            Vec::new(),
        )?)
        .await
}

/// A new account's record, its password hashed.
pub fn new_record(
    email: &str,
    password: &str,
    plan_code: &str,
    selected_indicators: Vec<String>,
    custom_indicators: Vec<CustomIndicator>,
) -> Result<AccountRecord, PortError> {
    Ok(AccountRecord {
        email: email.into(),
        password_hash: hash_password(password)?,
        plan: plan_code.into(),
        selected_indicators,
        created_at: crate::tasks::now(),
        custom_indicators,
    })
}
