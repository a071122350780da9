//! Endpoints, alerts and deliveries in the embedded database. A pending
//! delivery's row is its queue entry: the delivery loop claims due rows
//! (pushing their due time out by a lease, so one that was in flight when
//! the process died is tried again after a restart), and nothing scheduled
//! lives only in memory.

use super::{
    Alert, Delivery, DeliveryJob, DeliveryStatus, Endpoint, EventType, LOG_KEPT, Outbox,
    WebhookStore,
};
use crate::sqlite::Database;
use crate::{PortError, PortResult};
use async_trait::async_trait;
use chrono::NaiveDateTime;
use rusqlite::{OptionalExtension, params};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Clone)]
pub struct SqliteWebhooks {
    db: Database,
    /// Wakes the delivery loop when something is scheduled or finished.
    wake: Arc<Notify>,
}

fn ms(t: NaiveDateTime) -> i64 {
    t.and_utc().timestamp_millis()
}

fn to_json<T: serde::Serialize>(v: &T) -> PortResult<String> {
    serde_json::to_string(v).map_err(|e| PortError::fault("webhook record", e))
}

fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> PortResult<T> {
    serde_json::from_str(s).map_err(|e| PortError::fault("webhook record", e))
}

impl SqliteWebhooks {
    pub fn new(db: Database) -> Self {
        SqliteWebhooks {
            db,
            wake: Arc::new(Notify::new()),
        }
    }

    /// Pending deliveries due by `now`, at most `limit`, each claimed for
    /// `lease` (not handed out again within it).
    pub async fn claim_due(
        &self,
        now: NaiveDateTime,
        limit: usize,
        lease: Duration,
    ) -> PortResult<Vec<Delivery>> {
        let (now, until) = (ms(now), ms(now) + lease.as_millis() as i64);
        let bodies: Vec<String> = self
            .db
            .run(move |c| {
                let tx = c.transaction()?;
                let rows: Vec<(i64, String)> = {
                    let mut stmt = tx.prepare_cached(
                        "SELECT seq, body FROM webhook_deliveries
                         WHERE status = 'pending' AND due_ms <= ?1 ORDER BY due_ms LIMIT ?2",
                    )?;
                    stmt.query_map(params![now, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect::<Result<_, _>>()?
                };
                {
                    let mut stmt = tx.prepare_cached(
                        "UPDATE webhook_deliveries SET due_ms = ?1 WHERE seq = ?2",
                    )?;
                    for (seq, _) in &rows {
                        stmt.execute(params![until, seq])?;
                    }
                }
                tx.commit()?;
                Ok(rows.into_iter().map(|(_, b)| b).collect())
            })
            .await?;
        bodies.iter().map(|b| from_json(b)).collect()
    }

    /// When the next pending delivery is due, if any is.
    pub async fn next_due(&self) -> PortResult<Option<NaiveDateTime>> {
        let due: Option<i64> = self
            .db
            .read(|c| {
                c.prepare_cached(
                    "SELECT MIN(due_ms) FROM webhook_deliveries WHERE status = 'pending'",
                )?
                .query_row([], |r| r.get(0))
            })
            .await?;
        Ok(due
            .and_then(chrono::DateTime::from_timestamp_millis)
            .map(|t| t.naive_utc()))
    }

    /// Pending deliveries claimed by a process that is gone are due at once
    /// (a single-process deployment calls this at start).
    pub async fn release_claims(&self, now: NaiveDateTime) -> PortResult<usize> {
        let now = ms(now);
        self.db
            .run(move |c| {
                // A claimed row's due time is its claim's end; its record
                // keeps the time it was really due.
                let rows: Vec<(i64, String)> = c
                    .prepare_cached(
                        "SELECT seq, body FROM webhook_deliveries WHERE status = 'pending' AND due_ms > ?1",
                    )?
                    .query_map(params![now], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<_, _>>()?;
                let mut n = 0;
                for (seq, body) in rows {
                    let due = serde_json::from_str::<Delivery>(&body)
                        .ok()
                        .and_then(|d| d.next_attempt)
                        .map(ms);
                    if let Some(due) = due {
                        n += c.execute(
                            "UPDATE webhook_deliveries SET due_ms = ?1 WHERE seq = ?2",
                            params![due, seq],
                        )?;
                    }
                }
                Ok(n)
            })
            .await
    }

    /// The handle that wakes the delivery loop.
    pub fn wake(&self) -> Arc<Notify> {
        self.wake.clone()
    }
}

/// The outbox of the embedded deployment: the delivery rows are the queue,
/// so scheduling only wakes the loop.
#[async_trait]
impl Outbox for SqliteWebhooks {
    async fn schedule(&self, _job: DeliveryJob, _delay: Duration) -> PortResult<()> {
        self.wake.notify_one();
        Ok(())
    }
}

#[async_trait]
impl WebhookStore for SqliteWebhooks {
    async fn put_endpoint(&self, endpoint: &Endpoint) -> PortResult<()> {
        let (account, id, body) = (
            endpoint.account.clone(),
            endpoint.id.clone(),
            to_json(endpoint)?,
        );
        self.db
            .run(move |c| {
                c.prepare_cached(
                    "INSERT INTO webhook_endpoints (account, id, body) VALUES (?1, ?2, ?3)
                     ON CONFLICT (account, id) DO UPDATE SET body = excluded.body",
                )?
                .execute(params![account, id, body])
                .map(|_| ())
            })
            .await
    }

    async fn endpoints(&self, account: &str) -> PortResult<Vec<Endpoint>> {
        let account = account.to_string();
        let bodies: Vec<String> = self
            .db
            .read(move |c| {
                c.prepare_cached("SELECT body FROM webhook_endpoints WHERE account = ?1")?
                    .query_map(params![account], |r| r.get(0))?
                    .collect()
            })
            .await?;
        let mut all: Vec<Endpoint> = bodies
            .iter()
            .map(|b| from_json(b))
            .collect::<PortResult<_>>()?;
        all.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(all)
    }

    async fn subscribed(&self, event: EventType) -> PortResult<Vec<Endpoint>> {
        let bodies: Vec<String> = self
            .db
            .read(|c| {
                c.prepare_cached("SELECT body FROM webhook_endpoints")?
                    .query_map([], |r| r.get(0))?
                    .collect()
            })
            .await?;
        let all: Vec<Endpoint> = bodies
            .iter()
            .map(|b| from_json(b))
            .collect::<PortResult<_>>()?;
        Ok(all.into_iter().filter(|e| e.wants(event)).collect())
    }

    async fn delete_endpoint(&self, account: &str, id: &str) -> PortResult<bool> {
        let (account, id) = (account.to_string(), id.to_string());
        self.db
            .run(move |c| {
                let tx = c.transaction()?;
                let n = tx.execute(
                    "DELETE FROM webhook_endpoints WHERE account = ?1 AND id = ?2",
                    params![account, id],
                )?;
                tx.execute(
                    "DELETE FROM webhook_deliveries WHERE account = ?1 AND endpoint = ?2",
                    params![account, id],
                )?;
                tx.commit()?;
                Ok(n > 0)
            })
            .await
    }

    async fn add_delivery(&self, d: &Delivery) -> PortResult<bool> {
        let body = to_json(d)?;
        let (account, endpoint, id) = (d.account.clone(), d.endpoint.clone(), d.id.clone());
        let (status, due) = (d.status.as_str(), d.next_attempt.map(ms));
        let added = self
            .db
            .run(move |c| {
                let tx = c.transaction()?;
                let n = tx
                    .prepare_cached(
                        "INSERT INTO webhook_deliveries (account, endpoint, id, status, due_ms, body)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (endpoint, id) DO NOTHING",
                    )?
                    .execute(params![account, endpoint, id, status, due, body])?;
                // The log keeps an endpoint's newest deliveries; pending
                // ones are never dropped.
                tx.prepare_cached(
                    "DELETE FROM webhook_deliveries WHERE endpoint = ?1 AND status <> 'pending'
                     AND seq <= (SELECT seq FROM webhook_deliveries WHERE endpoint = ?1
                                 ORDER BY seq DESC LIMIT 1 OFFSET ?2)",
                )?
                .execute(params![endpoint, LOG_KEPT as i64])?;
                tx.commit()?;
                Ok(n > 0)
            })
            .await?;
        if added {
            self.wake.notify_one();
        }
        Ok(added)
    }

    async fn put_delivery(&self, d: &Delivery) -> PortResult<()> {
        let body = to_json(d)?;
        let (account, endpoint, id) = (d.account.clone(), d.endpoint.clone(), d.id.clone());
        let status = d.status.as_str();
        let due = match d.status {
            DeliveryStatus::Pending => d.next_attempt.map(ms),
            _ => None,
        };
        self.db
            .run(move |c| {
                c.prepare_cached(
                    "UPDATE webhook_deliveries SET status = ?4, due_ms = ?5, body = ?6
                     WHERE account = ?1 AND endpoint = ?2 AND id = ?3",
                )?
                .execute(params![account, endpoint, id, status, due, body])
                .map(|_| ())
            })
            .await?;
        self.wake.notify_one();
        Ok(())
    }

    async fn delivery(
        &self,
        account: &str,
        endpoint: &str,
        id: &str,
    ) -> PortResult<Option<Delivery>> {
        let (account, endpoint, id) = (account.to_string(), endpoint.to_string(), id.to_string());
        let body: Option<String> = self
            .db
            .read(move |c| {
                c.prepare_cached(
                    "SELECT body FROM webhook_deliveries WHERE account = ?1 AND endpoint = ?2 AND id = ?3",
                )?
                .query_row(params![account, endpoint, id], |r| r.get(0))
                .optional()
            })
            .await?;
        body.map(|b| from_json(&b)).transpose()
    }

    async fn deliveries(
        &self,
        account: &str,
        endpoint: &str,
        limit: usize,
    ) -> PortResult<Vec<Delivery>> {
        let (account, endpoint) = (account.to_string(), endpoint.to_string());
        let bodies: Vec<String> = self
            .db
            .read(move |c| {
                c.prepare_cached(
                    "SELECT body FROM webhook_deliveries WHERE account = ?1 AND endpoint = ?2
                     ORDER BY seq DESC LIMIT ?3",
                )?
                .query_map(params![account, endpoint, limit as i64], |r| r.get(0))?
                .collect()
            })
            .await?;
        bodies.iter().map(|b| from_json(b)).collect()
    }

    async fn put_alert(&self, alert: &Alert) -> PortResult<()> {
        let (account, id, body) = (alert.account.clone(), alert.id.clone(), to_json(alert)?);
        self.db
            .run(move |c| {
                c.prepare_cached(
                    "INSERT INTO scanner_alerts (account, id, body) VALUES (?1, ?2, ?3)
                     ON CONFLICT (account, id) DO UPDATE SET body = excluded.body",
                )?
                .execute(params![account, id, body])
                .map(|_| ())
            })
            .await
    }

    async fn alerts(&self, account: &str) -> PortResult<Vec<Alert>> {
        let account = account.to_string();
        let bodies: Vec<String> = self
            .db
            .read(move |c| {
                c.prepare_cached("SELECT body FROM scanner_alerts WHERE account = ?1")?
                    .query_map(params![account], |r| r.get(0))?
                    .collect()
            })
            .await?;
        let mut all: Vec<Alert> = bodies
            .iter()
            .map(|b| from_json(b))
            .collect::<PortResult<_>>()?;
        all.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(all)
    }

    async fn delete_alert(&self, account: &str, id: &str) -> PortResult<bool> {
        let (account, id) = (account.to_string(), id.to_string());
        self.db
            .run(move |c| {
                c.execute(
                    "DELETE FROM scanner_alerts WHERE account = ?1 AND id = ?2",
                    params![account, id],
                )
                .map(|n| n > 0)
            })
            .await
    }

    async fn all_alerts(&self) -> PortResult<Vec<Alert>> {
        let bodies: Vec<String> = self
            .db
            .read(|c| {
                c.prepare_cached("SELECT body FROM scanner_alerts")?
                    .query_map([], |r| r.get(0))?
                    .collect()
            })
            .await?;
        bodies.iter().map(|b| from_json(b)).collect()
    }
}
