//! Embedded key store on the shared SQLite file.

use super::{KeyRecord, KeyStore, Mode, Scope};
use crate::PortError;
use crate::sqlite::{Database, TIME_FORMAT};
use async_trait::async_trait;
use chrono::NaiveDateTime;
use rusqlite::{OptionalExtension, Row, params};

pub struct SqliteKeyStore {
    db: Database,
}

impl SqliteKeyStore {
    pub fn new(db: Database) -> Self {
        SqliteKeyStore { db }
    }
}

const COLUMNS: &str =
    "id, account, name, scopes, mode, hash, created_at, expires_at, revoked_at, last_used_at";

fn bad(what: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Text,
        Box::new(PortError::internal(what)),
    )
}

fn time(text: String) -> rusqlite::Result<NaiveDateTime> {
    NaiveDateTime::parse_from_str(&text, TIME_FORMAT).map_err(|e| bad(e.to_string()))
}

fn text(t: NaiveDateTime) -> String {
    t.format(TIME_FORMAT).to_string()
}

fn row_to_record(r: &Row<'_>) -> rusqlite::Result<KeyRecord> {
    let scopes: String = r.get(3)?;
    let mode: String = r.get(4)?;
    let optional = |i: usize| -> rusqlite::Result<Option<NaiveDateTime>> {
        r.get::<_, Option<String>>(i)?.map(time).transpose()
    };
    Ok(KeyRecord {
        id: r.get(0)?,
        account: r.get(1)?,
        name: r.get(2)?,
        scopes: scopes
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| Scope::parse(s).ok_or_else(|| bad(format!("scope {s}"))))
            .collect::<rusqlite::Result<_>>()?,
        mode: Mode::parse(&mode).ok_or_else(|| bad(format!("mode {mode}")))?,
        hash: r.get(5)?,
        created_at: time(r.get(6)?)?,
        expires_at: optional(7)?,
        revoked_at: optional(8)?,
        last_used_at: optional(9)?,
    })
}

fn scopes_text(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.name())
        .collect::<Vec<_>>()
        .join(",")
}

#[async_trait]
impl KeyStore for SqliteKeyStore {
    async fn get(&self, id: &str) -> Result<Option<KeyRecord>, PortError> {
        let id = id.to_string();
        self.db
            .read(move |c| {
                c.prepare_cached(&format!("SELECT {COLUMNS} FROM api_keys WHERE id = ?1"))?
                    .query_row([id], row_to_record)
                    .optional()
            })
            .await
    }

    async fn insert(&self, r: KeyRecord, max_live: usize) -> Result<bool, PortError> {
        self.db
            .run(move |c| {
                let tx = c.transaction()?;
                let created = text(r.created_at);
                let live: i64 = tx.query_row(
                    "SELECT COUNT(*) FROM api_keys WHERE account = ?1 AND revoked_at IS NULL
                       AND (expires_at IS NULL OR expires_at > ?2)",
                    params![r.account, created],
                    |row| row.get(0),
                )?;
                if live as usize >= max_live {
                    return Ok(false);
                }
                tx.execute(
                    &format!(
                        "INSERT INTO api_keys ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, NULL)"
                    ),
                    params![
                        r.id,
                        r.account,
                        r.name,
                        scopes_text(&r.scopes),
                        r.mode.name(),
                        r.hash,
                        created,
                        r.expires_at.map(text),
                    ],
                )?;
                tx.commit()?;
                Ok(true)
            })
            .await
    }

    async fn list(&self, account: &str) -> Result<Vec<KeyRecord>, PortError> {
        let account = account.to_string();
        self.db
            .read(move |c| {
                c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM api_keys WHERE account = ?1 ORDER BY created_at DESC, id"
                ))?
                .query_map([account], row_to_record)?
                .collect()
            })
            .await
    }

    async fn revoke(&self, account: &str, id: &str, at: NaiveDateTime) -> Result<bool, PortError> {
        let (account, id) = (account.to_string(), id.to_string());
        self.db
            .run(move |c| {
                let n = c.execute(
                    "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?3)
                     WHERE id = ?1 AND account = ?2",
                    params![id, account, text(at)],
                )?;
                Ok(n == 1)
            })
            .await
    }

    async fn touch(&self, id: &str, at: NaiveDateTime) -> Result<(), PortError> {
        let id = id.to_string();
        self.db
            .run(move |c| {
                c.execute(
                    "UPDATE api_keys SET last_used_at = ?2 WHERE id = ?1",
                    params![id, text(at)],
                )
                .map(|_| ())
            })
            .await
    }
}
