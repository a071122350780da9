//! Turning an event into deliveries: one durable record per endpoint that
//! wants it, then its first attempt scheduled. Telling the same event twice
//! (a job redelivered after its outcome was stored, a scan run again) adds
//! nothing: the event's id is derived from its subject.

use super::{
    Delivery, DeliveryJob, DeliveryStatus, Endpoint, EventType, Outbox, WebhookStore, event_id,
};
use crate::PortResult;
use crate::tasks::now;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The ports an event is recorded and scheduled through.
#[derive(Clone)]
pub struct Events {
    pub store: Arc<dyn WebhookStore>,
    pub outbox: Arc<dyn Outbox>,
}

impl Events {
    /// Whether any of `account`'s endpoints wants `event`: an event costly
    /// to describe (a batch's best row, read from all its chunks) is not
    /// described for nobody.
    pub async fn wanted(&self, account: &str, event: EventType) -> PortResult<bool> {
        Ok(self
            .store
            .endpoints(account)
            .await?
            .iter()
            .any(|e| e.wants(event)))
    }

    /// Tells `account`'s endpoints (every account's, for `None`) that want
    /// `event` about `subject`; the deliveries created.
    pub async fn emit(
        &self,
        account: Option<&str>,
        event: EventType,
        subject: &str,
        data: Value,
    ) -> PortResult<usize> {
        let endpoints: Vec<Endpoint> = match account {
            Some(a) => self.store.endpoints(a).await?,
            None => self.store.subscribed(event).await?,
        };
        let at = now();
        let id = event_id(event, subject);
        let payload = json!({
            "type": event.as_str(),
            "timestamp": at.and_utc().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            "data": data,
        })
        .to_string();
        let mut made = 0;
        for e in endpoints.iter().filter(|e| e.wants(event)) {
            let d = Delivery {
                id: id.clone(),
                endpoint: e.id.clone(),
                account: e.account.clone(),
                event,
                payload: payload.clone(),
                created_at: at,
                status: DeliveryStatus::Pending,
                attempts: Vec::new(),
                tries: 0,
                next_attempt: Some(at),
                ticket: 1,
                failures: 0,
            };
            let fresh = self.store.add_delivery(&d).await?;
            // An earlier telling that stopped before scheduling (a crash
            // between the two writes) is scheduled now.
            let unsent = !fresh
                && self
                    .store
                    .delivery(&e.account, &e.id, &id)
                    .await?
                    .is_some_and(|old| old.status == DeliveryStatus::Pending && old.tries == 0);
            if fresh || unsent {
                self.outbox
                    .schedule(DeliveryJob::of(&d), Duration::ZERO)
                    .await?;
            }
            made += usize::from(fresh);
        }
        Ok(made)
    }

    /// Sends a delivery again from the start of the schedule, with its
    /// `webhook-id` and body unchanged. None when there is no such delivery.
    pub async fn redeliver(
        &self,
        account: &str,
        endpoint: &str,
        id: &str,
    ) -> PortResult<Option<Delivery>> {
        let Some(mut d) = self.store.delivery(account, endpoint, id).await? else {
            return Ok(None);
        };
        d.status = DeliveryStatus::Pending;
        d.failures = 0;
        d.ticket += 1;
        d.next_attempt = Some(now());
        // Scheduled before it is written: a crash between the two leaves a
        // queued attempt that finds the older ticket and is dropped, never
        // a pending delivery with nothing queued.
        self.outbox
            .schedule(DeliveryJob::of(&d), Duration::ZERO)
            .await?;
        self.store.put_delivery(&d).await?;
        Ok(Some(d))
    }
}
