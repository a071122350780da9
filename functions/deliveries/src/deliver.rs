//! One delivery attempt, the same on every runtime: sign, send to the
//! checked address, record what happened, schedule the next attempt or
//! give up (and disable an endpoint that has failed for the whole schedule).

use crate::send::{Timeouts, post};
use chrono::TimeDelta;
use platform::PortResult;
use platform::tasks::now;
use platform::webhooks::address::Policy;
use platform::webhooks::signing::{Keyring, signature_header};
use platform::webhooks::{
    ATTEMPTS_KEPT, Attempt, Delivery, DeliveryJob, DeliveryStatus, Outbox, RetrySchedule,
    WebhookStore,
};
use std::sync::Arc;

/// What an attempt needs.
#[derive(Clone)]
pub struct Deliverer {
    pub store: Arc<dyn WebhookStore>,
    pub outbox: Arc<dyn Outbox>,
    pub keys: Keyring,
    pub policy: Policy,
    pub schedule: RetrySchedule,
    pub timeouts: Timeouts,
}

impl Deliverer {
    /// Runs a queued attempt, unless a later one superseded it or the
    /// delivery has ended.
    pub async fn run(&self, job: &DeliveryJob) -> PortResult<()> {
        let Some(d) = self
            .store
            .delivery(&job.account, &job.endpoint, &job.delivery)
            .await?
        else {
            return Ok(());
        };
        if d.ticket != job.ticket || d.status != DeliveryStatus::Pending {
            return Ok(());
        }
        self.attempt(d).await.map(|_| ())
    }

    /// Sends `d` once and records the attempt; the delivery as stored after.
    pub async fn attempt(&self, mut d: Delivery) -> PortResult<Delivery> {
        let endpoint = self.store.endpoint(&d.account, &d.endpoint).await?;
        let at = now();
        let started = std::time::Instant::now();
        let result = match &endpoint {
            None => Err("the endpoint was deleted".to_string()),
            Some(e) if e.disabled.is_some() => Err(format!(
                "the endpoint is disabled: {}",
                e.disabled.as_deref().unwrap_or_default()
            )),
            Some(e) => match self.policy.target(&e.url).await {
                Err(why) => Err(format!("refused: {} {why}", e.url)),
                Ok(target) => {
                    let secrets: Vec<Vec<u8>> = e
                        .signing_versions(at)
                        .into_iter()
                        .map(|v| self.keys.secret(&e.id, v))
                        .collect();
                    let timestamp = at.and_utc().timestamp();
                    let body = bytes::Bytes::from(d.payload.clone());
                    let headers = [
                        ("webhook-id", d.id.clone()),
                        ("webhook-timestamp", timestamp.to_string()),
                        (
                            "webhook-signature",
                            signature_header(&secrets, &d.id, timestamp, &body),
                        ),
                    ];
                    post(&target, &headers, body, self.timeouts).await
                }
            },
        };
        let attempt = Attempt {
            at,
            status: result.as_ref().ok().copied(),
            error: result.as_ref().err().cloned(),
            millis: started.elapsed().as_millis() as u64,
        };
        let ok = attempt.succeeded();
        let gone = endpoint.as_ref().is_none_or(|e| e.disabled.is_some());
        d.tries += 1;
        d.attempts.push(attempt);
        if d.attempts.len() > ATTEMPTS_KEPT {
            d.attempts.remove(0);
        }
        tracing::info!(delivery = %d.id, endpoint = %d.endpoint, try_ = d.tries, ok, status = ?result, "webhook attempt");
        if ok {
            platform::telemetry::webhook_attempt("delivered");
            d.status = DeliveryStatus::Delivered;
            d.next_attempt = None;
            self.store.put_delivery(&d).await?;
            if endpoint.is_some() {
                // The record as stored now: a rotation or deletion during
                // the attempt stands.
                self.store
                    .update_endpoint(
                        &d.account,
                        &d.endpoint,
                        Box::new(move |e| e.last_success = Some(at)),
                    )
                    .await?;
            }
            return Ok(d);
        }
        d.failures += 1;
        let next = (!gone)
            .then(|| self.schedule.0.get(d.failures as usize - 1).copied())
            .flatten();
        platform::telemetry::webhook_attempt(if next.is_some() { "retry" } else { "failed" });
        match next {
            Some(delay) => {
                d.ticket += 1;
                d.next_attempt = Some(at + TimeDelta::from_std(delay).unwrap_or_default());
                // Queued before written: see `Events::redeliver`.
                self.outbox.schedule(DeliveryJob::of(&d), delay).await?;
                self.store.put_delivery(&d).await?;
            }
            None => {
                d.status = DeliveryStatus::Failed;
                d.next_attempt = None;
                self.store.put_delivery(&d).await?;
                if endpoint.is_some_and(|e| e.disabled.is_none()) {
                    // Nothing got through since this delivery began: the
                    // endpoint has failed for the whole schedule. Judged on
                    // the record as stored now (another delivery may have
                    // got through meanwhile).
                    let last = d.attempts.last().map(describe).unwrap_or_default();
                    let why = format!(
                        "disabled {}: delivery {} failed all {} attempts since {} (last: {last}); fix the receiver, then enable the endpoint",
                        at.format("%Y-%m-%dT%H:%M:%SZ"),
                        d.id,
                        d.tries,
                        d.created_at.format("%Y-%m-%dT%H:%M:%SZ"),
                    );
                    let since = d.created_at;
                    let changed = self
                        .store
                        .update_endpoint(
                            &d.account,
                            &d.endpoint,
                            Box::new(move |e| {
                                if e.disabled.is_none() && e.last_success.is_none_or(|s| s < since)
                                {
                                    e.disabled = Some(why.clone());
                                }
                            }),
                        )
                        .await?;
                    if let Some(e) =
                        changed.filter(|e| e.disabled.as_deref().is_some_and(|w| w.contains(&d.id)))
                    {
                        tracing::warn!(endpoint = %e.id, "webhook endpoint disabled");
                    }
                }
            }
        }
        Ok(d)
    }
}

/// An attempt in a few words: its status or its error.
pub fn describe(a: &Attempt) -> String {
    match (a.status, &a.error) {
        (Some(s), _) => format!("HTTP {s}"),
        (None, Some(e)) => e.clone(),
        (None, None) => "no answer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use platform::webhooks::address::Resolve;
    use platform::webhooks::emit::Events;
    use platform::webhooks::{Endpoint, EventType, SqliteWebhooks};
    use std::net::SocketAddr;
    use std::sync::Mutex;

    /// A name whose address changes between lookups (DNS rebinding).
    struct Rebinding(Mutex<Vec<&'static str>>);

    #[async_trait]
    impl Resolve for Rebinding {
        async fn resolve(&self, _host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
            let mut answers = self.0.lock().unwrap();
            let ip = if answers.len() > 1 {
                answers.remove(0)
            } else {
                answers[0]
            };
            Ok(vec![SocketAddr::new(ip.parse().unwrap(), port)])
        }
    }

    #[tokio::test]
    async fn a_name_rebound_to_a_private_address_is_refused_at_send_time() {
        let rows = Arc::new(SqliteWebhooks::new(
            platform::sqlite::Database::in_memory().unwrap(),
        ));
        let policy = Policy {
            allow_loopback: false,
            resolver: Arc::new(Rebinding(Mutex::new(vec!["93.184.216.34", "10.0.0.7"]))),
            confine: None,
        };
        let url = "https://hooks.example.test/in";
        // Registration resolves the public address.
        assert!(policy.target(url).await.is_ok());
        let e = Endpoint {
            id: "ep_1".into(),
            account: "a@x".into(),
            url: url.into(),
            events: vec![],
            description: String::new(),
            created_at: now(),
            secret_version: 1,
            previous_until: None,
            disabled: None,
            last_success: None,
        };
        rows.put_endpoint(&e).await.unwrap();
        let events = Events {
            store: rows.clone(),
            outbox: rows.clone(),
        };
        events
            .emit(
                Some("a@x"),
                EventType::TaskFinished,
                "t1",
                serde_json::json!({}),
            )
            .await
            .unwrap();
        let d = rows
            .claim_due(now(), 10, std::time::Duration::from_secs(60))
            .await
            .unwrap()
            .remove(0);
        let deliverer = Deliverer {
            store: rows.clone(),
            outbox: rows.clone(),
            keys: Keyring::new([3; 32]),
            policy,
            schedule: "1".parse().unwrap(),
            timeouts: Timeouts::default(),
        };
        let after = deliverer.attempt(d).await.unwrap();
        let error = after.attempts[0].error.clone().unwrap();
        assert!(
            error.contains("refused") && error.contains("10.0.0.7"),
            "{error}"
        );
        assert_eq!(after.attempts[0].status, None, "nothing was sent");
        assert_eq!(after.status, DeliveryStatus::Pending, "retried on schedule");
        // Emitting the same event again adds nothing.
        let again = events
            .emit(
                Some("a@x"),
                EventType::TaskFinished,
                "t1",
                serde_json::json!({}),
            )
            .await
            .unwrap();
        assert_eq!(again, 0);
    }
}
