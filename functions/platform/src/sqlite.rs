//! The embedded database: one SQLite file holding tasks and accounts.
//!
//! Calls are short and run on the blocking pool so the async reactor never waits on disk.

use crate::PortError;
use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub struct Database {
    conn: Arc<Mutex<Connection>>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tasks (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    owner       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    status      TEXT NOT NULL,
    params      TEXT NOT NULL,
    result      TEXT,
    error       TEXT,
    attempts    INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    started_at  TEXT,
    finished_at TEXT,
    lease_until TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, seq DESC);
CREATE INDEX IF NOT EXISTS tasks_by_status ON tasks (status);
CREATE TABLE IF NOT EXISTS accounts (
    email               TEXT PRIMARY KEY,
    password_hash       TEXT NOT NULL,
    plan                TEXT NOT NULL,
    selected_indicators TEXT NOT NULL DEFAULT '[]',
    created_at          TEXT NOT NULL,
    custom_indicators   TEXT NOT NULL DEFAULT '[]'
);
";

impl Database {
    /// Opens (creating if needed) the database file and its schema.
    pub fn open(path: &Path) -> Result<Self, PortError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                PortError::Unavailable(format!("state directory {}: {e}", dir.display()))
            })?;
        }
        let conn = Connection::open(path)
            .map_err(|e| PortError::Unavailable(format!("database {}: {e}", path.display())))?;
        Self::init(conn)
    }

    /// A private in-memory database, for tests.
    pub fn in_memory() -> Result<Self, PortError> {
        Self::init(Connection::open_in_memory().map_err(PortError::internal)?)
    }

    fn init(conn: Connection) -> Result<Self, PortError> {
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(PortError::internal)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(PortError::internal)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(PortError::internal)?;
        conn.execute_batch(SCHEMA).map_err(PortError::internal)?;
        // Files made before custom indicators existed gain the column.
        let has_custom: bool = conn
            .prepare("SELECT 1 FROM pragma_table_info('accounts') WHERE name = 'custom_indicators'")
            .and_then(|mut s| s.exists([]))
            .map_err(PortError::internal)?;
        if !has_custom {
            conn.execute_batch(
                "ALTER TABLE accounts ADD COLUMN custom_indicators TEXT NOT NULL DEFAULT '[]'",
            )
            .map_err(PortError::internal)?;
        }
        Ok(Database {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` with the connection on the blocking pool.
    pub async fn run<T, F>(&self, f: F) -> Result<T, PortError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, rusqlite::Error> + Send + 'static,
    {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = conn
                .lock()
                .map_err(|_| PortError::Internal("database lock poisoned".into()))?;
            f(&mut guard).map_err(|e| match e {
                rusqlite::Error::SqliteFailure(code, _)
                    if matches!(
                        code.code,
                        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                    ) =>
                {
                    PortError::Unavailable("task database".into())
                }
                other => PortError::internal(other),
            })
        })
        .await
        .map_err(PortError::internal)?
    }
}
