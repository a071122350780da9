//! The indicator data service (indicator-data-service.md): who may read
//! what, the catalog, and the answers. History answers hold thousands of
//! records, so they are written as JSON text straight from the series
//! columns (`format`); their schemas are described once in `schemas`.

pub mod access;
pub mod custom;
pub mod format;
pub mod history;
pub mod intraday;
pub mod prices;
#[cfg(feature = "openapi")]
pub mod schemas;
pub mod window;

use crate::error::{Error, Result};
use access::may_read;
use platform::PortError;
use platform::accounts::Account;
use platform::marketdata::{IndicatorMeta, IndicatorSeries, MarketData};
use serde::Serialize;
use std::sync::Arc;

pub use access::{subscribed, user_selected, view_key};
pub use window::{Readable, Records, TRIAL_RECORDS};

/// The indicator catalog; missing, the service is unavailable rather than empty.
pub async fn catalog(market: &dyn MarketData) -> Result<Arc<Vec<IndicatorMeta>>> {
    market.indicator_catalog().await.map_err(|e| match e {
        PortError::NotFound(_) => {
            PortError::unavailable("the indicator catalog is not available").into()
        }
        other => other.into(),
    })
}

/// A whole series; answers read it through [`Readable`].
pub(crate) async fn series(market: &dyn MarketData, code: &str) -> Result<Arc<IndicatorSeries>> {
    Ok(market.indicator_series(code).await?)
}

/// The latest readings of an indicator (at least [`TRIAL_RECORDS`]), for the
/// answers over every indicator (snapshots, bulk): small enough to keep for
/// all of them.
pub(crate) async fn tail(market: &dyn MarketData, code: &str) -> Result<Arc<IndicatorSeries>> {
    Ok(market.indicator_tail(code).await?)
}

/// The indicator of a path `{symbol}` and its history as the caller may read it.
pub async fn readable<'a>(
    market: &dyn MarketData,
    account: &Account,
    catalog: &'a [IndicatorMeta],
    code: &str,
) -> Result<(&'a IndicatorMeta, Readable)> {
    let m = indicator(account, catalog, code)?;
    let s = series(market, code).await?;
    Ok((m, Readable::new(account, s)))
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

/// The catalog lists that depend on the account (4.1).
#[derive(Debug, Clone, Copy)]
pub enum Listing<'a> {
    /// The account's selections plus its plan's base indicators.
    UserSelected,
    /// Subscribed model indicators.
    Model,
    /// Subscribed indicators of a metadata group (any case); 404 for a
    /// group no public indicator is in.
    Group(&'a str),
}

/// A catalog list of the account's, with market symbols for the
/// `...withIndexes` forms.
pub fn listing(
    account: &Account,
    catalog: &[IndicatorMeta],
    which: Listing,
    with_market: bool,
) -> Result<String> {
    let json = match which {
        Listing::UserSelected => {
            catalog_list(user_selected(account, catalog).into_iter(), with_market)
        }
        Listing::Model => catalog_list(
            subscribed(account, catalog)
                .into_iter()
                .filter(|m| m.subtype == "model"),
            with_market,
        ),
        Listing::Group(group) => {
            let in_group =
                |m: &IndicatorMeta| m.groups.iter().any(|g| g.eq_ignore_ascii_case(group));
            if !catalog.iter().any(|m| !m.internal && in_group(m)) {
                return Err(Error::Unknown(crate::FieldError::new(
                    "group",
                    format!("'{group}' is not a known group"),
                )));
            }
            catalog_list(
                subscribed(account, catalog)
                    .into_iter()
                    .filter(|m| in_group(m)),
                with_market,
            )
        }
    };
    Ok(json)
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
        .ok_or_else(|| Error::unknown_symbol("symbol", code))?;
    if !may_read(account, m) {
        return Err(Error::NotSubscribed(format!(
            "not subscribed to '{code}': add it to your selections or upgrade the data plan"
        )));
    }
    Ok(m)
}
