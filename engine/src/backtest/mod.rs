//! Single-position strategy simulation and its metrics.
//!
//! Timing (DECISIONS): the entry rule fires on bar t while flat; the fill is
//! the close of t (`CurrentClose`), the open of t+1 (`NextOpen`) or the close of
//! t+1 (`NextClose`). Exit rules and risk control are checked on closes from
//! the bar after the entry's signal bar on, and fill the same way. A maximum
//! holding of N bars makes bar t+N an exit signal bar. After an exit signal
//! bar e, a new entry may fire from bar e+1 on.

use crate::Bars;
use crate::fired::Fired;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Long,
    Short,
}

impl Direction {
    fn sign(self) -> f64 {
        match self {
            Direction::Long => 1.0,
            Direction::Short => -1.0,
        }
    }
}

/// Where a signal on bar t fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TradePrice {
    NextOpen,
    NextClose,
    CurrentClose,
}

/// Risk control, all optional: adverse and favourable moves in percent of the
/// entry fill, checked on closes; and a maximum holding in bars.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RiskControl {
    pub stop_loss_pct: Option<f64>,
    pub take_profit_pct: Option<f64>,
    pub max_holding_bars: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub direction: Direction,
    pub trade_price: TradePrice,
    /// Fraction of equity committed to each trade (1.0 = 100%).
    pub capital_alloc: f64,
    /// Per side, as a fraction of traded value.
    pub commission: f64,
    /// Per side, as a fraction of price, always against the trader.
    pub slippage: f64,
    pub risk: RiskControl,
    pub bars_per_year: f64,
    /// First bar of the simulated window; earlier bars only feed indicators.
    pub start: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitReason {
    Signal,
    StopLoss,
    TakeProfit,
    MaxHolding,
    /// Still open at the last bar; closed there for the metrics.
    EndOfData,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Trade {
    pub entry_signal_bar: usize,
    pub entry_bar: usize,
    /// Fill price before slippage.
    pub entry_price: f64,
    pub exit_signal_bar: usize,
    pub exit_bar: usize,
    pub exit_price: f64,
    /// Return after slippage and commission, as a fraction.
    pub ret: f64,
    pub reason: ExitReason,
}

impl Trade {
    pub fn is_open(&self) -> bool {
        self.reason == ExitReason::EndOfData
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    pub total_trades: usize,
    pub positive: usize,
    pub negative: usize,
    /// Percentages below.
    pub win_rate: f64,
    pub average_win: f64,
    pub average_loss: f64,
    pub total_return: f64,
    pub buy_hold: f64,
    pub cagr: f64,
    pub sharpe: f64,
    /// Mean per-bar return over its downside deviation (target 0), annualised.
    pub sortino: f64,
    /// Sample standard deviation of per-bar returns, annualised; a fraction.
    pub annual_volatility: f64,
    /// CAGR over the depth of the max drawdown; 0 without a drawdown.
    pub calmar: f64,
    pub max_drawdown: f64,
    /// Longest stretch, in bars, with equity below its previous peak.
    pub drawdown_period: usize,
    pub time_in_market: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub trades: Vec<Trade>,
    pub metrics: Metrics,
}

/// Return of a round trip after costs: slippage moves both fills against the
/// trader; commission is charged on the entry and the exit value.
pub fn trade_return(
    direction: Direction,
    entry: f64,
    exit: f64,
    commission: f64,
    slippage: f64,
) -> f64 {
    let d = direction.sign();
    let entry_eff = entry * (1.0 + d * slippage);
    let exit_eff = exit * (1.0 - d * slippage);
    d * (exit_eff - entry_eff) / entry_eff - commission * (1.0 + exit_eff / entry_eff)
}

fn fill(bars: &Bars, signal: usize, tp: TradePrice) -> Option<(usize, f64)> {
    match tp {
        TradePrice::CurrentClose => Some((signal, bars.close[signal])),
        TradePrice::NextOpen => {
            (signal + 1 < bars.len()).then(|| (signal + 1, bars.open[signal + 1]))
        }
        TradePrice::NextClose => {
            (signal + 1 < bars.len()).then(|| (signal + 1, bars.close[signal + 1]))
        }
    }
}

/// Runs the strategy over `bars[s.start..]` with precomputed entry and exit
/// signals (as long as `bars`).
pub fn run(bars: &Bars, entry: &[bool], exit: &[bool], s: &Settings) -> Report {
    assert!(
        entry.len() == bars.len() && exit.len() == bars.len(),
        "signals match the bars"
    );
    simulate(bars, &Fired::from_bools(entry), &Fired::from_bools(exit), s)
}

/// `run` on the bars where the rules fire: the simulation jumps from one
/// firing to the next, and the metrics walk only the bars in the market.
pub fn simulate(bars: &Bars, entry: &Fired, exit: &Fired, s: &Settings) -> Report {
    simulate_keeping(bars, entry, exit, s, None)
}

/// [`simulate`], with the run's per-bar returns appended to `returns` as
/// [`bar_returns`] gives them: a batch keeps them for its statistics, and
/// taking them from the metrics' own walk of the equity saves a second.
pub fn simulate_keeping(
    bars: &Bars,
    entry: &Fired,
    exit: &Fired,
    s: &Settings,
    returns: Option<&mut Vec<f64>>,
) -> Report {
    assert!(
        entry.len() == bars.len() && exit.len() == bars.len(),
        "signals match the bars"
    );
    let trades = trades(bars, entry, exit, s);
    let metrics = metrics(bars, &trades, s, returns);
    Report { trades, metrics }
}

fn trades(bars: &Bars, entry: &Fired, exit: &Fired, s: &Settings) -> Vec<Trade> {
    let n = bars.len();
    let mut trades = Vec::new();
    let mut from = s.start.min(n);
    while let Some(t) = entry.next_from(from) {
        let Some((entry_bar, entry_price)) = fill(bars, t, s.trade_price) else {
            break;
        };
        // Exits are looked for from the bar after the entry signal, once filled.
        let exit_at = exit_after(bars, exit, s, t, (t + 1).max(entry_bar), entry_price);
        let (exit_signal_bar, exit_bar, exit_price, reason) =
            match exit_at.and_then(|(e, r)| fill(bars, e, s.trade_price).map(|f| (e, f, r))) {
                Some((e, (b, p), r)) => (e, b, p, r),
                None => (n - 1, n - 1, bars.close[n - 1], ExitReason::EndOfData),
            };
        trades.push(Trade {
            entry_signal_bar: t,
            entry_bar,
            entry_price,
            exit_signal_bar,
            exit_bar,
            exit_price,
            ret: trade_return(
                s.direction,
                entry_price,
                exit_price,
                s.commission,
                s.slippage,
            ),
            reason,
        });
        if reason == ExitReason::EndOfData {
            break;
        }
        from = exit_signal_bar + 1;
    }
    trades
}

/// The first exit signal bar from `lo` on for a position entered on signal
/// bar `t`: stop-loss, then take-profit, then the exit rule, then max holding.
fn exit_after(
    bars: &Bars,
    exit: &Fired,
    s: &Settings,
    t: usize,
    lo: usize,
    entry_price: f64,
) -> Option<(usize, ExitReason)> {
    let n = bars.len();
    let held_out = s.risk.max_holding_bars.map(|m| (t + m).max(lo));
    let signal = exit.next_from(lo);
    if s.risk.stop_loss_pct.is_none() && s.risk.take_profit_pct.is_none() {
        return match (signal, held_out.filter(|m| *m < n)) {
            (Some(e), Some(m)) if m < e => Some((m, ExitReason::MaxHolding)),
            (Some(e), _) => Some((e, ExitReason::Signal)),
            (None, Some(m)) => Some((m, ExitReason::MaxHolding)),
            (None, None) => None,
        };
    }
    let d = s.direction.sign();
    let last = signal
        .into_iter()
        .chain(held_out)
        .min()
        .unwrap_or(n - 1)
        .min(n - 1);
    for e in lo..=last {
        let moved = d * (bars.close[e] / entry_price - 1.0) * 100.0;
        if s.risk.stop_loss_pct.is_some_and(|sl| moved <= -sl.abs()) {
            return Some((e, ExitReason::StopLoss));
        }
        if s.risk.take_profit_pct.is_some_and(|tp| moved >= tp) {
            return Some((e, ExitReason::TakeProfit));
        }
    }
    match (signal, held_out) {
        (Some(e), _) if e == last => Some((e, ExitReason::Signal)),
        (_, Some(m)) if m == last && m < n => Some((m, ExitReason::MaxHolding)),
        _ => None,
    }
}

pub mod ledger;
mod metrics;
pub mod monte_carlo;
pub mod walk_forward;

use metrics::metrics;
pub use metrics::{bar_returns, equity_curve};

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    /// Bars with given opens and closes (high/low bracket them), one a day.
    fn bars(open: &[f64], close: &[f64]) -> Bars {
        let mut b = Bars::default();
        let d0 = NaiveDate::from_ymd_opt(2024, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap();
        for i in 0..close.len() {
            let (o, c) = (open[i], close[i]);
            b.push(
                d0 + chrono::TimeDelta::days(i as i64),
                o,
                o.max(c) + 1.0,
                o.min(c) - 1.0,
                c,
                1000.0,
            );
        }
        b
    }

    pub(crate) fn settings(tp: TradePrice) -> Settings {
        Settings {
            direction: Direction::Long,
            trade_price: tp,
            capital_alloc: 1.0,
            commission: 0.0,
            slippage: 0.0,
            risk: RiskControl::default(),
            bars_per_year: 252.0,
            start: 0,
        }
    }

    fn sig(n: usize, on: &[usize]) -> Vec<bool> {
        (0..n).map(|i| on.contains(&i)).collect()
    }

    const OPEN: [f64; 8] = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0];
    const CLOSE: [f64; 8] = [10.5, 11.5, 12.5, 13.5, 13.0, 12.0, 16.5, 17.5];

    #[test]
    fn trade_price_modes_fill_where_decisions_say() {
        let b = bars(&OPEN, &CLOSE);
        let (entry, exit) = (sig(8, &[1]), sig(8, &[3]));
        let r = run(&b, &entry, &exit, &settings(TradePrice::CurrentClose));
        assert_eq!(
            (
                r.trades[0].entry_bar,
                r.trades[0].entry_price,
                r.trades[0].exit_bar,
                r.trades[0].exit_price
            ),
            (1, 11.5, 3, 13.5)
        );
        let r = run(&b, &entry, &exit, &settings(TradePrice::NextOpen));
        assert_eq!(
            (
                r.trades[0].entry_bar,
                r.trades[0].entry_price,
                r.trades[0].exit_bar,
                r.trades[0].exit_price
            ),
            (2, 12.0, 4, 14.0)
        );
        let r = run(&b, &entry, &exit, &settings(TradePrice::NextClose));
        assert_eq!(
            (
                r.trades[0].entry_bar,
                r.trades[0].entry_price,
                r.trades[0].exit_bar,
                r.trades[0].exit_price
            ),
            (2, 12.5, 4, 13.0)
        );
        assert!((r.trades[0].ret - (13.0 / 12.5 - 1.0)).abs() < 1e-15);
    }

    #[test]
    fn one_position_at_a_time_and_reentry_after_exit() {
        let b = bars(&OPEN, &CLOSE);
        // Entry fires on 0, 1, 2 (only 0 is taken while flat), exit on 2; re-entry from 3 on.
        let r = run(
            &b,
            &sig(8, &[0, 1, 2, 4]),
            &sig(8, &[2, 5]),
            &settings(TradePrice::CurrentClose),
        );
        let spans: Vec<(usize, usize)> =
            r.trades.iter().map(|t| (t.entry_bar, t.exit_bar)).collect();
        assert_eq!(spans, vec![(0, 2), (4, 5)]);
        assert_eq!(r.metrics.total_trades, 2);
        assert_eq!((r.metrics.positive, r.metrics.negative), (1, 1));
        // Exit signal on the entry bar itself is not taken: exits count from the next bar.
        let r = run(
            &b,
            &sig(8, &[1]),
            &sig(8, &[1, 3]),
            &settings(TradePrice::CurrentClose),
        );
        assert_eq!(r.trades[0].exit_bar, 3);
    }

    #[test]
    fn short_trades_gain_when_price_falls() {
        let b = bars(&OPEN, &CLOSE);
        let mut s = settings(TradePrice::CurrentClose);
        s.direction = Direction::Short;
        let r = run(&b, &sig(8, &[3]), &sig(8, &[5]), &s);
        assert!((r.trades[0].ret - (13.5 - 12.0) / 13.5).abs() < 1e-15);
        assert!(r.metrics.total_return > 0.0);
    }

    #[test]
    fn risk_control_stop_take_and_max_holding() {
        let b = bars(&OPEN, &CLOSE);
        let mut s = settings(TradePrice::CurrentClose);
        // Entry at close 13.5 (bar 3); bar 4 closes 13.0 (-3.7%), bar 5 12.0 (-11.1%).
        s.risk.stop_loss_pct = Some(5.0);
        let r = run(&b, &sig(8, &[3]), &sig(8, &[]), &s);
        assert_eq!(
            (r.trades[0].exit_bar, r.trades[0].reason),
            (5, ExitReason::StopLoss)
        );
        s.risk.stop_loss_pct = Some(-5.0); // the sign does not matter
        assert_eq!(
            run(&b, &sig(8, &[3]), &sig(8, &[]), &s).trades[0].exit_bar,
            5
        );
        let mut s = settings(TradePrice::CurrentClose);
        s.risk.take_profit_pct = Some(10.0); // 10.5 -> 11.5 (+9.5%), 12.5 (+19%)
        let r = run(&b, &sig(8, &[0]), &sig(8, &[]), &s);
        assert_eq!(
            (r.trades[0].exit_bar, r.trades[0].reason),
            (2, ExitReason::TakeProfit)
        );
        let mut s = settings(TradePrice::NextOpen);
        s.risk.max_holding_bars = Some(2); // signal bar 1 -> exit signal bar 3 -> fill open of 4
        let r = run(&b, &sig(8, &[1]), &sig(8, &[]), &s);
        assert_eq!(
            (
                r.trades[0].exit_signal_bar,
                r.trades[0].exit_bar,
                r.trades[0].exit_price,
                r.trades[0].reason
            ),
            (3, 4, 14.0, ExitReason::MaxHolding)
        );
    }

    #[test]
    fn open_trade_closes_at_the_last_bar() {
        let b = bars(&OPEN, &CLOSE);
        let r = run(
            &b,
            &sig(8, &[5]),
            &sig(8, &[]),
            &settings(TradePrice::CurrentClose),
        );
        let t = &r.trades[0];
        assert!(t.is_open());
        assert_eq!((t.exit_bar, t.exit_price), (7, 17.5));
        // An entry signal on the last bar with next-bar fills cannot trade.
        let r = run(
            &b,
            &sig(8, &[7]),
            &sig(8, &[]),
            &settings(TradePrice::NextOpen),
        );
        assert!(r.trades.is_empty());
    }

    #[test]
    fn costs_reduce_each_side() {
        // Long 100 -> 110, slippage 1%, commission 0.1%: entry 101, exit 108.9.
        let r = trade_return(Direction::Long, 100.0, 110.0, 0.001, 0.01);
        let want = (108.9 - 101.0) / 101.0 - 0.001 * (1.0 + 108.9 / 101.0);
        assert!((r - want).abs() < 1e-15);
        // Short 100 -> 90: entry 99, cover 90.9.
        let r = trade_return(Direction::Short, 100.0, 90.0, 0.0, 0.01);
        assert!((r - (99.0 - 90.9) / 99.0).abs() < 1e-15);
    }

    #[test]
    fn metrics_by_hand() {
        let b = bars(&OPEN, &CLOSE);
        let mut s = settings(TradePrice::CurrentClose);
        s.capital_alloc = 0.5;
        // Trade 1: 10.5 -> 13.5 (+28.57%); trade 2: 13.0 -> 12.0 (-7.69%).
        let r = run(&b, &sig(8, &[0, 4]), &sig(8, &[3, 5]), &s);
        let (r1, r2) = (13.5 / 10.5 - 1.0, 12.0 / 13.0 - 1.0);
        let m = &r.metrics;
        assert!(
            (m.total_return - 100.0 * ((1.0 + 0.5 * r1) * (1.0 + 0.5 * r2) - 1.0)).abs() < 1e-12
        );
        assert!((m.win_rate - 50.0).abs() < 1e-12);
        assert!(
            (m.average_win - 100.0 * r1).abs() < 1e-12
                && (m.average_loss - 100.0 * r2).abs() < 1e-12
        );
        assert!((m.buy_hold - 100.0 * (17.5 / 10.5 - 1.0)).abs() < 1e-12);
        // Held at the closes of bars 0-2 and 4: 4 of 8 bars.
        assert!((m.time_in_market - 50.0).abs() < 1e-12);
        // Equity: marked to close while open, then realised.
        let e1 = 1.0 + 0.5 * r1;
        // Bar 0 closes at the entry price; bar 4 at the second entry's price.
        let want = [
            1.0,
            1.0 + 0.5 * (11.5 / 10.5 - 1.0),
            1.0 + 0.5 * (12.5 / 10.5 - 1.0),
            e1,
            e1,
            e1 * (1.0 + 0.5 * r2),
            e1 * (1.0 + 0.5 * r2),
            e1 * (1.0 + 0.5 * r2),
        ];
        let equity = equity_curve(&b, &r.trades, &s);
        assert!(
            equity.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12),
            "{equity:?}"
        );
        // Drawdown: peak e1 at bar 2 (bars 3, 4 equal it), then bar 5 below: one bar, until the end: 3 bars.
        assert!((m.max_drawdown - 100.0 * (0.5 * r2)).abs() < 1e-12);
        assert_eq!(m.drawdown_period, 3);
        let years = 7.0 / 365.25;
        assert!(
            (m.cagr - 100.0 * (((1.0 + 0.5 * r1) * (1.0 + 0.5 * r2)).powf(1.0 / years) - 1.0))
                .abs()
                < 1e-6
        );
    }

    #[test]
    fn the_window_starts_at_start() {
        let b = bars(&OPEN, &CLOSE);
        let mut s = settings(TradePrice::CurrentClose);
        s.start = 2;
        let r = run(&b, &sig(8, &[0, 3]), &sig(8, &[1, 5]), &s);
        assert_eq!(r.trades.len(), 1);
        assert_eq!(r.trades[0].entry_bar, 3);
        assert_eq!(equity_curve(&b, &r.trades, &s).len(), 6);
        assert!((r.metrics.buy_hold - 100.0 * (17.5 / 12.5 - 1.0)).abs() < 1e-12);
    }

    /// A deterministic walk of prices and random firings.
    fn random_case(seed: u64, n: usize) -> (Bars, Vec<bool>, Vec<bool>) {
        let mut x = seed
            .wrapping_mul(2862933555777941757)
            .wrapping_add(3037000493);
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut open, mut close) = (Vec::new(), Vec::new());
        let mut p = 100.0;
        for _ in 0..n {
            open.push(p * (1.0 + 0.01 * (next() - 0.5)));
            p *= 1.0 + 0.04 * (next() - 0.5);
            close.push(p);
        }
        let entry = (0..n).map(|_| next() < 0.08).collect();
        let exit = (0..n).map(|_| next() < 0.08).collect();
        (bars(&open, &close), entry, exit)
    }

    /// The bar-by-bar definition of the trades (DECISIONS' timing).
    fn trades_bar_by_bar(b: &Bars, entry: &[bool], exit: &[bool], s: &Settings) -> Vec<Trade> {
        let n = b.len();
        let d = s.direction.sign();
        let mut out = Vec::new();
        let mut t = s.start;
        while t < n {
            if !entry[t] {
                t += 1;
                continue;
            }
            let Some((entry_bar, entry_price)) = fill(b, t, s.trade_price) else {
                break;
            };
            let mut found = None;
            #[allow(clippy::needless_range_loop)] // the definition, bar by bar
            for e in (t + 1).max(entry_bar)..n {
                let moved = d * (b.close[e] / entry_price - 1.0) * 100.0;
                let reason = if s.risk.stop_loss_pct.is_some_and(|sl| moved <= -sl.abs()) {
                    Some(ExitReason::StopLoss)
                } else if s.risk.take_profit_pct.is_some_and(|tp| moved >= tp) {
                    Some(ExitReason::TakeProfit)
                } else if exit[e] {
                    Some(ExitReason::Signal)
                } else if s.risk.max_holding_bars.is_some_and(|m| e >= t + m) {
                    Some(ExitReason::MaxHolding)
                } else {
                    None
                };
                if let Some(r) = reason {
                    found = Some((e, r));
                    break;
                }
            }
            let (es, eb, ep, reason) =
                match found.and_then(|(e, r)| fill(b, e, s.trade_price).map(|f| (e, f, r))) {
                    Some((e, (eb, ep), r)) => (e, eb, ep, r),
                    None => (n - 1, n - 1, b.close[n - 1], ExitReason::EndOfData),
                };
            out.push(Trade {
                entry_signal_bar: t,
                entry_bar,
                entry_price,
                exit_signal_bar: es,
                exit_bar: eb,
                exit_price: ep,
                ret: trade_return(s.direction, entry_price, ep, s.commission, s.slippage),
                reason,
            });
            if reason == ExitReason::EndOfData {
                break;
            }
            t = es + 1;
        }
        out
    }

    #[test]
    fn jumping_between_firings_gives_the_bar_by_bar_trades_and_metrics() {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(1.0);
        for seed in 0..300u64 {
            let n = 2 + (seed as usize * 53) % 400;
            let (b, entry, exit) = random_case(seed, n);
            let mut s = settings(match seed % 3 {
                0 => TradePrice::CurrentClose,
                1 => TradePrice::NextOpen,
                _ => TradePrice::NextClose,
            });
            s.start = (seed as usize * 7) % n;
            s.direction = if seed % 4 == 3 {
                Direction::Short
            } else {
                Direction::Long
            };
            s.capital_alloc = [1.0, 0.5, 2.0][seed as usize % 3];
            s.commission = if seed % 5 == 0 { 0.001 } else { 0.0 };
            s.slippage = if seed % 7 == 0 { 0.002 } else { 0.0 };
            s.risk = RiskControl {
                stop_loss_pct: (seed % 2 == 1).then_some(3.0),
                take_profit_pct: (seed % 6 == 1).then_some(4.0),
                max_holding_bars: (seed % 5 >= 3).then_some(1 + seed as usize % 9),
            };
            let r = run(&b, &entry, &exit, &s);
            assert_eq!(
                r.trades,
                trades_bar_by_bar(&b, &entry, &exit, &s),
                "seed {seed}"
            );
            // Metrics against their definitions over the whole equity curve.
            let equity = equity_curve(&b, &r.trades, &s);
            assert_eq!(equity.len(), n - s.start);
            // n bars of equity, n - 1 returns (no return before the first bar).
            let rets: Vec<f64> = equity.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
            // A batch's kept returns are these, bit for bit (NaN where the equity is 0).
            let mut kept = Vec::new();
            bar_returns(&b, &r.trades, &s, &mut kept);
            assert_eq!(kept.len(), rets.len(), "seed {seed}");
            assert!(
                kept.iter()
                    .zip(&rets)
                    .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())),
                "seed {seed}"
            );
            // And the same returns taken from the metrics' walk, with the same report.
            let mut walked = vec![0.5];
            let (fe, fx) = (Fired::from_bools(&entry), Fired::from_bools(&exit));
            let kept_too = simulate_keeping(&b, &fe, &fx, &s, Some(&mut walked));
            assert_eq!(format!("{kept_too:?}"), format!("{r:?}"), "seed {seed}");
            assert_eq!(walked[0], 0.5, "appended after what was there");
            assert_eq!(walked.len() - 1, kept.len(), "seed {seed}");
            assert!(
                walked[1..]
                    .iter()
                    .zip(&kept)
                    .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())),
                "seed {seed}"
            );
            let sharpe = match crate::stats::std_dev(&rets) {
                Some(sd) if sd > 0.0 => crate::stats::mean(&rets).unwrap() / sd * 252f64.sqrt(),
                _ => 0.0,
            };
            let (mut peak, mut dd, mut run, mut longest) = (1.0f64, 0.0f64, 0, 0);
            for e in &equity {
                if *e >= peak {
                    (peak, run) = (*e, 0);
                } else {
                    run += 1;
                    longest = longest.max(run);
                    dd = dd.min(e / peak - 1.0);
                }
            }
            let m = &r.metrics;
            assert!(
                close(m.sharpe, sharpe),
                "seed {seed}: {} vs {sharpe}",
                m.sharpe
            );
            assert_eq!(m.max_drawdown, 100.0 * dd, "seed {seed}");
            assert_eq!(m.drawdown_period, longest, "seed {seed}");
        }
    }
}
