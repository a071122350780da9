//! Embedded account store on the shared SQLite file.

use super::{AccountRecord, AccountStore, normalize_email};
use crate::PortError;
use crate::sqlite::Database;
use crate::sqlite::TIME_FORMAT;
use async_trait::async_trait;
use chrono::NaiveDateTime;
use rusqlite::{OptionalExtension, Row, params};

pub struct SqliteAccountStore {
    db: Database,
}

impl SqliteAccountStore {
    pub fn new(db: Database) -> Self {
        SqliteAccountStore { db }
    }
}

fn bad(e: impl std::error::Error + Send + Sync + 'static) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
}

fn row_to_record(r: &Row<'_>) -> rusqlite::Result<AccountRecord> {
    let selected: String = r.get(3)?;
    let created: String = r.get(4)?;
    let custom: String = r.get(5)?;
    Ok(AccountRecord {
        email: r.get(0)?,
        password_hash: r.get(1)?,
        plan: r.get(2)?,
        selected_indicators: serde_json::from_str(&selected).map_err(bad)?,
        created_at: NaiveDateTime::parse_from_str(&created, TIME_FORMAT).map_err(bad)?,
        custom_indicators: serde_json::from_str(&custom).map_err(bad)?,
    })
}

const COLUMNS: &str =
    "email, password_hash, plan, selected_indicators, created_at, custom_indicators";

#[async_trait]
impl AccountStore for SqliteAccountStore {
    async fn get(&self, email: &str) -> Result<Option<AccountRecord>, PortError> {
        let email = normalize_email(email);
        self.db
            .run(move |c| {
                c.query_row(
                    &format!("SELECT {COLUMNS} FROM accounts WHERE email = ?1"),
                    [email],
                    row_to_record,
                )
                .optional()
            })
            .await
    }

    async fn put(&self, record: AccountRecord) -> Result<(), PortError> {
        let selected =
            serde_json::to_string(&record.selected_indicators).map_err(PortError::internal)?;
        let custom =
            serde_json::to_string(&record.custom_indicators).map_err(PortError::internal)?;
        self.db
            .run(move |c| {
                c.execute(
                    &format!(
                        "INSERT OR REPLACE INTO accounts ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                    ),
                    params![
                        normalize_email(&record.email),
                        record.password_hash,
                        record.plan,
                        selected,
                        record.created_at.format(TIME_FORMAT).to_string(),
                        custom
                    ],
                )
                .map(|_| ())
            })
            .await
    }

    async fn list(&self) -> Result<Vec<AccountRecord>, PortError> {
        self.db
            .run(|c| {
                let mut stmt =
                    c.prepare(&format!("SELECT {COLUMNS} FROM accounts ORDER BY email"))?;
                stmt.query_map([], row_to_record)?.collect()
            })
            .await
    }
}
