//! What a backtest's report page draws: the window's closes, the equity
//! curve and its drawdown, bar by bar, and each trade's fills. The run is
//! repeated from the task's parameters (a few milliseconds), so tasks keep
//! only their result; the metrics and trade list on the page are the
//! task's own.

use super::params::StrategyParams;
use super::prepare::{Prepared, prepare_with};
use super::run::{Inputs, Planned, plan, report};
use engine::backtest::Report;
use engine::workspace::Workspace;
use platform::marketdata::MarketData;
use serde::Serialize;
use serde_json::Value;
#[cfg(feature = "openapi")]
use utoipa::ToSchema;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ChartTrade {
    /// Entry and exit bars' times, `YYYY-MM-DD` (daily) or `YYYY-MM-DDTHH:MM:SS`.
    pub entry_time: String,
    pub exit_time: String,
    pub entry_price: f64,
    pub exit_price: f64,
    /// After costs, percent.
    pub return_pct: f64,
}

/// The series of a report page, one value per bar of the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Chart {
    pub symbol: String,
    pub time: Vec<String>,
    pub close: Vec<f64>,
    /// Capital at each bar's close (the initial capital grown by the trades).
    pub equity: Vec<f64>,
    /// Percent below the highest equity so far (0 or negative).
    pub drawdown: Vec<f64>,
    pub trades: Vec<ChartTrade>,
}

pub(super) fn stamp(t: chrono::NaiveDateTime, intraday: bool) -> String {
    if intraday {
        t.format("%Y-%m-%dT%H:%M:%S").to_string()
    } else {
        t.date().format("%Y-%m-%d").to_string()
    }
}

/// The chart of a stored backtest task: its parameters, and for CSV mode
/// its stored upload.
pub async fn task_chart(
    market: &dyn MarketData,
    uploads: &platform::uploads::Uploads,
    task: &platform::tasks::Task,
) -> crate::Result<Chart> {
    let upload = super::task_upload(uploads, task, false).await?;
    chart(market, &task.params, upload).await
}

/// The chart of the strategy in `params` (a stored task's parameters), on
/// `upload` in CSV mode.
pub async fn chart(
    market: &dyn MarketData,
    params: &Value,
    upload: Option<std::sync::Arc<super::csv::Upload>>,
) -> crate::Result<Chart> {
    rerun(market, params, upload, |p, planned, r| {
        let intraday = p.frequency == super::params::BtFrequency::Hourly;
        let capital = p.capital;
        let symbol = p.symbol.clone();
        let bars = &planned.bars;
        let start = planned.settings.start.min(bars.len());
        let curve = engine::backtest::equity_curve(bars, &r.trades, &planned.settings);
        let mut peak = f64::MIN;
        let drawdown = curve
            .iter()
            .map(|e| {
                peak = peak.max(*e);
                (e / peak - 1.0) * 100.0
            })
            .collect();
        let last = bars.len().saturating_sub(1);
        Chart {
            symbol,
            time: bars.time[start..]
                .iter()
                .map(|t| stamp(*t, intraday))
                .collect(),
            close: bars.close[start..].to_vec(),
            equity: curve.iter().map(|e| e * capital).collect(),
            drawdown,
            trades: r
                .trades
                .iter()
                .map(|t| ChartTrade {
                    entry_time: stamp(bars.time[t.entry_bar.min(last)], intraday),
                    exit_time: stamp(bars.time[t.exit_bar.min(last)], intraday),
                    entry_price: t.entry_price,
                    exit_price: t.exit_price,
                    return_pct: t.ret * 100.0,
                })
                .collect(),
        }
    })
    .await
}

/// The strategy in `params` (on `upload` in CSV mode), parsed and its data
/// loaded: ready to run again.
pub(super) async fn load(
    market: &dyn MarketData,
    params: &Value,
    upload: Option<std::sync::Arc<super::csv::Upload>>,
) -> crate::Result<(Prepared, Planned)> {
    let prepared = prepare_with(market, params, upload).await?;
    let planned = plan(market, &prepared, &mut Inputs::default()).await?;
    Ok((prepared, planned))
}

/// Runs the loaded strategy again: its report.
pub(super) fn run_again(planned: &Planned) -> Report {
    report(planned, &mut Workspace::new(&planned.bars))
}

/// The strategy in `params` run again (on `upload` in CSV mode), and `f`
/// of its run on a blocking thread.
pub(super) async fn rerun<T: Send + 'static>(
    market: &dyn MarketData,
    params: &Value,
    upload: Option<std::sync::Arc<super::csv::Upload>>,
    f: impl FnOnce(&StrategyParams, &Planned, &Report) -> T + Send + 'static,
) -> crate::Result<T> {
    let (prepared, planned) = load(market, params, upload).await?;
    tokio::task::spawn_blocking(move || f(prepared.params(), &planned, &run_again(&planned)))
        .await
        .map_err(|e| platform::PortError::internal(e).into())
}
