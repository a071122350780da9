//! Endpoints, alerts and deliveries in the embedded database. A pending
//! delivery's row is its queue entry: the delivery loop claims due rows
//! (pushing their due time out by a lease, so one that was in flight when
//! the process died is tried again after a restart), and nothing scheduled
//! lives only in memory.

use super::{
    Alert, Delivery, DeliveryJob, DeliveryStatus, Endpoint, EndpointChange, EventType, LOG_KEPT,
    Outbox, WebhookStore,
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
        self.claim_due_within(now, limit, lease, Room::unlimited())
            .await
    }

    /// [`SqliteWebhooks::claim_due`] of the deliveries whose account and
    /// endpoint have `room` for another send: an account or endpoint at its
    /// share is passed over, so its due rows wait without holding others'.
    pub async fn claim_due_within(
        &self,
        now: NaiveDateTime,
        limit: usize,
        lease: Duration,
        mut room: Room,
    ) -> PortResult<Vec<Delivery>> {
        let (now, until) = (ms(now), ms(now) + lease.as_millis() as i64);
        let (full_accounts, full_endpoints) = room.full();
        let bodies: Vec<String> = self
            .db
            .run(move |c| {
                let tx = c.transaction()?;
                let rows: Vec<(i64, String)> = {
                    // Rows of full accounts and endpoints are skipped in the
                    // query; of the rest, those a claim would fill are passed
                    // over below (a bounded look past them).
                    let mut stmt = tx.prepare_cached(
                        "SELECT seq, account, endpoint, body FROM webhook_deliveries
                         WHERE status = 'pending' AND due_ms <= ?1
                           AND account NOT IN (SELECT value FROM json_each(?3))
                           AND endpoint NOT IN (SELECT value FROM json_each(?4))
                         ORDER BY due_ms LIMIT ?2",
                    )?;
                    let scan = limit.saturating_mul(4).saturating_add(16) as i64;
                    let found: Vec<(i64, String, String, String)> = stmt
                        .query_map(params![now, scan, full_accounts, full_endpoints], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                        })?
                        .collect::<Result<_, _>>()?;
                    found
                        .into_iter()
                        .filter(|(_, account, endpoint, _)| room.take(account, endpoint))
                        .take(limit)
                        .map(|(seq, _, _, body)| (seq, body))
                        .collect()
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

    async fn update_endpoint(
        &self,
        account: &str,
        id: &str,
        change: EndpointChange,
    ) -> PortResult<Option<Endpoint>> {
        let (account, id) = (account.to_string(), id.to_string());
        // Read and written in one transaction on the one writer.
        self.db
            .run(move |c| {
                let tx = c.transaction()?;
                let body: Option<String> = tx
                    .query_row(
                        "SELECT body FROM webhook_endpoints WHERE account = ?1 AND id = ?2",
                        params![account, id],
                        |r| r.get(0),
                    )
                    .optional()?;
                let Some(body) = body else {
                    return Ok(None);
                };
                let mut e: Endpoint = serde_json::from_str(&body).map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(
                        0,
                        rusqlite::types::Type::Text,
                        e.into(),
                    )
                })?;
                change(&mut e);
                let body = serde_json::to_string(&e)
                    .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
                tx.execute(
                    "UPDATE webhook_endpoints SET body = ?3 WHERE account = ?1 AND id = ?2",
                    params![account, id, body],
                )?;
                tx.commit()?;
                Ok(Some(e))
            })
            .await
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
/// Sends in flight per account and per endpoint, and how many of each a
/// claim may add up to: what keeps one tenant's stalled receivers from
/// taking every send slot.
#[derive(Debug, Clone, Default)]
pub struct Room {
    pub per_account: usize,
    pub per_endpoint: usize,
    pub accounts: std::collections::HashMap<String, usize>,
    pub endpoints: std::collections::HashMap<String, usize>,
}

impl Room {
    /// No share at all (a single sender, tests).
    pub fn unlimited() -> Room {
        Room {
            per_account: usize::MAX,
            per_endpoint: usize::MAX,
            ..Room::default()
        }
    }

    /// Counts one more send for `account` and `endpoint` if both have room.
    pub fn take(&mut self, account: &str, endpoint: &str) -> bool {
        let a = self.accounts.get(account).copied().unwrap_or(0);
        let e = self.endpoints.get(endpoint).copied().unwrap_or(0);
        if a >= self.per_account || e >= self.per_endpoint {
            return false;
        }
        *self.accounts.entry(account.to_string()).or_default() += 1;
        *self.endpoints.entry(endpoint.to_string()).or_default() += 1;
        true
    }

    /// Gives back what [`Room::take`] counted.
    pub fn give_back(&mut self, account: &str, endpoint: &str) {
        for (map, key) in [
            (&mut self.accounts, account),
            (&mut self.endpoints, endpoint),
        ] {
            if let Some(n) = map.get_mut(key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    map.remove(key);
                }
            }
        }
    }

    /// The accounts and endpoints at their share, as JSON arrays for the query.
    fn full(&self) -> (String, String) {
        let at = |map: &std::collections::HashMap<String, usize>, cap: usize| {
            let keys: Vec<&String> = map
                .iter()
                .filter(|(_, n)| **n >= cap)
                .map(|(k, _)| k)
                .collect();
            serde_json::to_string(&keys).unwrap_or_else(|_| "[]".into())
        };
        (
            at(&self.accounts, self.per_account),
            at(&self.endpoints, self.per_endpoint),
        )
    }
}
