//! The synchronous part of a portfolio run: each symbol's bars laid on the
//! universe's calendar, its rules evaluated once on its own bars, the
//! engine's simulation, and the answer.

use super::Prepared;
use super::answers::{
    Contribution, PortfolioOrder, PortfolioResult, PortfolioTrade, Relative, Series, WeightsAt,
};
use super::placement::Placement;
use super::request::{Fill, Order, ScoreParams, SelectParams, SizingParams, WeightingParams};
use chrono::NaiveDate;
use engine::fired::Fired;
use engine::portfolio::sizing::Sizing;
use engine::portfolio::{
    Common, Costs, ExitReason, Outcome, Panel, TradePrice, metrics, schedule, signals, weights,
};
use engine::workspace::Workspace;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// A technical figure on each symbol's own bars, laid on the calendar.
fn technical_scores(by: &ScoreParams, prepared: &Prepared, at: &[Placement]) -> Vec<Vec<f64>> {
    let n = prepared.calendar.len();
    let t = super::technical(by).expect("checked at submit");
    prepared
        .bars
        .par_iter()
        .zip(at)
        .map(|(b, at)| at.lay(&t.compute(b), n))
        .collect()
}

fn reason(r: ExitReason) -> &'static str {
    match r {
        ExitReason::Signal => "Signal",
        ExitReason::StopLoss => "Stop Loss",
        ExitReason::TakeProfit => "Take Profit",
        ExitReason::MaxHolding => "Max Holding",
        ExitReason::Rebalance => "Rebalance",
        ExitReason::Open => "Open",
    }
}

fn engine_score(by: &ScoreParams) -> weights::Score {
    match by {
        ScoreParams::Momentum(k) => weights::Score::Momentum(*k),
        ScoreParams::Volatility(k) => weights::Score::Volatility(*k),
        ScoreParams::Technical(_) => {
            unreachable!("technical figures are values: selections refuse them at submit")
        }
    }
}

/// Each symbol's bars laid on the calendar: what every run on one
/// universe and calendar shares (a grid's points compute it once).
pub struct Laid {
    at: Vec<Placement>,
    panel: Panel,
    /// The window's month ends and its last bar: where weights are kept.
    month_ends: Vec<usize>,
}

impl Laid {
    pub fn new(p: &Prepared) -> Laid {
        let n = p.calendar.len();
        let at: Vec<Placement> = p
            .bars
            .par_iter()
            .map(|b| Placement::of(b, &p.calendar))
            .collect();
        let (open, close) = p
            .bars
            .par_iter()
            .zip(&at)
            .map(|(b, at)| (at.lay(&b.open, n), at.lay(&b.close, n)))
            .unzip();
        let panel = Panel { open, close };
        let mut month_ends = schedule::bars(
            &p.calendar,
            p.start,
            schedule::Every::Month,
            schedule::On::Last,
        );
        month_ends.push(n - 1);
        Laid {
            at,
            panel,
            month_ends,
        }
    }
}

/// Where each symbol's entries and exits fire on the calendar (signal
/// mode): the strategy evaluated once per symbol on its own bars.
pub struct Firing {
    entries: Vec<Fired>,
    exits: Vec<Fired>,
}

impl Firing {
    /// `blocks` are the strategy's (entry, exit) rules per symbol.
    pub fn new(
        p: &Prepared,
        laid: &Laid,
        blocks: &[(engine::strategy::Block, engine::strategy::Block)],
    ) -> Firing {
        let n = p.calendar.len();
        let (entries, exits) = p
            .bars
            .par_iter()
            .zip(blocks)
            .zip(&laid.at)
            .map(|((b, (entry, exit)), at)| {
                let mut ws = Workspace::new(b);
                let (e, x) = (ws.block(entry), ws.block(exit));
                (at.fired(&e, n), at.fired(&x, n))
            })
            .unzip();
        Firing { entries, exits }
    }
}

/// Runs the simulation and builds the answer. `blocks` are the strategy's
/// (entry, exit) rules per symbol in signal mode.
pub fn run(
    p: &Prepared,
    blocks: &[(engine::strategy::Block, engine::strategy::Block)],
) -> PortfolioResult {
    let laid = Laid::new(p);
    let firing = p.strategy.as_ref().map(|_| Firing::new(p, &laid, blocks));
    let out = simulate(p, &laid, firing.as_ref(), true);
    answer(p, &out, &laid.month_ends, BARS_PER_YEAR)
}

/// Sessions a year, as the single backtest counts daily bars.
pub const BARS_PER_YEAR: f64 = 252.0;

/// The engine's run of a prepared portfolio on its laid bars (and, in
/// signal mode, its firing); with `snapshots`, its weights kept at month
/// ends.
pub fn simulate(p: &Prepared, laid: &Laid, firing: Option<&Firing>, snapshots: bool) -> Outcome {
    let q = &p.params;
    let panel = &laid.panel;
    let capital = q.capital.unwrap_or(100_000.0);
    let common = Common {
        capital,
        costs: Costs {
            commission: q.commission.unwrap_or(0.0),
            slippage: q.slippage.unwrap_or(0.0),
            fractional: q.fractional.unwrap_or(true),
            max_leverage: q.max_leverage.unwrap_or(1.0),
        },
        trade_price: match q.trade_price.unwrap_or(Fill::CurrentClose) {
            Fill::CurrentClose => TradePrice::CurrentClose,
            Fill::NextOpen => TradePrice::NextOpen,
            Fill::NextClose => TradePrice::NextClose,
        },
        start: p.start,
        snapshots: if snapshots {
            laid.month_ends.clone()
        } else {
            Vec::new()
        },
    };
    match (&q.signals, &q.weights, &p.strategy, firing) {
        (Some(s), _, Some((_, _, risk)), Some(firing)) => {
            let rank = s.rank_by.as_ref().map(|r| signals::Rank {
                by: match &r.by {
                    ScoreParams::Technical(_) => {
                        signals::RankBy::Values(technical_scores(&r.by, p, &laid.at))
                    }
                    by => signals::RankBy::Score(engine_score(by)),
                },
                descending: r.order.unwrap_or(Order::Descending) == Order::Descending,
            });
            let sizing = match s.sizing.clone().unwrap_or(SizingParams::Equal {}) {
                SizingParams::Equal {} => Sizing::Equal,
                SizingParams::FixedFraction { fraction } => Sizing::FixedFraction(fraction),
                SizingParams::InverseVolatility { bars } => Sizing::InverseVolatility { bars },
                SizingParams::VolatilityTarget {
                    bars,
                    annual_volatility,
                } => Sizing::VolatilityTarget {
                    bars,
                    annual: annual_volatility,
                },
                SizingParams::Kelly { cap, min_trades } => Sizing::Kelly {
                    cap: cap.unwrap_or(0.25),
                    min_trades: min_trades.unwrap_or(10),
                },
            };
            let rules = signals::Rules {
                max_positions: s.max_positions,
                sizing,
                rank,
                risk: *risk,
                bars_per_year: BARS_PER_YEAR,
            };
            signals::simulate(panel, &firing.entries, &firing.exits, &rules, &common)
        }
        (_, Some(w), _, _) => {
            let select = match &w.select {
                None | Some(SelectParams::All {}) => weights::Select::All,
                Some(SelectParams::Top { k, by }) => weights::Select::Top {
                    k: *k,
                    by: engine_score(by),
                },
                Some(SelectParams::Bottom { k, by }) => weights::Select::Bottom {
                    k: *k,
                    by: engine_score(by),
                },
            };
            let weighting = match &w.weighting {
                None | Some(WeightingParams::Equal {}) => weights::Weighting::Equal,
                Some(WeightingParams::InverseVolatility { bars }) => {
                    weights::Weighting::InverseVolatility { bars: *bars }
                }
                Some(WeightingParams::Fixed { weights: fixed }) => weights::Weighting::Fixed(
                    q.universe
                        .iter()
                        .map(|s| fixed.0.get(s).copied().unwrap_or(0.0))
                        .collect(),
                ),
            };
            let rules = weights::Rules {
                rebalance: p.rebalance.clone(),
                select,
                weighting,
                tolerance: w.drift_tolerance.unwrap_or(0.0),
            };
            weights::simulate(panel, &rules, &common)
        }
        _ => unreachable!("a checked request has one mode, and signals have their firing"),
    }
}

/// A run's figures as a batch row takes them: the metrics, those against
/// the benchmark, and its return on each session after the first.
pub fn figures(p: &Prepared, out: &Outcome) -> (metrics::Metrics, metrics::Relative, Vec<f64>) {
    let capital = p.params.capital.unwrap_or(100_000.0);
    let window = &p.calendar[p.start..];
    let m = metrics::metrics(out, capital, window, BARS_PER_YEAR);
    let bench = benchmark_closes(p, window);
    let rel = metrics::relative(&out.equity, &bench, BARS_PER_YEAR);
    let returns = out.equity.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    (m, rel, returns)
}

/// The benchmark's close on or before each session of `window`.
fn benchmark_closes(p: &Prepared, window: &[NaiveDate]) -> Vec<f64> {
    let bench_dates: Vec<NaiveDate> = (0..p.benchmark.len())
        .map(|i| p.benchmark.date(i))
        .collect();
    metrics::aligned(&bench_dates, &p.benchmark.close, window)
}

fn answer(
    p: &Prepared,
    out: &Outcome,
    month_ends: &[usize],
    bars_per_year: f64,
) -> PortfolioResult {
    let q = &p.params;
    let capital = q.capital.unwrap_or(100_000.0);
    let window = &p.calendar[p.start..];
    let day = |i: usize| p.calendar[i].to_string();
    let m = metrics::metrics(out, capital, window, bars_per_year);
    let bench = benchmark_closes(p, window);
    let rel = metrics::relative(&out.equity, &bench, bars_per_year);
    let bench_first = bench.iter().copied().find(|x| x.is_finite());
    let mut warnings = p.warnings.clone();
    let open = out.trips.iter().filter(|t| t.exit_bar.is_none()).count();
    if open > 0 {
        warnings.push(format!(
            "{open} positions are still open at {}; they are valued at their last close",
            day(p.calendar.len() - 1)
        ));
    }
    if bench_first.is_none() {
        warnings.push(format!(
            "the benchmark {} has no closes in the window",
            q.benchmark.as_deref().unwrap_or("SPX")
        ));
    }
    let sym = |i: usize| q.universe[i].clone();
    let mut traded = vec![false; out.profit.len()];
    for t in &out.trips {
        traded[t.symbol] = true;
    }
    let mut contributions: Vec<Contribution> = out
        .profit
        .iter()
        .enumerate()
        .filter(|(i, _)| traded[*i])
        .map(|(i, &profit)| Contribution {
            symbol: sym(i),
            profit,
            contribution: profit / capital,
        })
        .collect();
    contributions.sort_by(|a, b| b.profit.total_cmp(&a.profit));
    PortfolioResult {
        mode: if q.signals.is_some() {
            "signals"
        } else {
            "weights"
        }
        .into(),
        universe: q.universe.clone(),
        benchmark: q.benchmark.clone().unwrap_or_else(|| "SPX".into()),
        start_date: window.first().map(|d| d.to_string()).unwrap_or_default(),
        end_date: window.last().map(|d| d.to_string()).unwrap_or_default(),
        initial_capital: capital,
        final_capital: out.equity.last().copied().unwrap_or(capital),
        total_return: m.total_return,
        cagr: m.cagr,
        sharpe: m.sharpe,
        sortino: m.sortino,
        annual_volatility: m.annual_volatility,
        max_drawdown: m.max_drawdown,
        calmar: m.calmar,
        drawdown_period: m.drawdown_period,
        time_in_market: m.time_in_market,
        average_exposure: m.average_exposure,
        annual_turnover: m.annual_turnover,
        total_trades: m.total_trades,
        winning_trades: m.winning_trades,
        losing_trades: m.losing_trades,
        win_rate: m.win_rate,
        average_win: m.average_win,
        average_loss: m.average_loss,
        relative: Relative {
            alpha: rel.alpha,
            beta: rel.beta,
            tracking_error: rel.tracking_error,
            information_ratio: rel.information_ratio,
            up_capture: rel.up_capture,
            down_capture: rel.down_capture,
            benchmark_return: rel.benchmark_return,
        },
        crowded_out: out.crowded_out,
        series: Series {
            date: window.iter().map(|d| d.to_string()).collect(),
            equity: out.equity.clone(),
            cash: out.cash.clone(),
            exposure: out.exposure.clone(),
            traded: out.traded.clone(),
            benchmark: bench
                .iter()
                .map(|b| match bench_first {
                    Some(f) if b.is_finite() => Some(b / f * capital),
                    _ => None,
                })
                .collect(),
        },
        trades: out
            .trips
            .iter()
            .map(|t| PortfolioTrade {
                entry_time: day(t.entry_bar),
                exit_time: t.exit_bar.map(day),
                symbol: sym(t.symbol),
                side: "long".into(),
                size: t.units,
                entry_price: t.entry_price,
                exit_price: t.exit_price,
                fees: t.fees,
                profit: t.profit(),
                ret: t.ret(),
                bars_held: t.bars_held,
                exit_reason: reason(t.reason).into(),
            })
            .collect(),
        orders: out
            .orders
            .iter()
            .map(|o| PortfolioOrder {
                time: day(o.bar),
                symbol: sym(o.symbol),
                side: if o.units < 0.0 { "sell" } else { "buy" }.into(),
                size: o.units.abs(),
                price: o.price,
                fees: o.fee,
            })
            .collect(),
        contributions,
        weights: month_ends
            .iter()
            .zip(&out.snapshots)
            .map(|(&bar, w)| WeightsAt {
                date: day(bar),
                weights: w
                    .iter()
                    .map(|(s, x)| (sym(*s), *x))
                    .collect::<BTreeMap<_, _>>(),
            })
            .collect(),
        defaults_applied: p.defaults.clone(),
        warnings,
    }
}
