//! The contract suites against the embedded adapters.

use platform::accounts::SqliteAccountStore;
use platform::marketdata::{LocalDir, ParquetMarketData};
use platform::queue::LocalQueue;
use platform::sqlite::Database;
use platform::tasks::SqliteTaskStore;
use std::sync::Arc;
use tests::contract;
use tests::server::market_dir;

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_task_store_in_memory() {
    contract::tasks::run_all(
        Arc::new(SqliteTaskStore::new(Database::in_memory().unwrap())),
        10_000,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_task_store_on_disk_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/tasks.sqlite");
    contract::tasks::run_all(
        Arc::new(SqliteTaskStore::new(Database::open(&path).unwrap())),
        10_000,
    )
    .await;
    let reopened = SqliteTaskStore::new(Database::open(&path).unwrap());
    use platform::tasks::TaskStore;
    assert!(
        !reopened.unfinished().await.unwrap().is_empty(),
        "tasks persist across opens"
    );
}

/// Rows damaged with SQL as the store never writes them: what a column's
/// type affinity and NOT NULL allow.
struct SqliteDamage(Database);

#[async_trait::async_trait]
impl contract::task_damage::Damager for SqliteDamage {
    async fn set(&self, id: uuid::Uuid, field: &str, raw: contract::task_damage::Raw) -> bool {
        use contract::task_damage::Raw;
        use rusqlite::types::Value;
        // Text columns keep a number as its text: no such damage here.
        const INTEGERS: [&str; 2] = ["attempts", "progress"];
        let value = match raw {
            Raw::Missing => Value::Null,
            Raw::Text(s) => Value::Text(s),
            Raw::Number(n) if INTEGERS.contains(&field) => Value::Integer(n),
            Raw::Number(_) => return false,
            Raw::Binary => Value::Blob(vec![0xff, 0]),
        };
        let (sql, id) = (
            format!("UPDATE tasks SET {field} = ?1 WHERE id = ?2"),
            id.to_string(),
        );
        self.0
            .run(
                move |c| match c.execute(&sql, rusqlite::params![value, id]) {
                    Ok(n) => Ok(n == 1),
                    Err(rusqlite::Error::SqliteFailure(e, _))
                        if e.code == rusqlite::ErrorCode::ConstraintViolation =>
                    {
                        Ok(false)
                    }
                    Err(e) => Err(e),
                },
            )
            .await
            .unwrap()
    }

    async fn lose_spilled(&self, _: uuid::Uuid, _: &str) -> bool {
        false
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_task_store_damaged_rows() {
    let db = Database::in_memory().unwrap();
    contract::task_damage::run_all(
        Arc::new(SqliteTaskStore::new(db.clone())),
        &SqliteDamage(db),
        9,
    )
    .await;
}

#[tokio::test]
async fn local_queue() {
    let (queue, rx) = LocalQueue::new();
    contract::queue::run_all(&queue, || {
        let rx = rx.clone();
        async move { rx.recv().await }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_account_store() {
    contract::accounts::run_all(Arc::new(SqliteAccountStore::new(
        Database::in_memory().unwrap(),
    )))
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_key_store() {
    contract::keys::run_all(Arc::new(platform::keys::SqliteKeyStore::new(
        Database::in_memory().unwrap(),
    )))
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_usage_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(&dir.path().join("usage.sqlite")).unwrap();
    contract::usage::run_all(Arc::new(platform::usage::SqliteUsageStore::new(db))).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_quota_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(&dir.path().join("quota.sqlite")).unwrap();
    contract::quota::run_all(Arc::new(platform::quota::SqliteQuotaStore::new(db))).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_webhook_store() {
    let db = Database::in_memory().unwrap();
    contract::webhooks::run_all(Arc::new(platform::webhooks::SqliteWebhooks::new(db))).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_failure_log() {
    contract::failures::run_all(Arc::new(platform::accounts::MemoryFailureLog::default())).await;
}

#[tokio::test]
async fn local_dir_blob_store() {
    let dir = tempfile::tempdir().unwrap();
    contract::blobs::run_all(&LocalDir::new(dir.path())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn parquet_scanner_store_on_local_dir() {
    use platform::scanner::ParquetScannerStore;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let blobs = Arc::new(LocalDir::new(dir.path()));
    contract::scanner::run_all(
        &ParquetScannerStore::new(blobs.clone(), Duration::from_secs(3600)),
        &ParquetScannerStore::new(blobs, Duration::ZERO),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn parquet_market_data_on_local_dir() {
    let root = market_dir().to_path_buf();
    let md = Arc::new(ParquetMarketData::new(Arc::new(LocalDir::new(&root))));
    contract::market::run_all(md, |key| {
        let path = root.join(key);
        async move { bytes::Bytes::from(std::fs::read(path).unwrap()) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_metering_of_a_known_mix() {
    use platform::accounts::Authenticator;
    use platform::metering::Metering;
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(&dir.path().join("metered.sqlite")).unwrap();
    let accounts = Arc::new(SqliteAccountStore::new(db.clone()));
    // Jobs run in the suite, not in a pool: the receiver stays unread.
    let (queue, _receiver) = LocalQueue::new();
    let market = market_dir();
    let state = api::AppState {
        tasks: Arc::new(SqliteTaskStore::new(db.clone())),
        queue: Arc::new(queue),
        market: Arc::new(ParquetMarketData::new(Arc::new(LocalDir::new(market)))),
        uploads: platform::uploads::Uploads::new(Arc::new(LocalDir::new(market))),
        scanner: tests::server::scanner_store(market),
        auth: Arc::new(
            Authenticator::embedded(accounts.clone(), std::time::Duration::from_secs(60)).unwrap(),
        ),
        data_legacy_json: false,
        limits: Default::default(),
        metering: Some(Arc::new(Metering::new(
            Arc::new(platform::usage::SqliteUsageStore::new(db.clone())),
            Arc::new(platform::quota::SqliteQuotaStore::new(db)),
            accounts,
        ))),
        webhooks: None,
        compute: Default::default(),
        long_polls: api::state::long_polls(&Default::default()),
        batch_reads: Default::default(),
        test_data: None,
    };
    contract::metering::run_all(state).await;
}
