//! The indicator list (2.13) and metadata (2.14) of the backtest service:
//! which catalog entries a strategy can name as a Sentiment signal.

use crate::error::{Error, Result};
use platform::marketdata::IndicatorMeta;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Indicator list item (2.13).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct IndicatorListItem {
    pub chart_name: String,
    pub url: String,
    pub market_symbol: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub updated: String,
}

/// Indicator metadata (2.14), keyed by indicator code.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct IndicatorMetadata {
    pub sentiment: String,
    pub description: String,
    pub opt_extreme: f64,
    pub pess_extreme: f64,
    pub contrary: String,
    pub premium: String,
    pub chart_type: String,
    pub updated: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct MetadataByCode(pub BTreeMap<String, IndicatorMetadata>);

/// The `type` filter's values.
pub const TYPES: [&str; 4] = ["optix", "trend", "reltrend", "other"];

/// The list's filters: a part of the name (lower case), a type (lower
/// case) and a market symbol; they combine.
#[derive(Debug, Default, Clone)]
pub struct ListFilter {
    pub q: Option<String>,
    pub kind: Option<String>,
    pub symbol: Option<String>,
}

impl ListFilter {
    pub fn is_empty(&self) -> bool {
        self.q.is_none() && self.kind.is_none() && self.symbol.is_none()
    }
}

/// The catalog prepared for listing: each public entry's JSON written once,
/// with lower-cased names for matching.
pub struct Index {
    catalog: Arc<Vec<IndicatorMeta>>,
    entries: Vec<(String, usize, String)>,
}

/// The index of `catalog`, made once per catalog and kept in `memo` (the
/// market data store's).
pub fn index(memo: &platform::memo::Memo, catalog: Arc<Vec<IndicatorMeta>>) -> Arc<Index> {
    let source = catalog.clone();
    memo.get_or_make("indicator index", &source, move || {
        let index = build(catalog);
        let bytes = index
            .entries
            .iter()
            .map(|(n, _, j)| n.len() + j.len() + 64)
            .sum();
        (index, bytes)
    })
}

fn build(catalog: Arc<Vec<IndicatorMeta>>) -> Index {
    let entries = catalog
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.internal)
        .map(|(i, m)| {
            let item = IndicatorListItem {
                chart_name: m.chart_name.clone(),
                url: m.url.clone(),
                market_symbol: m.market_symbol.clone(),
                kind: m.kind.clone(),
                updated: m.updated.clone(),
            };
            let json = serde_json::to_string(&item).expect("list items serialize");
            (m.chart_name.to_lowercase(), i, json)
        })
        .collect();
    Index { catalog, entries }
}

/// The JSON array of the entries that pass `filter`.
pub fn list(idx: &Index, filter: &ListFilter) -> String {
    let (q, kind, symbol) = (
        filter.q.as_deref(),
        filter.kind.as_deref(),
        filter.symbol.as_deref(),
    );
    let mut body = String::with_capacity(idx.entries.len() * 120);
    body.push('[');
    for (name, i, item) in &idx.entries {
        let m = &idx.catalog[*i];
        if q.is_some_and(|q| !name.contains(q))
            || kind.is_some_and(|k| m.kind != k)
            || symbol.is_some_and(|s| !m.market_symbol.eq_ignore_ascii_case(s))
        {
            continue;
        }
        if body.len() > 1 {
            body.push(',');
        }
        body.push_str(item);
    }
    body.push(']');
    body
}

/// The metadata of the public indicator `code`.
pub fn metadata(catalog: &[IndicatorMeta], code: &str) -> Result<MetadataByCode> {
    let m = catalog
        .iter()
        .find(|m| m.url == code && !m.internal)
        .ok_or_else(|| Error::NotFound(format!("indicator '{code}' not found")))?;
    let metadata = IndicatorMetadata {
        sentiment: m.sentiment.clone(),
        description: m.description.clone(),
        opt_extreme: m.opt_extreme,
        pess_extreme: m.pess_extreme,
        contrary: if m.contrary { "1.0" } else { "0" }.into(),
        premium: if m.premium { "1" } else { "0" }.into(),
        chart_type: m.chart_type.clone(),
        updated: m.updated.clone(),
    };
    Ok(MetadataByCode([(m.url.clone(), metadata)].into()))
}
