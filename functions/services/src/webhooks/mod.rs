//! Webhook endpoints and scanner alerts as an account manages them, and the
//! events the worker and the nightly scan tell (`docs/webhooks.md`):
//! endpoints here, [`alerts`], and the events' payloads in [`events`].

pub mod alerts;
pub mod events;

pub use alerts::{AlertRequest, AlertView, alerts, create_alert, delete_alert};
pub use events::{TaskEvents, scan_events, task_finished};

use crate::{Error, Result};
use platform::tasks::now;
use platform::webhooks::{
    Delivery, DeliveryStatus, Endpoint, EventType, Hooks, MAX_ENDPOINTS, new_id,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
#[cfg(feature = "openapi")]
use serde_json::json;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// `POST /webhooks`: where to send, and what. `{"url": ...}` alone
/// subscribes to every event.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EndpointRequest {
    /// An https URL of a public address (checked now and before every attempt).
    #[cfg_attr(
        feature = "openapi",
        schema(example = "https://hooks.example/marketlab", max_length = 2048)
    )]
    pub url: String,
    /// `task.finished`, `batch.finished`, `scan.completed`, `scanner.alert`; absent or empty: all of them.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = event_list))]
    pub events: Option<Vec<String>>,
    /// A note to tell endpoints apart (at most 256 characters).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 256))]
    pub description: Option<String>,
}

/// `POST /webhooks/{id}/rotate`: a new secret; the old one keeps signing for a while.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RotateRequest {
    /// Hours the previous secret still signs beside the new one (0-168, default 24).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 168))]
    pub keep_previous_hours: Option<f64>,
}

/// An endpoint as its account sees it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct EndpointView {
    pub id: String,
    pub url: String,
    /// The events it receives (every event when it subscribed to all).
    pub events: Vec<String>,
    pub description: String,
    /// ISO time, UTC.
    pub created_at: String,
    /// False once it kept failing; `disabled_reason` says why.
    pub enabled: bool,
    pub disabled_reason: Option<String>,
    /// The signing secret (`whsec_...`): only in the answer that made it
    /// (registration, rotation); keep it, it is not shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Until then the secret before the last rotation signs too.
    pub previous_secret_valid_until: Option<String>,
    /// The last attempt it answered with a 2xx.
    pub last_success: Option<String>,
}

/// One attempt at a delivery.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct AttemptView {
    pub at: String,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// Why there was no answer (refused address, timeout, connection error).
    pub error: Option<String>,
    pub milliseconds: u64,
}

/// A delivery of one event to one endpoint.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct DeliveryView {
    /// The `webhook-id` header: the same on every attempt and redelivery.
    pub id: String,
    pub event: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    pub created_at: String,
    pub next_attempt: Option<String>,
    /// Attempts made in all.
    pub tries: u32,
    /// The latest attempts (at most 20).
    pub attempts: Vec<AttemptView>,
    /// The body sent.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub payload: Value,
}

/// Longest list a request may give (event types, alerts' signals and tickers).
pub(crate) const MAX_LIST_ITEMS: usize = 100;

#[cfg(feature = "openapi")]
pub(crate) fn list_of(items: utoipa::openapi::Object, example: Value) -> utoipa::openapi::Array {
    utoipa::openapi::ArrayBuilder::new()
        .items(items)
        .max_items(Some(MAX_LIST_ITEMS))
        .examples([example])
        .build()
}

/// A string that is one of `values`.
#[cfg(feature = "openapi")]
pub(crate) fn one_of(values: impl IntoIterator<Item = &'static str>) -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(values))
        .build()
}

#[cfg(feature = "openapi")]
fn event_list() -> utoipa::openapi::Array {
    let items = one_of(EventType::ALL.map(|e| e.as_str()));
    list_of(items, json!(["task.finished", "batch.finished"]))
}

pub(crate) fn iso(t: chrono::NaiveDateTime) -> String {
    t.and_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl EndpointView {
    fn of(e: &Endpoint, secret: Option<String>) -> Self {
        let events = if e.events.is_empty() {
            EventType::ALL.to_vec()
        } else {
            e.events.clone()
        };
        EndpointView {
            id: e.id.clone(),
            url: e.url.clone(),
            events: events.iter().map(|t| t.as_str().to_string()).collect(),
            description: e.description.clone(),
            created_at: iso(e.created_at),
            enabled: e.disabled.is_none(),
            disabled_reason: e.disabled.clone(),
            secret,
            previous_secret_valid_until: e.previous_until.filter(|t| *t > now()).map(iso),
            last_success: e.last_success.map(iso),
        }
    }
}

impl DeliveryView {
    pub fn of(d: &Delivery) -> Self {
        DeliveryView {
            id: d.id.clone(),
            event: d.event.as_str().into(),
            status: d.status.as_str().into(),
            created_at: iso(d.created_at),
            next_attempt: d
                .next_attempt
                .filter(|_| d.status == DeliveryStatus::Pending)
                .map(iso),
            tries: d.tries,
            attempts: d
                .attempts
                .iter()
                .map(|a| AttemptView {
                    at: iso(a.at),
                    status: a.status,
                    error: a.error.clone(),
                    milliseconds: a.millis,
                })
                .collect(),
            payload: serde_json::from_str(&d.payload).unwrap_or(Value::Null),
        }
    }
}

fn event_types(list: Option<Vec<String>>) -> Result<Vec<EventType>> {
    let mut out = Vec::new();
    for (k, name) in list.unwrap_or_default().iter().enumerate() {
        let t: EventType = name
            .parse()
            .map_err(|e: String| Error::invalid(format!("events[{k}]"), e))?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    // Every type named is the same as none: all of them, new ones included.
    if out.len() == EventType::ALL.len() {
        out.clear();
    }
    Ok(out)
}

fn description(text: Option<String>) -> Result<String> {
    let text = text.unwrap_or_default();
    if text.chars().count() > 256 {
        return Err(Error::invalid(
            "description",
            "is longer than 256 characters",
        ));
    }
    Ok(text)
}

/// Registers an endpoint; its view carries the secret, this once.
pub async fn register(hooks: &Hooks, account: &str, body: Value) -> Result<EndpointView> {
    let req: EndpointRequest = crate::error::from_json(body)?;
    let events = event_types(req.events)?;
    let description = description(req.description)?;
    hooks
        .policy
        .check(&req.url)
        .await
        .map_err(|why| Error::invalid("url", why))?;
    if hooks.store.endpoints(account).await?.len() >= MAX_ENDPOINTS {
        return Err(Error::Conflict(format!(
            "the account has {MAX_ENDPOINTS} webhook endpoints, the most it may have; delete one first"
        )));
    }
    let e = Endpoint {
        id: new_id("ep_"),
        account: account.to_string(),
        url: req.url,
        events,
        description,
        created_at: now(),
        secret_version: 1,
        previous_until: None,
        disabled: None,
        last_success: None,
    };
    hooks.store.put_endpoint(&e).await?;
    Ok(EndpointView::of(&e, Some(hooks.keys.whsec(&e.id, 1))))
}

async fn owned(hooks: &Hooks, account: &str, id: &str) -> Result<Endpoint> {
    hooks
        .store
        .endpoint(account, id)
        .await?
        .ok_or_else(|| Error::NotFound(format!("webhook endpoint '{id}' not found")))
}

/// The caller's endpoint changed by `change` as stored now (404 when none).
async fn updated(
    hooks: &Hooks,
    account: &str,
    id: &str,
    change: impl Fn(&mut Endpoint) + Send + Sync + 'static,
) -> Result<Endpoint> {
    hooks
        .store
        .update_endpoint(account, id, Box::new(change))
        .await?
        .ok_or_else(|| Error::NotFound(format!("webhook endpoint '{id}' not found")))
}

pub async fn list(hooks: &Hooks, account: &str) -> Result<Vec<EndpointView>> {
    Ok(hooks
        .store
        .endpoints(account)
        .await?
        .iter()
        .map(|e| EndpointView::of(e, None))
        .collect())
}

pub async fn get(hooks: &Hooks, account: &str, id: &str) -> Result<EndpointView> {
    Ok(EndpointView::of(&owned(hooks, account, id).await?, None))
}

pub async fn delete(hooks: &Hooks, account: &str, id: &str) -> Result<()> {
    if hooks.store.delete_endpoint(account, id).await? {
        Ok(())
    } else {
        Err(Error::NotFound(format!(
            "webhook endpoint '{id}' not found"
        )))
    }
}

/// A new secret; the previous one also signs for `keep_previous_hours`.
pub async fn rotate(hooks: &Hooks, account: &str, id: &str, body: Value) -> Result<EndpointView> {
    let req: RotateRequest = if body.is_null() {
        RotateRequest::default()
    } else {
        crate::error::from_json(body)?
    };
    let hours = req.keep_previous_hours.unwrap_or(24.0);
    if !(0.0..=168.0).contains(&hours) {
        return Err(Error::invalid(
            "keep_previous_hours",
            format!("must be between 0 and 168, got {hours}"),
        ));
    }
    let until = now() + chrono::TimeDelta::milliseconds((hours * 3_600_000.0).round() as i64);
    let e = updated(hooks, account, id, move |e| {
        e.secret_version += 1;
        e.previous_until = Some(until);
    })
    .await?;
    let secret = hooks.keys.whsec(&e.id, e.secret_version);
    Ok(EndpointView::of(&e, Some(secret)))
}

/// Turns a disabled endpoint back on (its failed deliveries stay failed;
/// redeliver the ones wanted).
pub async fn enable(hooks: &Hooks, account: &str, id: &str) -> Result<EndpointView> {
    let e = updated(hooks, account, id, |e| e.disabled = None).await?;
    Ok(EndpointView::of(&e, None))
}

pub async fn deliveries(
    hooks: &Hooks,
    account: &str,
    id: &str,
    limit: usize,
) -> Result<Vec<DeliveryView>> {
    owned(hooks, account, id).await?;
    Ok(hooks
        .store
        .deliveries(account, id, limit)
        .await?
        .iter()
        .map(DeliveryView::of)
        .collect())
}

/// Sends a delivery again; a disabled endpoint is a conflict (enable it first).
pub async fn redeliver(
    hooks: &Hooks,
    account: &str,
    id: &str,
    delivery: &str,
) -> Result<DeliveryView> {
    let e = owned(hooks, account, id).await?;
    if let Some(why) = &e.disabled {
        return Err(Error::Conflict(format!(
            "webhook endpoint '{id}' is disabled ({why}); enable it first"
        )));
    }
    let d = hooks
        .events()
        .redeliver(account, id, delivery)
        .await?
        .ok_or_else(|| Error::NotFound(format!("delivery '{delivery}' not found")))?;
    Ok(DeliveryView::of(&d))
}
