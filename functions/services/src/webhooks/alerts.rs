//! Scanner alerts: which of the nightly scan's items an account is told of.

use super::{MAX_LIST_ITEMS, iso};
#[cfg(feature = "openapi")]
use super::{list_of, one_of};
use crate::{Error, Result};
use platform::tasks::now;
use platform::webhooks::{Alert, Hooks, MAX_ALERTS, new_id};
use serde::{Deserialize, Serialize};
use serde_json::Value;
#[cfg(feature = "openapi")]
use serde_json::json;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// `POST /smart-stock-scanner/alerts`: which of the nightly scan's items to be told of.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AlertRequest {
    /// A name for the alert (at most 100 characters).
    #[serde(default, deserialize_with = "crate::error::not_null")]
    #[cfg_attr(feature = "openapi", schema(max_length = 100, nullable = false))]
    pub name: Option<String>,
    /// Signal names of `/smart-stock-scanner/get-predefined-signals`; empty or absent: every signal.
    #[serde(default, deserialize_with = "crate::error::not_null")]
    #[cfg_attr(feature = "openapi", schema(schema_with = signal_list))]
    pub signals: Option<Vec<String>>,
    /// Tickers; empty or absent: every stock.
    #[serde(default, deserialize_with = "crate::error::not_null")]
    #[cfg_attr(feature = "openapi", schema(schema_with = ticker_list))]
    pub tickers: Option<Vec<String>>,
    /// Minimum win rate of the signal's earlier trades, percent (0-100).
    #[serde(default, deserialize_with = "crate::error::not_null")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 100, nullable = false)
    )]
    pub min_win_rate: Option<f64>,
    /// Minimum number of earlier trades.
    #[serde(default, deserialize_with = "crate::error::not_null")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<u32>, maximum = 1000000, nullable = false))]
    pub min_trades: Option<f64>,
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
        if list.len() > MAX_LIST_ITEMS {
            return Err(Error::invalid(
                field,
                format!("lists {} items; at most {MAX_LIST_ITEMS}", list.len()),
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
