//! Webhooks after the Standard Webhooks specification: an account's
//! endpoints, the deliveries of events to them, and the ports that keep
//! both (`WebhookStore`) and schedule attempts (`Outbox`).
//!
//! A delivery is a durable record before anything is sent: the embedded
//! deployment's loop reads due records from SQLite, the AWS one has one
//! queue message per scheduled attempt. Either way an attempt is sent at
//! least once, with the same `webhook-id` every time.

pub mod address;
pub mod emit;
pub mod signing;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "sqlite")]
pub use sqlite::{Room, SqliteWebhooks};

use crate::PortResult;
use async_trait::async_trait;
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// What an endpoint can be told of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventType {
    /// A backtest, CPM scan or backtest, or scanner backtest ended.
    #[serde(rename = "task.finished")]
    TaskFinished,
    /// Every strategy of a batch has its row.
    #[serde(rename = "batch.finished")]
    BatchFinished,
    /// The nightly scan stored a day.
    #[serde(rename = "scan.completed")]
    ScanCompleted,
    /// The nightly scan found items matching one of the account's alerts.
    #[serde(rename = "scanner.alert")]
    ScannerAlert,
}

impl EventType {
    pub const ALL: [EventType; 4] = [
        EventType::TaskFinished,
        EventType::BatchFinished,
        EventType::ScanCompleted,
        EventType::ScannerAlert,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::TaskFinished => "task.finished",
            EventType::BatchFinished => "batch.finished",
            EventType::ScanCompleted => "scan.completed",
            EventType::ScannerAlert => "scanner.alert",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EventType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        EventType::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = EventType::ALL.iter().map(|e| e.as_str()).collect();
                format!("unknown event type '{s}' (known: {})", known.join(", "))
            })
    }
}

/// Endpoints one account may register.
pub const MAX_ENDPOINTS: usize = 10;
/// Deliveries kept per endpoint in its log; older ones are dropped.
pub const LOG_KEPT: usize = 200;
/// Attempts kept per delivery.
pub const ATTEMPTS_KEPT: usize = 20;

/// One account's receiver of events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    /// `ep_` and 32 hex digits.
    pub id: String,
    pub account: String,
    pub url: String,
    /// The events it is told of; empty means every event.
    pub events: Vec<EventType>,
    #[serde(default)]
    pub description: String,
    pub created_at: NaiveDateTime,
    /// Which of the endpoint's derived secrets signs now (starts at 1, one
    /// more per rotation); the secret itself is never stored.
    pub secret_version: u32,
    /// Until then the secret before the last rotation signs too.
    #[serde(default)]
    pub previous_until: Option<NaiveDateTime>,
    /// Why deliveries stopped, when the endpoint kept failing.
    #[serde(default)]
    pub disabled: Option<String>,
    /// The last attempt it answered with a 2xx.
    #[serde(default)]
    pub last_success: Option<NaiveDateTime>,
}

impl Endpoint {
    pub fn wants(&self, event: EventType) -> bool {
        self.disabled.is_none() && (self.events.is_empty() || self.events.contains(&event))
    }

    /// The secret versions that sign a message sent at `now`.
    pub fn signing_versions(&self, now: NaiveDateTime) -> Vec<u32> {
        let mut v = vec![self.secret_version];
        if self.secret_version > 1 && self.previous_until.is_some_and(|until| now < until) {
            v.push(self.secret_version - 1);
        }
        v
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Waiting for its next attempt.
    Pending,
    /// An attempt was answered with a 2xx.
    Delivered,
    /// Every attempt failed, or the endpoint went away.
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }
}

/// One try at sending a delivery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub at: NaiveDateTime,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// Why it failed without an answer (refused address, timeout, ...).
    pub error: Option<String>,
    pub millis: u64,
}

impl Attempt {
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// An event on its way to one endpoint, with its attempts so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// The `webhook-id`: the event's id, the same on every attempt.
    pub id: String,
    pub endpoint: String,
    pub account: String,
    pub event: EventType,
    /// The body as sent, byte for byte on every attempt.
    pub payload: String,
    pub created_at: NaiveDateTime,
    pub status: DeliveryStatus,
    pub attempts: Vec<Attempt>,
    /// Attempts made, over all time (the log keeps the last [`ATTEMPTS_KEPT`]).
    #[serde(default)]
    pub tries: u32,
    /// When the next attempt is due, while pending.
    pub next_attempt: Option<NaiveDateTime>,
    /// Bumped each time an attempt is scheduled: a queued attempt carrying
    /// an older ticket was superseded and is dropped.
    #[serde(default)]
    pub ticket: u32,
    /// Failed attempts since the schedule last started (a redeliver starts it again).
    #[serde(default)]
    pub failures: u32,
}

/// Alerts one account may keep.
pub const MAX_ALERTS: usize = 50;

/// A scanner alert: the nightly scan's items an account wants to hear of.
/// An item matches when its signal is one of `signals` (or any, when
/// empty), its ticker one of `tickers` (or any) and its statistics reach
/// the minimums.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    /// `alert_` and 32 hex digits.
    pub id: String,
    pub account: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub signals: Vec<String>,
    #[serde(default)]
    pub tickers: Vec<String>,
    /// Percent of the signal's earlier trades that won.
    #[serde(default)]
    pub min_win_rate: Option<f64>,
    /// Earlier trades the statistics stand on.
    #[serde(default)]
    pub min_trades: Option<u32>,
    pub created_at: NaiveDateTime,
}

/// A scheduled attempt, as a queue carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliveryJob {
    pub account: String,
    pub endpoint: String,
    pub delivery: String,
    pub ticket: u32,
    /// Not to be sent before then (a queue's delay is capped at 15 minutes;
    /// a longer wait is taken in several hops).
    pub not_before: NaiveDateTime,
}

impl DeliveryJob {
    pub fn of(d: &Delivery) -> Self {
        DeliveryJob {
            account: d.account.clone(),
            endpoint: d.endpoint.clone(),
            delivery: d.id.clone(),
            ticket: d.ticket,
            not_before: d.next_attempt.unwrap_or(d.created_at),
        }
    }
}

/// A change to an endpoint's stored record (see
/// [`WebhookStore::update_endpoint`]).
pub type EndpointChange = Box<dyn Fn(&mut Endpoint) + Send + Sync>;

/// Endpoints and their delivery logs. Every read takes the account, so one
/// tenant's id never reaches another's records.
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Creates or replaces an endpoint.
    async fn put_endpoint(&self, endpoint: &Endpoint) -> PortResult<()>;
    async fn endpoints(&self, account: &str) -> PortResult<Vec<Endpoint>>;
    /// Applies `change` to the endpoint as stored now, atomically with
    /// respect to other writes of it: a deletion or a rotation meanwhile
    /// is never undone by a write from an older copy. The endpoint as
    /// written; `None`, and nothing written, when there is no such endpoint.
    async fn update_endpoint(
        &self,
        account: &str,
        id: &str,
        change: EndpointChange,
    ) -> PortResult<Option<Endpoint>>;
    /// Removes the endpoint and its log; false when there was none.
    async fn delete_endpoint(&self, account: &str, id: &str) -> PortResult<bool>;
    /// Records a new delivery; false (and nothing written) when the
    /// endpoint already has one with its id.
    async fn add_delivery(&self, delivery: &Delivery) -> PortResult<bool>;
    /// Writes a delivery's new state.
    async fn put_delivery(&self, delivery: &Delivery) -> PortResult<()>;
    async fn delivery(
        &self,
        account: &str,
        endpoint: &str,
        id: &str,
    ) -> PortResult<Option<Delivery>>;
    /// An endpoint's newest deliveries first, at most `limit`.
    async fn deliveries(
        &self,
        account: &str,
        endpoint: &str,
        limit: usize,
    ) -> PortResult<Vec<Delivery>>;

    /// Every account's endpoints that want `event`: the nightly scan's
    /// events go to all subscribers.
    async fn subscribed(&self, event: EventType) -> PortResult<Vec<Endpoint>>;

    async fn put_alert(&self, alert: &Alert) -> PortResult<()>;
    async fn alerts(&self, account: &str) -> PortResult<Vec<Alert>>;
    async fn delete_alert(&self, account: &str, id: &str) -> PortResult<bool>;
    /// Every account's alerts, for the nightly scan.
    async fn all_alerts(&self) -> PortResult<Vec<Alert>>;

    async fn endpoint(&self, account: &str, id: &str) -> PortResult<Option<Endpoint>> {
        Ok(self
            .endpoints(account)
            .await?
            .into_iter()
            .find(|e| e.id == id))
    }
}

/// Where a scheduled attempt waits until due: the embedded loop reads due
/// deliveries from the store itself (so `schedule` only wakes it); on AWS
/// each attempt is a queue message.
#[async_trait]
pub trait Outbox: Send + Sync {
    async fn schedule(&self, job: DeliveryJob, delay: Duration) -> PortResult<()>;
}

/// What the HTTP side and the worker need of webhooks: the store, the
/// outbox, the key secrets derive from and the destination rule.
#[derive(Clone)]
pub struct Hooks {
    pub store: Arc<dyn WebhookStore>,
    pub outbox: Arc<dyn Outbox>,
    pub keys: signing::Keyring,
    pub policy: address::Policy,
}

impl Hooks {
    pub fn events(&self) -> emit::Events {
        emit::Events {
            store: self.store.clone(),
            outbox: self.outbox.clone(),
        }
    }
}

/// When a failed delivery is tried again: the delays after the first,
/// second, ... failed attempt. Standard Webhooks' suggested schedule by
/// default (about 27.5 hours in all); an operator may shorten it.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrySchedule(pub Vec<Duration>);

impl Default for RetrySchedule {
    fn default() -> Self {
        let s = |n: u64| Duration::from_secs(n);
        RetrySchedule(vec![
            s(5),
            s(5 * 60),
            s(30 * 60),
            s(2 * 3600),
            s(5 * 3600),
            s(10 * 3600),
            s(10 * 3600),
        ])
    }
}

impl FromStr for RetrySchedule {
    type Err = String;
    /// Seconds separated by commas: `5,300,1800`.
    fn from_str(s: &str) -> Result<Self, String> {
        let delays = s
            .split(',')
            .map(|p| {
                p.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0 && *v <= 7.0 * 86400.0)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| format!("'{p}' is not a number of seconds up to a week"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if delays.is_empty() || delays.len() > 20 {
            return Err("1 to 20 delays".into());
        }
        Ok(RetrySchedule(delays))
    }
}

/// A new id with a prefix: `ep_` endpoints, `alert_` alerts.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4().simple())
}

/// The id of an event: the same for the same subject, so an event told
/// twice (a redelivered job, a repeated scan) is one delivery per endpoint.
pub fn event_id(event: EventType, subject: &str) -> String {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(format!("{event}:{subject}").as_bytes());
    let hex: String = h.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("msg_{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_are_stable_per_subject() {
        let a = event_id(EventType::TaskFinished, "t1");
        assert_eq!(a, event_id(EventType::TaskFinished, "t1"));
        assert_ne!(a, event_id(EventType::TaskFinished, "t2"));
        assert_ne!(a, event_id(EventType::BatchFinished, "t1"));
        assert!(a.starts_with("msg_") && a.len() == 36, "{a}");
    }

    #[test]
    fn schedules_parse_and_refuse() {
        let s: RetrySchedule = "0.2, 0.4,1".parse().unwrap();
        assert_eq!(s.0[1], Duration::from_millis(400));
        assert!("".parse::<RetrySchedule>().is_err());
        assert!("1,-2".parse::<RetrySchedule>().is_err());
        assert!("nan".parse::<RetrySchedule>().is_err());
        assert_eq!(RetrySchedule::default().0.len(), 7);
    }

    #[test]
    fn the_previous_secret_signs_until_its_time() {
        let t = |s: i64| chrono::DateTime::from_timestamp(s, 0).unwrap().naive_utc();
        let mut e = Endpoint {
            id: "ep_1".into(),
            account: "a".into(),
            url: "https://hooks.example/".into(),
            events: vec![EventType::TaskFinished],
            description: String::new(),
            created_at: t(0),
            secret_version: 1,
            previous_until: None,
            disabled: None,
            last_success: None,
        };
        assert_eq!(e.signing_versions(t(10)), vec![1]);
        e.secret_version = 2;
        e.previous_until = Some(t(100));
        assert_eq!(e.signing_versions(t(10)), vec![2, 1]);
        assert_eq!(e.signing_versions(t(100)), vec![2]);
        assert!(e.wants(EventType::TaskFinished) && !e.wants(EventType::ScannerAlert));
        e.events.clear();
        assert!(e.wants(EventType::ScannerAlert));
        e.disabled = Some("x".into());
        assert!(!e.wants(EventType::TaskFinished));
    }
}
