//! Limit counters and slot holds in the embedded database. Each call is one
//! immediate transaction, so processes sharing the file share the limits.

use super::{Hold, PlanLimits, QuotaStore, Reservation};
use crate::sqlite::Database;
use crate::{PortError, PortResult};
use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

pub struct SqliteQuotaStore {
    db: Database,
}

impl SqliteQuotaStore {
    pub fn new(db: Database) -> Self {
        SqliteQuotaStore { db }
    }
}

/// A counter's value, if it exists.
fn counter(c: &rusqlite::Connection, key: &str) -> rusqlite::Result<Option<i64>> {
    c.prepare_cached("SELECT n FROM quota_counters WHERE key = ?1")?
        .query_row(params![key], |r| r.get(0))
        .optional()
}

fn now_s() -> i64 {
    chrono::Utc::now().timestamp()
}

#[async_trait]
impl QuotaStore for SqliteQuotaStore {
    async fn take(&self, key: &str, n: u32, limit: u64, expires_s: i64) -> Result<u32, PortError> {
        let key = key.to_string();
        self.db
            .run(move |c| {
                let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                // Forget counters of windows gone by, a few at a time.
                tx.prepare_cached(
                    "DELETE FROM quota_counters WHERE key IN
                     (SELECT key FROM quota_counters WHERE expires_s < ?1 LIMIT 16)",
                )?
                .execute(params![now_s()])?;
                let used = counter(&tx, &key)?.unwrap_or(0);
                let room = (limit as i64 - used).max(0);
                let granted = room.min(i64::from(n));
                if granted > 0 {
                    tx.prepare_cached(
                        "INSERT INTO quota_counters (key, n, expires_s) VALUES (?1, ?2, ?3)
                         ON CONFLICT (key) DO UPDATE SET n = n + excluded.n",
                    )?
                    .execute(params![key, granted, expires_s])?;
                }
                tx.commit()?;
                Ok(granted as u32)
            })
            .await
    }

    async fn hold(&self, key: &str, limit: u32, hold: Hold<'_>) -> PortResult<bool> {
        let (holder, now_ms, until_ms) = (hold.holder, hold.now_ms, hold.until_ms);
        let (key, holder) = (key.to_string(), holder.to_string());
        self.db
            .run(move |c| {
                let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                tx.prepare_cached("DELETE FROM quota_holds WHERE key = ?1 AND until_ms <= ?2")?.execute(params![key, now_ms],)?;
                let mine = tx.prepare_cached("UPDATE quota_holds SET until_ms = ?3 WHERE key = ?1 AND holder = ?2")?.execute(params![key, holder, until_ms],)? > 0;
                let held = mine || {
                    let others: i64 = tx.prepare_cached("SELECT COUNT(*) FROM quota_holds WHERE key = ?1")?.query_row(params![key],
                        |r| r.get(0),)?;
                    others < i64::from(limit)
                        && tx.prepare_cached("INSERT INTO quota_holds (key, holder, until_ms) VALUES (?1, ?2, ?3)")?.execute(params![key, holder, until_ms],)? > 0
                };
                tx.commit()?;
                Ok(held)
            })
            .await
    }

    async fn release(&self, key: &str, holder: &str) -> Result<(), PortError> {
        let (key, holder) = (key.to_string(), holder.to_string());
        self.db
            .run(move |c| {
                c.prepare_cached("DELETE FROM quota_holds WHERE key = ?1 AND holder = ?2")?
                    .execute(params![key, holder])
                    .map(|_| ())
            })
            .await
    }

    async fn reserve(&self, key: &str, r: Reservation) -> PortResult<bool> {
        let (n, limit, start, expires_s) = (r.n, r.limit, r.start, r.expires_s);
        let key = key.to_string();
        let (n, limit, start) = (n as i64, limit as i64, start as i64);
        self.db
            .run(move |c| {
                let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let used = counter(&tx, &key)?.unwrap_or(start);
                let added = used < limit;
                if added {
                    tx.prepare_cached("INSERT INTO quota_counters (key, n, expires_s) VALUES (?1, ?2, ?3)
                         ON CONFLICT (key) DO UPDATE SET n = excluded.n, expires_s = excluded.expires_s")?.execute(params![key, used + n, expires_s],)?;
                }
                tx.commit()?;
                Ok(added)
            })
            .await
    }

    async fn adjust(&self, key: &str, delta: i64, expires_s: i64) -> Result<(), PortError> {
        let key = key.to_string();
        self.db
            .run(move |c| {
                c.prepare_cached("INSERT INTO quota_counters (key, n, expires_s) VALUES (?1, ?2, ?3)
                     ON CONFLICT (key) DO UPDATE SET n = n + excluded.n, expires_s = excluded.expires_s")?.execute(params![key, delta, expires_s],)
                .map(|_| ())
            })
            .await
    }

    async fn count(&self, key: &str) -> Result<Option<i64>, PortError> {
        let key = key.to_string();
        self.db.run(move |c| counter(c, &key)).await
    }

    async fn plan_limits(&self, plan: &str) -> Result<Option<PlanLimits>, PortError> {
        let plan = plan.to_string();
        let text: Option<String> = self
            .db
            .run(move |c| {
                c.prepare_cached("SELECT limits FROM plan_limits WHERE code = ?1")?
                    .query_row(params![plan], |r| r.get(0))
                    .optional()
            })
            .await?;
        text.map(|t| serde_json::from_str(&t).map_err(PortError::internal))
            .transpose()
    }

    async fn set_plan_limits(&self, plan: &str, limits: PlanLimits) -> Result<(), PortError> {
        let (plan, text) = (
            plan.to_string(),
            serde_json::to_string(&limits).map_err(PortError::internal)?,
        );
        self.db
            .run(move |c| {
                c.prepare_cached(
                    "INSERT INTO plan_limits (code, limits) VALUES (?1, ?2)
                     ON CONFLICT (code) DO UPDATE SET limits = excluded.limits",
                )?
                .execute(params![plan, text])
                .map(|_| ())
            })
            .await
    }
}
