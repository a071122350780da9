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
use platform::marketdata::columns::Column;
use serde::Serialize;
use serde_json::Value;
#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// A trade in the results glossary's columns (docs/results.md): returns
/// and excursions are fractions (0.05 is 5 %), money in the capital's
/// currency.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ChartTrade {
    /// Entry and exit bars' times, `YYYY-MM-DD` (daily) or
    /// `YYYY-MM-DDTHH:MM:SS`; a trade still open, the last bar's.
    pub entry_time: String,
    pub exit_time: String,
    pub symbol: String,
    /// `long` or `short`.
    pub side: &'static str,
    /// Units bought (sold short), positive: the equity committed at the
    /// entry (`capital_alloc` of it) over the entry fill.
    pub size: f64,
    /// The fills after slippage (slippage moves both against the trader);
    /// a trade still open is closed at the last close for the metrics.
    pub entry_price: f64,
    pub exit_price: f64,
    /// Commission of both sides, in money.
    pub fees: f64,
    /// Profit after slippage and commission, in money: size x (exit -
    /// entry price, the other way short) - fees.
    pub profit: f64,
    /// The profit over the value committed at the entry: a fraction
    /// (2.11's `Each Return` over 100).
    #[serde(rename = "return")]
    pub ret: f64,
    /// Bars from the entry fill to the exit fill.
    pub bars_held: usize,
    /// `Signal`, `Stop Loss`, `Take Profit`, `Max Holding`, or `Open`
    /// (still held at the last bar, closed there for the metrics).
    pub exit_reason: &'static str,
    /// The worst move against the position while held, a fraction of the
    /// entry fill (`entry_price`; 0 or negative): the fills and the held
    /// bars' lows (highs, short) from the entry fill to the exit fill.
    pub mae: f64,
    /// The best move for it, a fraction (0 or positive).
    pub mfe: f64,
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
    /// The equity below its highest so far, a fraction (0 or negative).
    pub drawdown: Vec<f64>,
    /// Units held at the bar's close (negative short, 0 flat).
    pub position: Vec<f64>,
    /// Cash at the bar's close: equity less the position's value.
    pub cash: Vec<f64>,
    /// The equity's return from the bar before, a fraction (none on the
    /// first bar): the returns the metrics are computed from.
    pub daily_return: Vec<Option<f64>>,
    /// The benchmark (`benchmark`, default SPX) bought with the initial
    /// capital at the window's first close: its close on or before each
    /// bar's date over that first one (its first close where it starts
    /// later), times the capital.
    pub benchmark: Vec<f64>,
    /// The benchmark's symbol.
    pub benchmark_symbol: String,
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
    let (prepared, planned) = load(market, params, upload).await?;
    let bench = market.daily(&prepared.params().benchmark).await?;
    tokio::task::spawn_blocking(move || {
        let report = run_again(&planned);
        drawn(prepared.params(), &planned, &report, &bench)
    })
    .await
    .map_err(|e| platform::PortError::internal(e).into())
}

/// The chart of a run (pure).
fn drawn(p: &StrategyParams, planned: &Planned, r: &Report, bench: &engine::Bars) -> Chart {
    use engine::backtest::ledger::{holdings, trade_ledger};
    let intraday = p.frequency == super::params::BtFrequency::Hourly;
    let capital = p.capital;
    let bars = &planned.bars;
    let s = &planned.settings;
    let start = s.start.min(bars.len());
    let curve = engine::backtest::equity_curve(bars, &r.trades, s);
    let mut peak = f64::MIN;
    let drawdown = curve
        .iter()
        .map(|e| {
            peak = peak.max(*e);
            e / peak - 1.0
        })
        .collect();
    let daily_return = std::iter::once(None)
        .chain(curve.windows(2).map(|w| Some(w[1] / w[0] - 1.0)))
        .take(curve.len())
        .collect();
    let held = holdings(bars, &r.trades, s);
    let ledger = trade_ledger(bars, &r.trades, s);
    let last = bars.len().saturating_sub(1);
    let side = match s.direction {
        engine::backtest::Direction::Long => "long",
        engine::backtest::Direction::Short => "short",
    };
    Chart {
        symbol: p.symbol.clone(),
        time: bars.time[start..]
            .iter()
            .map(|t| stamp(*t, intraday))
            .collect(),
        close: bars.close[start..].to_vec(),
        equity: curve.iter().map(|e| e * capital).collect(),
        drawdown,
        position: held.units.iter().map(|u| u * capital).collect(),
        cash: held.cash.iter().map(|c| c * capital).collect(),
        daily_return,
        benchmark: benchmark_equity(bench, &bars.time[start..], capital),
        benchmark_symbol: p.benchmark.clone(),
        trades: r
            .trades
            .iter()
            .zip(&ledger)
            .map(|(t, l)| ChartTrade {
                entry_time: stamp(bars.time[t.entry_bar.min(last)], intraday),
                exit_time: stamp(bars.time[t.exit_bar.min(last)], intraday),
                symbol: p.symbol.clone(),
                side,
                size: l.units * capital,
                entry_price: l.entry_fill,
                exit_price: l.exit_fill,
                fees: l.fees * capital,
                profit: l.profit * capital,
                ret: t.ret,
                bars_held: l.bars_held,
                exit_reason: super::run::exit_reason(t.reason),
                mae: l.mae,
                mfe: l.mfe,
            })
            .collect(),
    }
}

/// The benchmark bought with `capital` at the first of `times`: at each
/// time, its last close on or before that date over the one of the first
/// (its first close where it starts later), as `Benchmark Return (%)`
/// takes them.
fn benchmark_equity(
    bench: &engine::Bars,
    times: &[chrono::NaiveDateTime],
    capital: f64,
) -> Vec<f64> {
    let on_or_before = |d: chrono::NaiveDate| {
        let k = bench.time.partition_point(|t| t.date() <= d);
        bench.close[k.max(1) - 1]
    };
    match times.first() {
        Some(first) if !bench.is_empty() => {
            let base = on_or_before(first.date());
            times
                .iter()
                .map(|t| capital * on_or_before(t.date()) / base)
                .collect()
        }
        _ => vec![capital; times.len()],
    }
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

/// One bar of the equity export: the chart's series at that bar.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct EquityRow {
    pub time: String,
    pub close: f64,
    pub equity: f64,
    pub drawdown: f64,
    pub position: f64,
    pub cash: f64,
    pub daily_return: Option<f64>,
    pub benchmark: f64,
}

impl Chart {
    /// The series as rows, one per bar.
    pub fn equity_rows(&self) -> Vec<EquityRow> {
        (0..self.time.len())
            .map(|i| EquityRow {
                time: self.time[i].clone(),
                close: self.close[i],
                equity: self.equity[i],
                drawdown: self.drawdown[i],
                position: self.position[i],
                cash: self.cash[i],
                daily_return: self.daily_return[i],
                benchmark: self.benchmark[i],
            })
            .collect()
    }

    /// The series as a table: `time` (dates, or times for intraday bars)
    /// then the JSON rows' fields.
    pub fn equity_table(&self) -> Vec<(String, Column)> {
        let number = |v: &[f64]| Column::Number(v.iter().map(|x| Some(*x)).collect());
        vec![
            ("time".into(), times(&self.time)),
            ("close".into(), number(&self.close)),
            ("equity".into(), number(&self.equity)),
            ("drawdown".into(), number(&self.drawdown)),
            ("position".into(), number(&self.position)),
            ("cash".into(), number(&self.cash)),
            (
                "daily_return".into(),
                Column::Number(self.daily_return.clone()),
            ),
            ("benchmark".into(), number(&self.benchmark)),
        ]
    }

    /// The trades as a table, the JSON trades' fields as columns.
    pub fn trade_table(&self) -> Vec<(String, Column)> {
        let t = &self.trades;
        let number =
            |f: fn(&ChartTrade) -> f64| Column::Number(t.iter().map(|x| Some(f(x))).collect());
        let entry: Vec<String> = t.iter().map(|x| x.entry_time.clone()).collect();
        let exit: Vec<String> = t.iter().map(|x| x.exit_time.clone()).collect();
        let text = |f: fn(&ChartTrade) -> &str| {
            Column::Text(t.iter().map(|x| Some(f(x).to_string())).collect())
        };
        vec![
            ("entry_time".into(), times(&entry)),
            ("exit_time".into(), times(&exit)),
            ("symbol".into(), text(|x| &x.symbol)),
            ("side".into(), text(|x| x.side)),
            ("size".into(), number(|x| x.size)),
            ("entry_price".into(), number(|x| x.entry_price)),
            ("exit_price".into(), number(|x| x.exit_price)),
            ("fees".into(), number(|x| x.fees)),
            ("profit".into(), number(|x| x.profit)),
            ("return".into(), number(|x| x.ret)),
            (
                "bars_held".into(),
                Column::Integer(t.iter().map(|x| Some(x.bars_held as i64)).collect()),
            ),
            ("exit_reason".into(), text(|x| x.exit_reason)),
            ("mae".into(), number(|x| x.mae)),
            ("mfe".into(), number(|x| x.mfe)),
        ]
    }
}

/// Stamps as [`stamp`] writes them, as dates (daily) or times (intraday).
fn times(stamps: &[String]) -> Column {
    if stamps.iter().any(|s| s.len() > 10) {
        Column::Time(
            stamps
                .iter()
                .map(|s| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S").ok())
                .collect(),
        )
    } else {
        Column::Date(
            stamps
                .iter()
                .map(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
                .collect(),
        )
    }
}

/// Query of the trades and equity exports.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct ExportQuery {
    /// `json` (rows), `csv`, `parquet` or `arrow`; without it, `Accept`
    /// chooses (JSON by default).
    #[cfg_attr(
        feature = "openapi",
        param(pattern = "^(json|csv|parquet|arrow)$", example = "parquet")
    )]
    pub format: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trades_table_has_the_json_trades_fields_in_their_order() {
        let trade = ChartTrade {
            entry_time: "2024-01-02".into(),
            exit_time: "2024-01-09".into(),
            symbol: "SPX".into(),
            side: "short",
            size: 2.0,
            entry_price: 100.0,
            exit_price: 90.0,
            fees: 0.38,
            profit: 19.62,
            ret: 0.0981,
            bars_held: 5,
            exit_reason: "Signal",
            mae: -0.01,
            mfe: 0.12,
        };
        let chart = Chart {
            symbol: "SPX".into(),
            time: Vec::new(),
            close: Vec::new(),
            equity: Vec::new(),
            drawdown: Vec::new(),
            position: Vec::new(),
            cash: Vec::new(),
            daily_return: Vec::new(),
            benchmark: Vec::new(),
            benchmark_symbol: "SPX".into(),
            trades: vec![trade.clone()],
        };
        let table = chart.trade_table();
        let json = serde_json::to_value(&trade).unwrap();
        let fields: Vec<&String> = json.as_object().unwrap().keys().collect();
        let columns: Vec<&String> = table.iter().map(|(n, _)| n).collect();
        assert_eq!(columns, fields);
        let at = |name: &str| &table.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(*at("return"), Column::Number(vec![Some(0.0981)]));
        assert_eq!(*at("side"), Column::Text(vec![Some("short".into())]));
        assert_eq!(*at("bars_held"), Column::Integer(vec![Some(5)]));
    }
}
