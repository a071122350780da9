//! The indicator data service (indicator-data-service.md): who may read
//! what, the catalog, and the answers. History answers hold thousands of
//! records, so they are written as JSON text straight from the series
//! columns (`format`); their schemas are described once in `schemas`.

pub mod access;
pub mod format;
pub mod history;
pub mod intraday;
#[cfg(feature = "openapi")]
pub mod schemas;

use crate::error::{Error, Result};
use access::may_read;
use platform::PortError;
use platform::accounts::Account;
use platform::marketdata::{IndicatorMeta, IndicatorSeries, MarketData};
use serde::Serialize;
use std::sync::Arc;

pub use access::{subscribed, user_selected, view_key};

/// Full-history requests of trial accounts return only the last records.
pub const TRIAL_RECORDS: usize = 90;

/// The indicator catalog; missing, the service is unavailable rather than empty.
pub async fn catalog(market: &dyn MarketData) -> Result<Arc<Vec<IndicatorMeta>>> {
    market.indicator_catalog().await.map_err(|e| match e {
        PortError::NotFound(_) => {
            PortError::Unavailable("the indicator catalog is not available".into()).into()
        }
        other => other.into(),
    })
}

pub async fn series(market: &dyn MarketData, code: &str) -> Result<Arc<IndicatorSeries>> {
    Ok(market.indicator_series(code).await?)
}

/// The latest readings of an indicator (at least 90), for the answers over
/// every indicator (snapshots, bulk): small enough to keep for all of them.
pub async fn tail(market: &dyn MarketData, code: &str) -> Result<Arc<IndicatorSeries>> {
    Ok(market.indicator_tail(code).await?)
}

/// One catalog entry (4.1).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogItem<'a> {
    pub chart_name: &'a str,
    /// The indicator code used in paths.
    pub url: &'a str,
    /// In the `...withIndexes` lists only; SPX when the indicator has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub market_symbol: Option<&'a str>,
}

/// A catalog list, with market symbols for the `...withIndexes` forms.
pub fn catalog_list<'a>(
    items: impl Iterator<Item = &'a IndicatorMeta>,
    with_market: bool,
) -> String {
    let items: Vec<CatalogItem> = items
        .map(|m| CatalogItem {
            chart_name: &m.chart_name,
            url: &m.url,
            market_symbol: with_market.then_some(if m.market_symbol.is_empty() {
                "SPX"
            } else {
                m.market_symbol.as_str()
            }),
        })
        .collect();
    serde_json::to_string(&items).expect("catalog items serialize")
}

/// The indicator of a path `{symbol}`, if the caller may read it.
pub fn indicator<'a>(
    account: &Account,
    catalog: &'a [IndicatorMeta],
    code: &str,
) -> Result<&'a IndicatorMeta, Error> {
    let m = catalog
        .iter()
        .find(|m| m.url == code && !m.internal)
        .ok_or_else(|| Error::NotFound(format!("symbol '{code}' not found")))?;
    if !may_read(account, m) {
        return Err(Error::NotSubscribed(format!(
            "not subscribed to '{code}': add it to your selections or upgrade the data plan"
        )));
    }
    Ok(m)
}

/// Index range of the last `n` records.
pub fn last(n: usize, len: usize) -> std::ops::Range<usize> {
    len.saturating_sub(n)..len
}

pub fn full_range(account: &Account, len: usize) -> std::ops::Range<usize> {
    recent(account, usize::MAX, len)
}

/// The last `n` of `len` records, never more than [`TRIAL_RECORDS`] for a
/// trial account: every path that returns history goes through here, so no
/// form of request (a large `days`, a custom indicator, bulk, intraday) gives a
/// trial more.
pub fn recent(account: &Account, n: usize, len: usize) -> std::ops::Range<usize> {
    let n = if account.plan.trial {
        n.min(TRIAL_RECORDS)
    } else {
        n
    };
    last(n, len)
}
