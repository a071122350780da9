//! What a pattern-match report draws: the template, the best matches'
//! closes to lay over it, and for a single symbol its closes under the
//! trades. Read again from the market data for the task's parameters; the
//! matches, metrics and trades on the page are the task's own result.

use super::requests::{CpmParams, Mode, TemplateSpec};
use super::{Prepared, prepare, series};
use crate::error::Result;
use chrono::NaiveDate;
use engine::Bars;
use platform::marketdata::MarketData;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Matches laid over the template, best first.
pub const OVERLAID: usize = 10;

/// One match's closes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ChartWindow {
    pub symbol: String,
    pub start: String,
    pub end: String,
    pub close: Vec<f64>,
}

/// The series of a pattern-match report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct CpmChart {
    pub symbol: String,
    /// The template by window length in bars: the symbol's closes over the
    /// template's dates, or the predefined shape drawn at each length.
    pub templates: BTreeMap<usize, Vec<f64>>,
    /// The best matches (at most [`OVERLAID`]), in the answer's order.
    pub windows: Vec<ChartWindow>,
    /// Single-symbol searches: the bars searched, for the trades' chart.
    pub time: Vec<String>,
    pub close: Vec<f64>,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Found {
    #[serde(default)]
    Symbol: Option<String>,
    StartDate: NaiveDate,
    EndDate: NaiveDate,
}

fn stamp(bars: &Bars, i: usize) -> String {
    bars.date(i).format("%Y-%m-%d").to_string()
}

/// The chart of an answer: `params` the request, `result` its answer as JSON.
pub async fn chart(
    market: &dyn MarketData,
    params: &CpmParams,
    mode: Mode,
    result: &Value,
) -> Result<CpmChart> {
    let p: Prepared = prepare(market, params, mode).await?;
    let found: Vec<Found> =
        serde_json::from_value(result["data"]["patterns"].clone()).unwrap_or_default();
    let mut windows = Vec::new();
    for f in found.iter().take(OVERLAID) {
        let symbol = f.Symbol.clone().unwrap_or_else(|| p.query.symbol.clone());
        let bars = if symbol == p.query.symbol {
            p.series.clone()
        } else {
            series(market, &symbol, p.query.freq).await?
        };
        let a = bars.time.partition_point(|t| t.date() < f.StartDate);
        let b = bars.time.partition_point(|t| t.date() <= f.EndDate);
        windows.push(ChartWindow {
            symbol,
            start: f.StartDate.to_string(),
            end: f.EndDate.to_string(),
            close: bars.close[a..b.max(a)].to_vec(),
        });
    }
    let templates = match (&p.query.template, p.template_bars) {
        (_, Some((a, b))) => BTreeMap::from([(b + 1 - a, p.series.close[a..=b].to_vec())]),
        (TemplateSpec::Pattern(shape), None) => windows
            .iter()
            .map(|w| (w.close.len(), shape.template(w.close.len())))
            .collect(),
        (TemplateSpec::Range { .. }, None) => BTreeMap::new(),
    };
    let single = !p.is_universe_search();
    let bars = &p.series;
    Ok(CpmChart {
        symbol: p.query.symbol.clone(),
        templates,
        windows,
        time: if single {
            (0..bars.len()).map(|i| stamp(bars, i)).collect()
        } else {
            Vec::new()
        },
        close: if single {
            bars.close.clone()
        } else {
            Vec::new()
        },
    })
}
