//! API keys as an account manages them (`docs/keys.md`): created with a
//! name, scopes, a mode and an optional expiry, the secret shown once;
//! listed with what they may do and when they were last used; revoked.

use crate::{Error, Result};
use chrono::{DateTime, NaiveDateTime, SubsecRound, Utc};
use platform::keys::{KeyRecord, KeyStore, MAX_LIVE_KEYS, Mode, Pepper, Scope, issue};
use serde::{Deserialize, Serialize};
#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// `POST /keys`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct KeyRequest {
    /// What the key is for (1-100 characters), shown in lists and usage.
    #[cfg_attr(
        feature = "openapi",
        schema(example = "nightly CI backtests", min_length = 1, max_length = 100)
    )]
    pub name: String,
    /// What the key may do: `read` (data, analytics, results), `submit`
    /// (tasks and batches), `manage` (keys, webhooks, alerts).
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 3))]
    pub scopes: Vec<Scope>,
    /// `live` (the default for a password or live key) or `test`: the
    /// sample data set, with tasks and usage kept apart and never billed.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// When the key stops working (RFC 3339, in the future); never by default.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(example = "2027-06-30T00:00:00Z"))]
    pub expires_at: Option<DateTime<Utc>>,
}

/// A key as its account sees it: never its secret.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct KeyView {
    /// Twelve hex digits; `DELETE /keys/{id}` revokes the key.
    pub id: String,
    /// `mlk_<mode>_<id>`: the start of the key, enough to recognise it.
    #[cfg_attr(feature = "openapi", schema(example = "mlk_live_0a1b2c3d4e5f"))]
    pub prefix: String,
    pub name: String,
    pub scopes: Vec<Scope>,
    pub mode: Mode,
    /// `active`, `revoked` or `expired`.
    pub status: &'static str,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// To the minute: written at most once a minute.
    pub last_used_at: Option<DateTime<Utc>>,
}

/// `POST /keys` answers the key once: it is kept only as a hash.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct CreatedKey {
    /// The whole key, to send as `Authorization: Bearer <key>`. Shown this once.
    #[cfg_attr(
        feature = "openapi",
        schema(example = "mlk_live_0a1b2c3d4e5f_Jb2Kq9x0N1mZ7cV4rT6yU8iO3pA5sD2fG7hJ1kL9qWe")
    )]
    pub key: String,
    #[serde(flatten)]
    pub view: KeyView,
}

/// `GET /keys`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct KeyList {
    /// Newest first, revoked and expired ones included.
    pub keys: Vec<KeyView>,
    /// Keys neither revoked nor expired.
    pub live: usize,
    /// The most live keys an account may hold.
    pub max_live: usize,
}

/// Who is asking: an account's password (every scope, live) or one of its keys.
pub struct Creator<'a> {
    pub account: &'a str,
    pub key: Option<&'a KeyRecord>,
}

pub fn view(k: &KeyRecord, now: NaiveDateTime) -> KeyView {
    KeyView {
        id: k.id.clone(),
        prefix: k.prefix(),
        name: k.name.clone(),
        scopes: k.scopes.clone(),
        mode: k.mode,
        status: if k.revoked_at.is_some() {
            "revoked"
        } else if k.live_at(now) {
            "active"
        } else {
            "expired"
        },
        created_at: k.created_at.and_utc(),
        expires_at: k.expires_at.map(|t| t.and_utc()),
        revoked_at: k.revoked_at.map(|t| t.and_utc()),
        last_used_at: k.last_used_at.map(|t| t.and_utc()),
    }
}

/// Makes a key. A key may only make keys of its own mode with scopes it
/// holds itself, so a leaked key never yields a stronger one.
pub async fn create(
    store: &dyn KeyStore,
    pepper: &Pepper,
    creator: Creator<'_>,
    request: KeyRequest,
    now: DateTime<Utc>,
) -> Result<CreatedKey> {
    let name = request.name.trim().to_string();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Error::invalid("name", "must be 1 to 100 characters"));
    }
    let mut scopes = request.scopes;
    scopes.sort();
    scopes.dedup();
    if scopes.is_empty() {
        return Err(Error::invalid(
            "scopes",
            "must name at least one of read, submit, manage",
        ));
    }
    let own_mode = creator.key.map_or(Mode::Live, |k| k.mode);
    let mode = request.mode.unwrap_or(own_mode);
    if let Some(k) = creator.key {
        if let Some(s) = scopes.iter().find(|s| !k.allows(**s)) {
            return Err(Error::Forbidden(format!(
                "this API key lacks the '{s}' scope, so it cannot make a key with it"
            )));
        }
        if mode != k.mode {
            return Err(Error::Forbidden(format!(
                "a {} key can only make {} keys",
                k.mode.name(),
                k.mode.name()
            )));
        }
    }
    // Microseconds, as the stores keep times: the answer equals a later read.
    let created_at = now.naive_utc().trunc_subsecs(6);
    if let Some(e) = request.expires_at
        && e <= now
    {
        return Err(Error::invalid("expires_at", "must be in the future"));
    }
    let issued = issue(mode, pepper).map_err(platform::PortError::internal)?;
    let record = KeyRecord {
        id: issued.id,
        account: creator.account.to_string(),
        name,
        scopes,
        mode,
        hash: issued.hash,
        created_at,
        expires_at: request.expires_at.map(|e| e.naive_utc().trunc_subsecs(6)),
        revoked_at: None,
        last_used_at: None,
    };
    if !store.insert(record.clone(), MAX_LIVE_KEYS).await? {
        return Err(Error::Conflict(format!(
            "the account has {MAX_LIVE_KEYS} live API keys, the most it may have; revoke one first"
        )));
    }
    Ok(CreatedKey {
        key: issued.key,
        view: view(&record, created_at),
    })
}

/// The account's keys.
pub async fn list(store: &dyn KeyStore, account: &str, now: DateTime<Utc>) -> Result<KeyList> {
    let now = now.naive_utc();
    let keys = store.list(account).await?;
    Ok(KeyList {
        live: keys.iter().filter(|k| k.live_at(now)).count(),
        keys: keys.iter().map(|k| view(k, now)).collect(),
        max_live: MAX_LIVE_KEYS,
    })
}

/// Revokes one of the account's keys; 404 for a key it does not have.
pub async fn revoke(
    store: &dyn KeyStore,
    account: &str,
    id: &str,
    now: DateTime<Utc>,
) -> Result<KeyView> {
    let now = now.naive_utc();
    if !store.revoke(account, id, now).await? {
        return Err(Error::NotFound(format!("no API key '{id}'")));
    }
    let record = store
        .get(id)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no API key '{id}'")))?;
    Ok(view(&record, now))
}
