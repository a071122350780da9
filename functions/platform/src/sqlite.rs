//! The embedded database: one SQLite file holding tasks and accounts.
//!
//! Calls are short and run on the blocking pool so the async reactor never waits on disk.

use crate::PortError;
use parking_lot::Mutex;
use rusqlite::Connection;
use std::path::Path;
use std::sync::Arc;

/// Timestamps as stored: sortable text with microseconds.
pub(crate) const TIME_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6f";

#[derive(Clone)]
pub struct Database {
    conn: Handle,
    /// A second connection for reads of a file: in WAL mode a read does not
    /// wait for a write (a status read while the worker settles a task).
    /// The same connection for an in-memory database.
    reader: Handle,
}

/// A connection and its turn. Callers wait for the turn as futures, and
/// only the caller whose turn it is takes a blocking thread: a burst of
/// requests queues in memory instead of holding a thread each (one
/// connection serves one call at a time anyway).
#[derive(Clone)]
struct Handle {
    conn: Arc<Mutex<Connection>>,
    turn: Arc<tokio::sync::Semaphore>,
    /// When a call on this connection last found the file locked by
    /// another process past [`busy_timeout`]: for [`BLOCKED_FOR`] after it,
    /// calls try the lock for [`BUSY_AGAIN`] only, so a request making
    /// several calls answers 503 after one busy wait instead of one per
    /// call. (A call that succeeds may only have read: it does not show the
    /// lock was let go.)
    blocked: Arc<Mutex<Option<std::time::Instant>>>,
}

impl Handle {
    fn new(conn: Connection) -> Handle {
        Handle {
            conn: Arc::new(Mutex::new(conn)),
            turn: Arc::new(tokio::sync::Semaphore::new(1)),
            blocked: Arc::default(),
        }
    }
}

/// How long a call waits for a lock another process holds on the file
/// (`MARKETLAB_DB_BUSY_TIMEOUT_MS`, 2 s): in one process the turn orders the
/// calls, so only another process (a CLI command, a second server, a tool
/// holding a transaction) makes one wait; past this the call fails and the
/// request answers 503 with `Retry-After`.
pub fn busy_timeout() -> std::time::Duration {
    std::time::Duration::from_millis(
        std::env::var("MARKETLAB_DB_BUSY_TIMEOUT_MS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|&ms: &u64| ms > 0)
            .unwrap_or(2_000),
    )
}

/// How long a call tries a lock that a call found held within [`BLOCKED_FOR`].
pub const BUSY_AGAIN: std::time::Duration = std::time::Duration::from_millis(50);

/// How long after a call found the lock held the next calls wait only [`BUSY_AGAIN`].
pub const BLOCKED_FOR: std::time::Duration = std::time::Duration::from_secs(5);

const SCHEMA: &str = "
-- Usage counters per account, day and counter (platform::usage).
CREATE TABLE IF NOT EXISTS usage (
    account TEXT NOT NULL,
    day     TEXT NOT NULL,
    counter TEXT NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (account, day, counter)
) WITHOUT ROWID;
-- Limit counters (platform::quota): requests in a window, per key.
CREATE TABLE IF NOT EXISTS quota_counters (
    key       TEXT PRIMARY KEY,
    n         INTEGER NOT NULL,
    expires_s INTEGER NOT NULL
) WITHOUT ROWID;
-- Held task slots per account, each until its lease ends.
CREATE TABLE IF NOT EXISTS quota_holds (
    key      TEXT NOT NULL,
    holder   TEXT NOT NULL,
    until_ms INTEGER NOT NULL,
    PRIMARY KEY (key, holder)
) WITHOUT ROWID;
-- Plan limits set by an operator, over the defaults in code.
CREATE TABLE IF NOT EXISTS plan_limits (
    code   TEXT PRIMARY KEY,
    limits TEXT NOT NULL
);
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
    lease_until TEXT,
    progress    INTEGER
);
-- An owner's tasks newest first by creation time, as the DynamoDB index
-- (owner, created) orders them; a listing page walks it and stops.
DROP INDEX IF EXISTS tasks_by_owner;
CREATE INDEX IF NOT EXISTS tasks_by_owner_created ON tasks (owner, created_at DESC, seq DESC);
CREATE INDEX IF NOT EXISTS tasks_by_owner_status ON tasks (owner, status, created_at DESC, seq DESC);
CREATE INDEX IF NOT EXISTS tasks_by_status ON tasks (status);
-- Task counts per owner, kind and status, kept by triggers, so a listing's
-- total costs a few rows however many tasks an account has.
CREATE TABLE IF NOT EXISTS task_counts (
    owner  TEXT NOT NULL,
    kind   TEXT NOT NULL,
    status TEXT NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (owner, kind, status)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS task_counts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_counts (owner, kind, status, n) VALUES (NEW.owner, NEW.kind, NEW.status, 1)
        ON CONFLICT (owner, kind, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS task_counts_update AFTER UPDATE OF status ON tasks
WHEN OLD.status <> NEW.status BEGIN
    UPDATE task_counts SET n = n - 1
        WHERE owner = OLD.owner AND kind = OLD.kind AND status = OLD.status;
    INSERT INTO task_counts (owner, kind, status, n) VALUES (NEW.owner, NEW.kind, NEW.status, 1)
        ON CONFLICT (owner, kind, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS task_counts_delete AFTER DELETE ON tasks BEGIN
    UPDATE task_counts SET n = n - 1
        WHERE owner = OLD.owner AND kind = OLD.kind AND status = OLD.status;
END;
-- Outcomes counted to a task (its own and its chunks'), read by
-- long-polls that cannot hear this process's announcements.
CREATE TABLE IF NOT EXISTS task_ends (
    id    TEXT NOT NULL,
    child TEXT NOT NULL,
    PRIMARY KEY (id, child)
) WITHOUT ROWID;
-- Idempotency keys of submits: the task a key first created, per owner.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    owner      TEXT NOT NULL,
    key        TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (owner, key)
) WITHOUT ROWID;
-- Webhook endpoints and scanner alerts per account (platform::webhooks).
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    account TEXT NOT NULL,
    id      TEXT NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scanner_alerts (
    account TEXT NOT NULL,
    id      TEXT NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
-- Deliveries: the log of each endpoint and, while pending, the queue
-- (due_ms is when the next attempt may be sent).
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    account  TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    id       TEXT NOT NULL,
    status   TEXT NOT NULL,
    due_ms   INTEGER,
    body     TEXT NOT NULL,
    UNIQUE (endpoint, id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (due_ms) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS webhook_deliveries_log ON webhook_deliveries (endpoint, seq DESC);
CREATE TABLE IF NOT EXISTS accounts (
    email               TEXT PRIMARY KEY,
    password_hash       TEXT NOT NULL,
    plan                TEXT NOT NULL,
    selected_indicators TEXT NOT NULL DEFAULT '[]',
    created_at          TEXT NOT NULL,
    custom_indicators   TEXT NOT NULL DEFAULT '[]'
);
-- API keys: the secret only as a keyed hash (platform::keys).
CREATE TABLE IF NOT EXISTS api_keys (
    id           TEXT PRIMARY KEY,
    account      TEXT NOT NULL,
    name         TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    mode         TEXT NOT NULL,
    hash         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT,
    revoked_at   TEXT,
    last_used_at TEXT
);
CREATE INDEX IF NOT EXISTS api_keys_by_account ON api_keys (account, created_at DESC);
";

/// The file holds password hashes: only its owner may read it (0600, and
/// 0700 for a directory made for it or named `state`; a shared directory
/// given by the user keeps its mode). SQLite gives the -wal and -shm files the
/// main file's mode.
#[cfg(unix)]
fn private(path: &Path, made_dir: bool) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && (made_dir || dir.file_name().is_some_and(|n| n == "state"))
    {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::set_permissions(&name, std::fs::Permissions::from_mode(0o600)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn private(_path: &Path, _made_dir: bool) -> std::io::Result<()> {
    Ok(())
}

impl Database {
    /// Opens (creating if needed) the database file and its schema.
    pub fn open(path: &Path) -> Result<Self, PortError> {
        let mut made = false;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            made = !dir.exists();
            std::fs::create_dir_all(dir).map_err(|e| {
                PortError::unavailable_by(format!("state directory {}", dir.display()), e)
            })?;
        }
        private(path, made)
            .map_err(|e| PortError::unavailable_by(format!("database {}", path.display()), e))?;
        let conn = Connection::open(path)
            .map_err(|e| PortError::unavailable_by(format!("database {}", path.display()), e))?;
        let mut db = Self::init(conn)?;
        let reader = Connection::open(path)
            .map_err(|e| PortError::unavailable_by(format!("database {}", path.display()), e))?;
        reader
            .busy_timeout(busy_timeout())
            .map_err(PortError::internal)?;
        reader.set_prepared_statement_cache_capacity(64);
        db.reader = Handle::new(reader);
        Ok(db)
    }

    /// A private in-memory database, for tests.
    pub fn in_memory() -> Result<Self, PortError> {
        Self::init(Connection::open_in_memory().map_err(PortError::internal)?)
    }

    fn init(conn: Connection) -> Result<Self, PortError> {
        conn.busy_timeout(busy_timeout())
            .map_err(PortError::internal)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(PortError::internal)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(PortError::internal)?;
        // Every statement of the stores is prepared once per connection.
        conn.set_prepared_statement_cache_capacity(64);
        let had_counts: bool = conn
            .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'task_counts'")
            .and_then(|mut s| s.exists([]))
            .map_err(PortError::internal)?;
        conn.execute_batch(SCHEMA).map_err(PortError::internal)?;
        // Files made before the counts existed: count what is there once.
        if !had_counts {
            conn.execute_batch(
                "DELETE FROM task_counts;
                 INSERT INTO task_counts (owner, kind, status, n)
                     SELECT owner, kind, status, COUNT(*) FROM tasks GROUP BY owner, kind, status;",
            )
            .map_err(PortError::internal)?;
        }
        // Files made before these columns existed gain them.
        add_column(
            &conn,
            "accounts",
            "custom_indicators",
            "TEXT NOT NULL DEFAULT '[]'",
        )?;
        add_column(&conn, "tasks", "progress", "INTEGER")?;
        let conn = Handle::new(conn);
        Ok(Database {
            reader: conn.clone(),
            conn,
        })
    }

    /// Runs `f` with the connection on the blocking pool.
    pub async fn run<T, F>(&self, f: F) -> Result<T, PortError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, rusqlite::Error> + Send + 'static,
    {
        Self::on(self.conn.clone(), f).await
    }

    /// Runs `f`, which only reads, with the reading connection.
    pub async fn read<T, F>(&self, f: F) -> Result<T, PortError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, rusqlite::Error> + Send + 'static,
    {
        Self::on(self.reader.clone(), f).await
    }

    async fn on<T, F>(handle: Handle, f: F) -> Result<T, PortError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, rusqlite::Error> + Send + 'static,
    {
        let turn = handle
            .turn
            .acquire_owned()
            .await
            .map_err(|_| PortError::internal("the database turn closed"))?;
        let (conn, blocked) = (handle.conn, handle.blocked);
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            // A panic in `f` unwinds through rusqlite's transaction guard
            // (rolled back) and leaves the connection usable: no poison.
            let mut guard = conn.lock();
            let recently = blocked.lock().is_some_and(|t| t.elapsed() < BLOCKED_FOR);
            let _ = guard.busy_timeout(if recently { BUSY_AGAIN } else { busy_timeout() });
            let done = f(&mut guard);
            let busy = matches!(
                &done,
                Err(rusqlite::Error::SqliteFailure(code, _))
                    if matches!(
                        code.code,
                        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                    )
            );
            if busy {
                if !recently {
                    tracing::warn!(
                        "the database file is locked by another process; calls answer unavailable"
                    );
                }
                *blocked.lock() = Some(std::time::Instant::now());
            }
            done.map_err(|e| match e {
                _ if busy => PortError::unavailable("task database"),
                other => PortError::internal(other),
            })
        })
        .await
        .map_err(PortError::internal)?
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn state_files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        std::fs::create_dir(&state).unwrap();
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = state.join("marketlab.sqlite");
        std::fs::write(&file, b"").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let db = Database::open(&file).unwrap();
        drop(db);
        assert_eq!(
            (mode(&state), mode(&file)),
            (0o700, 0o600),
            "an old world-readable file is fixed"
        );
        let fresh = dir.path().join("new").join("db.sqlite");
        Database::open(&fresh).unwrap();
        assert_eq!(mode(fresh.parent().unwrap()), 0o700);
        assert_eq!(mode(&fresh), 0o600);
        let wal = dir.path().join("new").join("db.sqlite-wal");
        if wal.exists() {
            assert_eq!(mode(&wal), 0o600);
        }
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
        Database::open(&shared.join("db.sqlite")).unwrap();
        assert_eq!(
            mode(&shared),
            0o755,
            "a directory the user chose keeps its mode"
        );
        assert_eq!(mode(&shared.join("db.sqlite")), 0o600);
    }
}

/// Adds `column` to `table` unless the file already has it.
fn add_column(conn: &Connection, table: &str, column: &str, decl: &str) -> Result<(), PortError> {
    let has: bool = conn
        .prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")
        .and_then(|mut s| s.exists([table, column]))
        .map_err(PortError::internal)?;
    if !has {
        conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))
            .map_err(PortError::internal)?;
    }
    Ok(())
}
