//! Running a prepared strategy: data loaded and aligned, the engine run off the
//! async reactor, and the result object of 2.11.

use super::answers::BacktestResult;
use super::csv::Upload;
use super::params::{BtFrequency, RuleType};
use super::prepare::{Block, Prepared};
use super::signals::Origin;
use chrono::{NaiveDate, NaiveDateTime};
use engine::Bars;
use engine::backtest::{ExitReason, Report, Settings};
use engine::strategy::{self, BlockKind, Source};
use engine::workspace::Workspace;
use platform::PortError;
use platform::marketdata::{IndicatorSeries, MarketData};
use platform::worker::JobError;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Readings aligned to bars: each bar takes the latest reading dated on or
/// before its session date (before it, for intraday bars, whose day's reading
/// is not known yet); NaN before the first reading.
pub fn align(series: &IndicatorSeries, bars: &[NaiveDateTime], intraday: bool) -> Vec<f64> {
    let mut out = Vec::with_capacity(bars.len());
    let mut j = 0;
    for t in bars {
        let known = |r: &NaiveDateTime| {
            if intraday {
                r.date() < t.date()
            } else {
                r.date() <= t.date()
            }
        };
        while j < series.time.len() && known(&series.time[j]) {
            j += 1;
        }
        out.push(if j == 0 {
            f64::NAN
        } else {
            series.close[j - 1]
        });
    }
    out
}

fn engine_block(b: &Block, sources: &[Source]) -> strategy::Block {
    let conditions = b
        .conditions
        .iter()
        .zip(sources)
        .map(|(c, s)| strategy::Condition {
            source: s.clone(),
            transform: c.compiled.transform.as_ref().map(|t| t.1),
            op: c.compiled.op,
            comparison: c.compiled.comparison.clone(),
        })
        .collect();
    let kind = match b.rule_type {
        RuleType::SingleCondition => BlockKind::Single,
        RuleType::Scoring => BlockKind::Scoring {
            threshold: b.score_threshold.unwrap_or(b.conditions.len()),
        },
        RuleType::TimeOrder => BlockKind::TimeOrder {
            window: b.signals_in_market,
        },
        RuleType::RiskControlOnly => BlockKind::Never,
    };
    strategy::Block {
        kind,
        conditions,
        delay_bars: b.delay_bars,
    }
}

/// Market data strategies read, each piece loaded once: a batch chunk shares
/// one `Inputs` among its strategies, so a grid loads its bars once.
#[derive(Default)]
pub struct Inputs {
    bars: HashMap<(String, engine::Frequency, NaiveDate, bool), Arc<Bars>>,
    /// Indicator readings aligned to a set of bars (by that set's address,
    /// kept alive by `bars`).
    series: HashMap<(String, usize), Arc<Vec<f64>>>,
    benchmark: HashMap<(String, NaiveDate, NaiveDate), f64>,
}

/// One strategy ready for the engine.
pub struct Planned {
    pub bars: Arc<Bars>,
    pub entry: strategy::Block,
    pub exit: strategy::Block,
    pub settings: Settings,
    /// The benchmark's close-to-close change over the window, in percent.
    pub benchmark_return: f64,
}

async fn sources(
    market: &dyn MarketData,
    b: &Block,
    bars: &Arc<Bars>,
    csv: Option<&Upload>,
    intraday: bool,
    inputs: &mut Inputs,
) -> Result<Vec<Source>, PortError> {
    let mut out = Vec::new();
    for c in &b.conditions {
        out.push(match &c.resolved.origin {
            _ if c.compiled.close_is_signal => Source::Column(engine::strategy::Column::Close),
            Origin::Column(col) => Source::Column(*col),
            Origin::Technical(t) => Source::Technical(*t),
            Origin::CsvColumn(i) => Source::Series(Arc::new(
                csv.map(|u| u.signals[*i][..bars.len()].to_vec())
                    .unwrap_or_default(),
            )),
            Origin::Indicator(code) => {
                let key = (code.clone(), Arc::as_ptr(bars) as usize);
                if !inputs.series.contains_key(&key) {
                    let s = market.indicator_series(code).await?;
                    let aligned = Arc::new(align(&s, &bars.time, intraday));
                    inputs.series.insert(key.clone(), aligned);
                }
                Source::Series(inputs.series[&key].clone())
            }
        });
    }
    Ok(out)
}

/// A prepared strategy's entry and exit rules over another symbol's daily
/// `bars` (a portfolio evaluates one strategy on each of its symbols; the
/// readings of an indicator are aligned once per set of bars).
pub async fn rule_blocks(
    market: &dyn MarketData,
    entry: &Block,
    exit: &Block,
    bars: &Arc<Bars>,
    inputs: &mut Inputs,
) -> Result<(strategy::Block, strategy::Block), PortError> {
    let e = sources(market, entry, bars, None, false, inputs).await?;
    let x = sources(market, exit, bars, None, false, inputs).await?;
    Ok((engine_block(entry, &e), engine_block(exit, &x)))
}

/// Loads what the strategy reads (from `inputs` when already there) and
/// builds its engine rules and settings.
pub async fn plan(
    market: &dyn MarketData,
    prepared: &Prepared,
    inputs: &mut Inputs,
) -> Result<Planned, PortError> {
    let ready = Ready {
        params: prepared.params(),
        entry: &prepared.entry,
        exit: &prepared.exit,
        end: prepared.end_date(),
    };
    plan_ready(market, ready, inputs).await
}

/// What [`plan`] reads of a prepared strategy: a grid's points prepared as
/// typed values (`batch::typed`) are planned from these without a whole
/// [`Prepared`] each.
#[derive(Clone, Copy)]
pub struct Ready<'a> {
    pub params: &'a super::params::StrategyParams,
    pub entry: &'a Block,
    pub exit: &'a Block,
    /// The last date the backtest reads.
    pub end: NaiveDate,
}

/// [`plan`] of its parts.
pub async fn plan_ready(
    market: &dyn MarketData,
    ready: Ready<'_>,
    inputs: &mut Inputs,
) -> Result<Planned, PortError> {
    let p = ready.params;
    let traded = platform::marketdata::AsTraded(market);
    let market: &dyn MarketData = if p.adjusted { market } else { &traded };
    let end = ready.end;
    let intraday = p.frequency == BtFrequency::Hourly;
    let bars = match &p.csv {
        Some(upload) => Arc::new(upload.bars.slice_dates(None, Some(end))),
        None => {
            let key = (p.symbol.clone(), p.frequency.engine(), end, p.adjusted);
            match inputs.bars.get(&key) {
                Some(b) => b.clone(),
                None => {
                    let b = Arc::new(
                        market
                            .bars(&p.symbol, p.frequency.engine(), None, Some(end))
                            .await?,
                    );
                    inputs.bars.insert(key, b.clone());
                    b
                }
            }
        }
    };
    let csv = p.csv.as_deref();
    let entry_sources = sources(market, ready.entry, &bars, csv, intraday, inputs).await?;
    let exit_sources = sources(market, ready.exit, &bars, csv, intraday, inputs).await?;
    let start = bars.time.partition_point(|t| t.date() < p.start_date);
    let window = (start < bars.len()).then(|| (bars.date(start), bars.date(bars.len() - 1)));
    let benchmark_return = match window {
        None => 0.0,
        Some((first, last)) => {
            let key = (p.benchmark.clone(), first, last);
            match inputs.benchmark.get(&key) {
                Some(r) => *r,
                None => {
                    let bench = market.daily(&p.benchmark).await?;
                    let r = benchmark_change(&bench, first, last);
                    inputs.benchmark.insert(key, r);
                    r
                }
            }
        }
    };
    Ok(Planned {
        entry: engine_block(ready.entry, &entry_sources),
        exit: engine_block(ready.exit, &exit_sources),
        settings: Settings {
            direction: p.direction,
            trade_price: p.trade_price,
            capital_alloc: p.capital_alloc,
            commission: p.commission,
            slippage: p.slippage,
            risk: p.risk,
            bars_per_year: p.frequency.engine().bars_per_year(),
            start,
        },
        bars,
        benchmark_return,
    })
}

/// Why a trade closed, as the result's `Exit Reason` names it.
pub fn exit_reason(r: ExitReason) -> &'static str {
    match r {
        ExitReason::Signal => "Signal",
        ExitReason::StopLoss => "Stop Loss",
        ExitReason::TakeProfit => "Take Profit",
        ExitReason::MaxHolding => "Max Holding",
        ExitReason::EndOfData => "Open",
    }
}

/// The benchmark's change in percent between the backtest's first and last
/// bar dates: its closes of the last session on or before each (its first
/// close when it starts later), so the two returns cover the same window
/// whatever either series' range.
pub fn benchmark_change(bench: &Bars, first: NaiveDate, last: NaiveDate) -> f64 {
    let on_or_before = |d: NaiveDate| bench.time.partition_point(|t| t.date() <= d);
    let (a, b) = (on_or_before(first).max(1) - 1, on_or_before(last));
    if bench.is_empty() || b == 0 || b - 1 <= a {
        return 0.0;
    }
    (bench.close[b - 1] / bench.close[a] - 1.0) * 100.0
}

/// The engine's run of a planned strategy; `ws` holds its bars' signals
/// computed so far (pure and synchronous).
pub fn report(planned: &Planned, ws: &mut Workspace) -> Report {
    report_keeping(planned, ws, None)
}

/// [`report`], with the run's per-bar returns appended to `returns` (a
/// batch's statistics keep them).
pub fn report_keeping(
    planned: &Planned,
    ws: &mut Workspace,
    returns: Option<&mut Vec<f64>>,
) -> Report {
    let (e, x) = (ws.block(&planned.entry), ws.block(&planned.exit));
    engine::backtest::simulate_keeping(&planned.bars, &e, &x, &planned.settings, returns)
}

fn day(t: NaiveDateTime) -> String {
    t.date().format("%Y-%m-%d").to_string()
}

/// Runs the strategy and returns the result object (2.11 plus warnings).
pub async fn execute(market: &dyn MarketData, prepared: &Prepared) -> Result<Value, JobError> {
    let planned = plan(market, prepared, &mut Inputs::default()).await?;
    let (report, planned) = tokio::task::spawn_blocking(move || {
        let r = report(&planned, &mut Workspace::new(&planned.bars));
        (r, planned)
    })
    .await
    .map_err(|e| JobError::Permanent(format!("internal error while running the backtest: {e}")))?;
    serde_json::to_value(answer(prepared, &planned, &report))
        .map_err(|e| JobError::Permanent(format!("result encoding: {e}")))
}

/// The result object of 2.11 (plus warnings) of a run.
pub fn answer(prepared: &Prepared, planned: &Planned, report: &Report) -> BacktestResult {
    let p = prepared.params();
    let end = prepared.end_date();
    let intraday = p.frequency == BtFrequency::Hourly;
    let bars = &planned.bars;
    let start = planned.settings.start;
    let mut warnings = prepared.warnings.clone();
    let window = &bars.time[start.min(bars.len())..];
    if window.is_empty() {
        warnings.push(format!(
            "no {} bars of {} between {} and {end}",
            p.frequency.as_str(),
            p.symbol,
            p.start_date
        ));
    }
    let open = report.trades.last().is_some_and(|t| t.is_open());
    if open {
        warnings.push(format!(
            "the last trade is still open at {}; it is closed at that bar's close for the metrics",
            day(bars.time[bars.len() - 1])
        ));
    }
    let defaults_applied = prepared.defaults_applied();
    if let Some(w) = default_holding_warning(&defaults_applied, report) {
        warnings.push(w);
    }
    let m = &report.metrics;
    let entries: Vec<String> = report
        .trades
        .iter()
        .map(|t| day(bars.time[t.entry_bar]))
        .collect();
    let exits: Vec<String> = report
        .trades
        .iter()
        .map(|t| day(bars.time[t.exit_bar]))
        .collect();
    let times = |bar: fn(&engine::backtest::Trade) -> usize| -> Vec<String> {
        report
            .trades
            .iter()
            .map(|t| bars.time[bar(t)].format("%Y-%m-%dT%H:%M:%S").to_string())
            .collect()
    };
    BacktestResult {
        symbol: p.symbol.clone(),
        frequency: p.frequency.as_str(),
        total_trades: m.total_trades,
        total_positive: m.positive,
        total_negative: m.negative,
        win_rate: m.win_rate,
        average_win: m.average_win,
        average_loss: m.average_loss,
        each_return: report.trades.iter().map(|t| t.ret * 100.0).collect(),
        total_return: m.total_return,
        buy_hold_gain: m.buy_hold,
        cagr: m.cagr,
        sharpe: m.sharpe,
        sortino: m.sortino,
        annual_volatility: m.annual_volatility * 100.0,
        calmar: m.calmar,
        max_drawdown: m.max_drawdown,
        drawdown_period: m.drawdown_period,
        time_in_market: m.time_in_market,
        last_entry_date: entries.last().cloned(),
        last_exit_date: exits.last().cloned(),
        entry_date: entries,
        exit_date: exits,
        bt_end_date: window
            .last()
            .map(|t| day(*t))
            .unwrap_or_else(|| end.to_string()),
        exit_reason: report
            .trades
            .iter()
            .map(|t| exit_reason(t.reason))
            .collect(),
        open_trade: open,
        initial_capital: p.capital,
        final_capital: p.capital * (1.0 + m.total_return / 100.0),
        benchmark: p.benchmark.clone(),
        benchmark_return: planned.benchmark_return,
        defaults_applied,
        warnings,
        entry_time: intraday.then(|| times(|t| t.entry_bar)),
        exit_time: intraday.then(|| times(|t| t.exit_bar)),
    }
}

/// When the request left `risk_control` out and its default's maximum
/// holding closed trades: how many, and what to send instead. The spec's
/// default `//21` ends every trade after 21 bars, which a strategy with
/// exit signals rarely means.
pub fn default_holding_warning(defaults: &Map<String, Value>, report: &Report) -> Option<String> {
    let default = defaults.get("risk_control")?.as_str()?;
    let closed = report
        .trades
        .iter()
        .filter(|t| t.reason == ExitReason::MaxHolding)
        .count();
    (closed > 0).then(|| {
        format!(
            "risk_control was not sent, and its default '{default}' closed {closed} of {} trades at the maximum holding; send risk_control '//' for no risk control, or the limits you mean",
            report.trades.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
    }

    #[test]
    fn readings_carry_forward_and_intraday_waits_a_day() {
        let s = IndicatorSeries {
            time: vec![t("2024-01-05 00:00"), t("2024-01-12 00:00")],
            close: vec![1.0, 2.0],
            sentiment: vec![None, None],
        };
        let bars = [
            t("2024-01-04 00:00"),
            t("2024-01-05 00:00"),
            t("2024-01-11 00:00"),
            t("2024-01-12 00:00"),
        ];
        let a = align(&s, &bars, false);
        assert!(a[0].is_nan());
        assert_eq!(&a[1..], &[1.0, 1.0, 2.0]);
        let bars = [t("2024-01-05 10:00"), t("2024-01-08 10:00")];
        let a = align(&s, &bars, true);
        assert!(a[0].is_nan());
        assert_eq!(a[1], 1.0);
    }
}
