//! Webhook endpoints and scanner alerts as an account manages them, and the
//! events the worker and the nightly scan tell (`docs/webhooks.md`).

use crate::{Error, Result};
use platform::scanner::ScanDay;
use platform::tasks::{Task, TaskKind, TaskStatus, TaskStore, now};
use platform::webhooks::emit::Events;
use platform::webhooks::{
    Alert, Delivery, DeliveryStatus, Endpoint, EventType, Hooks, MAX_ALERTS, MAX_ENDPOINTS, new_id,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::sync::Arc;

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
        schema(example = "https://93.184.216.34/marketlab", max_length = 2048)
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

/// `POST /smart-stock-scanner/alerts`: which of the nightly scan's items to be told of.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AlertRequest {
    /// A name for the alert (at most 100 characters).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 100))]
    pub name: Option<String>,
    /// Signal names of `/smart-stock-scanner/get-predefined-signals`; empty or absent: every signal.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = signal_list))]
    pub signals: Option<Vec<String>>,
    /// Tickers; empty or absent: every stock.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = ticker_list))]
    pub tickers: Option<Vec<String>>,
    /// Minimum win rate of the signal's earlier trades, percent (0-100).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 100))]
    pub min_win_rate: Option<f64>,
    /// Minimum number of earlier trades.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<u32>, maximum = 1000000))]
    pub min_trades: Option<f64>,
}

#[cfg(feature = "openapi")]
fn list_of(items: utoipa::openapi::Object, example: Value) -> utoipa::openapi::Array {
    utoipa::openapi::ArrayBuilder::new()
        .items(items)
        .max_items(Some(MAX_ALERT_ITEMS))
        .examples([example])
        .build()
}

/// A string that is one of `values`.
#[cfg(feature = "openapi")]
fn one_of(values: impl IntoIterator<Item = &'static str>) -> utoipa::openapi::Object {
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

#[cfg(feature = "openapi")]
fn signal_list() -> utoipa::openapi::Array {
    let items = one_of(engine::scanner::SIGNALS.iter().map(|s| s.name));
    list_of(items, json!(["MA", "RSI"]))
}

#[cfg(feature = "openapi")]
fn ticker_list() -> utoipa::openapi::Array {
    let items = utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .pattern(Some(TICKER_PATTERN))
        .build();
    list_of(items, json!(["AAPL", "MSFT"]))
}

/// What a ticker in an alert may be.
pub const TICKER_PATTERN: &str = "^[A-Za-z0-9._^-]{1,16}$";

/// An alert as its account sees it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct AlertView {
    pub id: String,
    pub name: String,
    pub signals: Vec<String>,
    pub tickers: Vec<String>,
    pub min_win_rate: Option<f64>,
    pub min_trades: Option<u32>,
    pub created_at: String,
}

fn iso(t: chrono::NaiveDateTime) -> String {
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

impl AlertView {
    fn of(a: &Alert) -> Self {
        AlertView {
            id: a.id.clone(),
            name: a.name.clone(),
            signals: a.signals.clone(),
            tickers: a.tickers.clone(),
            min_win_rate: a.min_win_rate,
            min_trades: a.min_trades,
            created_at: iso(a.created_at),
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
        .target(&req.url)
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
    let mut e = owned(hooks, account, id).await?;
    e.secret_version += 1;
    e.previous_until =
        Some(now() + chrono::TimeDelta::milliseconds((hours * 3_600_000.0).round() as i64));
    hooks.store.put_endpoint(&e).await?;
    let secret = hooks.keys.whsec(&e.id, e.secret_version);
    Ok(EndpointView::of(&e, Some(secret)))
}

/// Turns a disabled endpoint back on (its failed deliveries stay failed;
/// redeliver the ones wanted).
pub async fn enable(hooks: &Hooks, account: &str, id: &str) -> Result<EndpointView> {
    let mut e = owned(hooks, account, id).await?;
    if e.disabled.take().is_some() {
        hooks.store.put_endpoint(&e).await?;
    }
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

/// Longest alert list of signals or tickers.
const MAX_ALERT_ITEMS: usize = 100;

pub async fn create_alert(hooks: &Hooks, account: &str, body: Value) -> Result<AlertView> {
    let req: AlertRequest = crate::error::from_json(body)?;
    let name = req.name.unwrap_or_default();
    if name.chars().count() > 100 {
        return Err(Error::invalid("name", "is longer than 100 characters"));
    }
    let signals = req.signals.unwrap_or_default();
    let tickers: Vec<String> = req
        .tickers
        .unwrap_or_default()
        .into_iter()
        .map(|t| t.trim().to_ascii_uppercase())
        .collect();
    for (field, list) in [("signals", &signals), ("tickers", &tickers)] {
        if list.len() > MAX_ALERT_ITEMS {
            return Err(Error::invalid(
                field,
                format!("lists {} items; at most {MAX_ALERT_ITEMS}", list.len()),
            ));
        }
    }
    for (k, s) in signals.iter().enumerate() {
        if !engine::scanner::SIGNALS.iter().any(|g| g.name == s) {
            return Err(Error::invalid(
                format!("signals[{k}]"),
                format!(
                    "'{s}' is not a scanner signal (see /smart-stock-scanner/get-predefined-signals)"
                ),
            ));
        }
    }
    for (k, t) in tickers.iter().enumerate() {
        if t.is_empty()
            || t.len() > 16
            || !t
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_^".contains(c))
        {
            return Err(Error::invalid(
                format!("tickers[{k}]"),
                format!("'{t}' is not a ticker"),
            ));
        }
    }
    if let Some(w) = req.min_win_rate
        && !(0.0..=100.0).contains(&w)
    {
        return Err(Error::invalid(
            "min_win_rate",
            format!("must be between 0 and 100, got {w}"),
        ));
    }
    let min_trades = match req.min_trades {
        None => None,
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 1e6 => Some(n as u32),
        Some(n) => {
            return Err(Error::invalid(
                "min_trades",
                format!("must be a whole number from 0 to 1000000, got {n}"),
            ));
        }
    };
    if hooks.store.alerts(account).await?.len() >= MAX_ALERTS {
        return Err(Error::Conflict(format!(
            "the account has {MAX_ALERTS} alerts, the most it may have; delete one first"
        )));
    }
    let a = Alert {
        id: new_id("alert_"),
        account: account.to_string(),
        name,
        signals,
        tickers,
        min_win_rate: req.min_win_rate,
        min_trades,
        created_at: now(),
    };
    hooks.store.put_alert(&a).await?;
    Ok(AlertView::of(&a))
}

pub async fn alerts(hooks: &Hooks, account: &str) -> Result<Vec<AlertView>> {
    Ok(hooks
        .store
        .alerts(account)
        .await?
        .iter()
        .map(AlertView::of)
        .collect())
}

pub async fn delete_alert(hooks: &Hooks, account: &str, id: &str) -> Result<()> {
    if hooks.store.delete_alert(account, id).await? {
        Ok(())
    } else {
        Err(Error::NotFound(format!("alert '{id}' not found")))
    }
}

/// A finished task's scalar figures (its result's top-level numbers and
/// short texts, and those of its statistics block): the payload stays
/// small, the full result is one link away.
fn key_metrics(result: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let sources = [
        result,
        &result["data"],
        &result["data"]["stats"],
        &result["backtest_info"]["stats"],
        &result["data"]["backtest_info"]["stats"],
    ];
    for source in sources {
        let Some(obj) = source.as_object() else {
            continue;
        };
        for (k, v) in obj {
            let keep = match v {
                Value::Number(_) | Value::Bool(_) => true,
                Value::String(s) => s.len() <= 40,
                _ => false,
            };
            if keep && out.len() < 24 && !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// Where a task's owner reads it.
fn links(task: &Task) -> Value {
    let id = task.id;
    match task.kind {
        TaskKind::StrategyBacktest => json!({
            "status": format!("/backtest/status/{id}"),
            "report": format!("/backtest/report/{id}"),
            "chart": format!("/backtest/chart/{id}"),
        }),
        TaskKind::CpmScan | TaskKind::CpmBacktest => json!({
            "status": format!("/cpm/status/{id}"),
            "report": format!("/cpm/report/{id}"),
        }),
        TaskKind::ScannerBacktest => json!({
            "status": format!("/smart-scanner-backtest/status/{id}"),
            "report": format!("/smart-scanner-backtest/report/{id}"),
        }),
        TaskKind::BatchBacktest | TaskKind::BatchChunk => json!({
            "status": format!("/backtest/batch/{id}"),
            "results": format!("/backtest/batch/{id}/results"),
            "report": format!("/backtest/batch/{id}/report"),
        }),
    }
}

/// The payload of `task.finished`.
pub fn task_finished(task: &Task) -> Value {
    let mut data = json!({
        "task_id": task.id.to_string(),
        "kind": task.kind.as_str(),
        "status": task.status.as_str(),
        "links": links(task),
    });
    if let Some(result) = &task.result {
        data["metrics"] = Value::Object(key_metrics(result));
    }
    if let Some(error) = &task.error {
        data["error"] = Value::String(error.chars().take(500).collect());
    }
    data
}

/// Tells a finished task's owner: `task.finished` for a backtest, CPM or
/// scanner backtest; `batch.finished` once a batch's last chunk is in (or
/// the batch could not be fanned out).
pub struct TaskEvents {
    pub events: Events,
    pub tasks: Arc<dyn TaskStore>,
}

impl TaskEvents {
    async fn tell(&self, task: &Task) -> Result<()> {
        match task.kind {
            TaskKind::StrategyBacktest
            | TaskKind::CpmBacktest
            | TaskKind::CpmScan
            | TaskKind::ScannerBacktest => {
                self.events
                    .emit(
                        Some(&task.owner),
                        EventType::TaskFinished,
                        &task.id.to_string(),
                        task_finished(task),
                    )
                    .await?;
            }
            TaskKind::BatchBacktest if task.status == TaskStatus::Failed => {
                self.batch(task).await?;
            }
            TaskKind::BatchBacktest => {}
            TaskKind::BatchChunk => {
                let Some(parent) = task
                    .params
                    .get("batch")
                    .and_then(Value::as_str)
                    .and_then(|s| uuid::Uuid::parse_str(s).ok())
                else {
                    return Ok(());
                };
                if let Some(record) = self.tasks.get(parent).await? {
                    self.batch(&record).await?;
                }
            }
        }
        Ok(())
    }

    /// `batch.finished`, when the batch has.
    async fn batch(&self, record: &Task) -> Result<()> {
        let s = crate::backtest::batch::status(self.tasks.as_ref(), record).await?;
        if s.status != "SUCCESS" && s.status != "FAILED" {
            return Ok(());
        }
        let rows = s.rows.as_deref().unwrap_or_default();
        let failed = rows.iter().filter(|r| r.error.is_some()).count();
        let best = rows
            .iter()
            .filter_map(|r| r.total_return.map(|m| (r, m)))
            .filter(|(_, m)| m.is_finite())
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let mut data = json!({
            "batch_id": s.batch_id,
            "name": s.name,
            "status": s.status,
            "total": s.total,
            "failed_rows": failed,
            "links": links(record),
        });
        if let Some((row, _)) = best {
            // The row of the highest total return, with its figures under
            // the names of the results table.
            let mut best = json!({"index": row.index, "params": row.params});
            if let Ok(Value::Object(figures)) = serde_json::to_value(row) {
                for (k, v) in figures {
                    if crate::backtest::batch::METRICS.contains(&k.as_str()) {
                        best[k] = v;
                    }
                }
            }
            data["best"] = best;
        }
        if let Some(e) = &s.error {
            data["error"] = Value::String(e.chars().take(500).collect());
        }
        self.events
            .emit(
                Some(&record.owner),
                EventType::BatchFinished,
                &s.batch_id,
                data,
            )
            .await?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl platform::worker::AfterJob for TaskEvents {
    async fn finished(&self, task: &Task) {
        if let Err(e) = self.tell(task).await {
            tracing::warn!(task_id = %task.id, error = %e, "webhook event not recorded");
        }
    }
}

/// Items of one alert's event, at most.
const ALERT_ITEMS: usize = 100;

fn matches(alert: &Alert, row: &platform::scanner::ScanRow) -> bool {
    (alert.signals.is_empty() || alert.signals.contains(&row.signal))
        && (alert.tickers.is_empty() || alert.tickers.contains(&row.symbol))
        && alert.min_win_rate.is_none_or(|w| row.figures.win_rate >= w)
        && alert
            .min_trades
            .is_none_or(|n| row.figures.trade_number >= n as usize)
}

/// After a scan stored `day`: `scan.completed` to every subscriber, and one
/// `scanner.alert` per alert with matching items (one per alert and day:
/// scanning the day again tells nothing new). The events recorded.
pub async fn scan_events(events: &Events, day: &ScanDay) -> Result<usize> {
    let date = day.date.to_string();
    let stocks = {
        let mut s: Vec<&str> = day.rows.iter().map(|r| r.symbol.as_str()).collect();
        s.dedup();
        s.len()
    };
    let mut told = events
        .emit(
            None,
            EventType::ScanCompleted,
            &date,
            json!({"date": date, "items": day.rows.len(), "stocks_with_items": stocks, "links": {"scanner": "/smart-stock-scanner/latest-day-all"}}),
        )
        .await?;
    for alert in events.store.all_alerts().await? {
        let hits: Vec<&platform::scanner::ScanRow> =
            day.rows.iter().filter(|r| matches(&alert, r)).collect();
        if hits.is_empty() {
            continue;
        }
        let items: Vec<Value> = hits
            .iter()
            .take(ALERT_ITEMS)
            .map(|r| {
                json!({
                    "symbol": r.symbol,
                    "signal": r.signal,
                    "direction": r.direction.as_str(),
                    "close": r.close,
                    "win_rate": r.figures.win_rate,
                    "trades": r.figures.trade_number,
                    "avg_return": r.figures.avg_return,
                    "profit_target": r.profit_target,
                    "stop_loss": r.stop_loss,
                })
            })
            .collect();
        told += events
            .emit(
                Some(&alert.account),
                EventType::ScannerAlert,
                &format!("{}:{date}", alert.id),
                json!({
                    "alert_id": alert.id,
                    "name": alert.name,
                    "date": date,
                    "matched": hits.len(),
                    "items": items,
                    "links": {"scanner": "/smart-stock-scanner/latest-day-all"},
                }),
            )
            .await?;
    }
    Ok(told)
}
