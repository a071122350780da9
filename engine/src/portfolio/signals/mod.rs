//! Signal mode: each symbol's entry and exit rules open and close positions
//! in at most `max_positions` slots.
//!
//! Per symbol the rules behave as in the single backtest: an entry fires
//! while flat, exits (the rule, then stop loss, take profit and maximum
//! holding on closes) are looked for from the bar after the entry's signal,
//! and a symbol that exited on signal bar e may enter again from e + 1. On
//! a bar, exits fill first (in universe order); then the entries that fired, best `rank` first
//! (ties in universe order), take the free slots, each sized by
//! [`Sizing`]. An exit whose fill bar has no price fills on the symbol's
//! next bar with one; an entry without a price is passed over.

use super::book::{Book, positive};
use super::sizing::{Sizing, kelly, median, volatility_at};
use super::weights::Score;
use super::{Common, ExitReason, Outcome, Panel, Recorder};
use crate::backtest::RiskControl;
use crate::fired::Fired;

/// Which of several entries on one bar go first.
#[derive(Debug, Clone, PartialEq)]
pub struct Rank {
    /// An entry whose value is not finite is not taken.
    pub by: RankBy,
    pub descending: bool,
}

/// What entries are ranked by.
#[derive(Debug, Clone, PartialEq)]
pub enum RankBy {
    /// Per symbol, on the panel's bars.
    Values(Vec<Vec<f64>>),
    /// A figure of the panel's closes, read at the entries' signal bars
    /// only (a universe's whole matrix of it is never built).
    Score(Score),
}

impl RankBy {
    fn at(&self, panel: &Panel, sym: usize, s: usize) -> f64 {
        match self {
            RankBy::Values(v) => v[sym][s],
            RankBy::Score(Score::Momentum(n)) if s >= *n => {
                panel.close[sym][s] / panel.close[sym][s - n] - 1.0
            }
            RankBy::Score(Score::Momentum(_)) => f64::NAN,
            RankBy::Score(Score::Volatility(n)) => volatility_at(&panel.close[sym], *n, s),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    pub max_positions: usize,
    pub sizing: Sizing,
    /// None: universe order.
    pub rank: Option<Rank>,
    pub risk: RiskControl,
    pub bars_per_year: f64,
}

/// Runs signal mode. `entries` and `exits` are per symbol, on the panel's bars.
pub fn simulate(
    panel: &Panel,
    entries: &[Fired],
    exits: &[Fired],
    rules: &Rules,
    common: &Common,
) -> Outcome {
    let (k, n) = (panel.symbols(), panel.len());
    assert!(entries.len() == k && exits.len() == k, "signals per symbol");
    let start = common.start.min(n);
    let lag = Panel::lag(common.trade_price);
    // Entry signals by bar: (bar, symbol), in bar then universe order.
    let mut fired: Vec<(usize, usize)> = Vec::new();
    for (s, e) in entries.iter().enumerate() {
        let mut i = start;
        while let Some(t) = e.next_from(i) {
            fired.push((t, s));
            i = t + 1;
        }
    }
    fired.sort_unstable();
    let vol = panel.volatilities(rules.sizing.volatility_bars());
    let mut book = Book::new(k, common.capital, common.costs);
    let mut rec = Recorder::new(common, n);
    // Per symbol: the fill before slippage its risk control measures from,
    // the last exit signal bar (no entry on it), its closed trades' returns.
    let mut entry_fill = vec![f64::NAN; k];
    let mut exited_on: Vec<Option<usize>> = vec![None; k];
    let mut closed: Vec<Vec<f64>> = vec![Vec::new(); k];
    let mut pending: Vec<(usize, ExitReason)> = Vec::new();
    let mut next = 0;
    // Entries that may fill on this bar, with their rank's value.
    let mut candidates: Vec<(usize, f64)> = Vec::new();
    let mut scratch: Vec<f64> = Vec::new();
    for f in start..n {
        let decide = f >= start + lag;
        let s = f.saturating_sub(lag);
        let value = book.value(|sym| panel.fill_price(common.trade_price, sym, f));
        if decide {
            for &sym in &book.open {
                let trip = &book.trips[book.held[sym].expect("open is held").trip];
                if trip.entry_signal_bar >= s || pending.iter().any(|p| p.0 == sym) {
                    continue;
                }
                if let Some(r) = exit_reason(
                    panel,
                    exits,
                    rules,
                    sym,
                    s,
                    trip.entry_signal_bar,
                    entry_fill[sym],
                ) {
                    pending.push((sym, r));
                    exited_on[sym] = Some(s);
                }
            }
        }
        // Exits fill in universe order.
        pending.sort_unstable_by_key(|p| p.0);
        pending.retain(|&(sym, reason)| {
            let p = panel.fill_price(common.trade_price, sym, f);
            if !p.is_finite() {
                return true;
            }
            let trip = book.held[sym].map(|h| h.trip);
            book.sell(f, sym, f64::INFINITY, p, reason);
            if let Some(t) = trip {
                closed[sym].push(book.trips[t].ret());
            }
            false
        });
        if !decide {
            rec.bar(&mut book, panel, f);
            continue;
        }
        candidates.clear();
        while next < fired.len() && fired[next].0 < s {
            next += 1;
        }
        while next < fired.len() && fired[next].0 == s {
            let sym = fired[next].1;
            next += 1;
            let p = panel.fill_price(common.trade_price, sym, f);
            if book.held[sym].is_some() || exited_on[sym] == Some(s) || p.is_nan() || p <= 0.0 {
                continue;
            }
            let key = rules.rank.as_ref().map_or(0.0, |r| r.by.at(panel, sym, s));
            if key.is_finite() {
                candidates.push((sym, key));
            }
        }
        if let Some(r) = &rules.rank {
            // Stable: ties keep universe order.
            if r.descending {
                candidates.sort_by(|a, b| b.1.total_cmp(&a.1));
            } else {
                candidates.sort_by(|a, b| a.1.total_cmp(&b.1));
            }
        }
        let free = rules.max_positions.saturating_sub(book.open.len());
        rec.crowded_out(candidates.len().saturating_sub(free));
        let typical = match rules.sizing {
            Sizing::InverseVolatility { .. } if !candidates.is_empty() => {
                scratch.clear();
                scratch.extend(vol.iter().map(|v| v[s]));
                median(&mut scratch)
            }
            _ => f64::NAN,
        };
        for &(sym, _) in candidates.iter().take(free) {
            let p = panel.fill_price(common.trade_price, sym, f);
            let slot = value / rules.max_positions as f64;
            let annual = rules.bars_per_year.sqrt();
            let units = match rules.sizing {
                Sizing::Equal => slot / p,
                Sizing::FixedFraction(_) => f64::INFINITY,
                Sizing::InverseVolatility { .. } => slot * typical / vol[sym][s] / p,
                Sizing::VolatilityTarget { annual: target, .. } => {
                    let share = target / rules.max_positions as f64 / (vol[sym][s] * annual);
                    share.min(1.0) * value / p
                }
                Sizing::Kelly { cap, min_trades } => {
                    if closed[sym].len() < min_trades {
                        slot / p
                    } else {
                        kelly(&closed[sym], cap) * value / p
                    }
                }
            };
            let power = book.buying_power(value);
            let limit = match rules.sizing {
                Sizing::FixedFraction(fr) => fr * power,
                _ => power,
            };
            if !positive(units) {
                continue;
            }
            if book.buy(f, s, sym, units, p, limit) > 0.0 {
                entry_fill[sym] = p;
            }
        }
        rec.bar(&mut book, panel, f);
    }
    rec.finish(book)
}

/// Why the position in `sym`, entered on signal bar `t` at `fill`, exits on
/// signal bar `s`: stop loss, take profit, the exit rule, maximum holding.
fn exit_reason(
    panel: &Panel,
    exits: &[Fired],
    rules: &Rules,
    sym: usize,
    s: usize,
    t: usize,
    fill: f64,
) -> Option<ExitReason> {
    let risk = &rules.risk;
    let close = panel.close[sym][s];
    if close.is_finite() && fill > 0.0 {
        let moved = (close / fill - 1.0) * 100.0;
        if risk.stop_loss_pct.is_some_and(|sl| moved <= -sl.abs()) {
            return Some(ExitReason::StopLoss);
        }
        if risk.take_profit_pct.is_some_and(|tp| moved >= tp) {
            return Some(ExitReason::TakeProfit);
        }
    }
    if exits[sym].get(s) {
        return Some(ExitReason::Signal);
    }
    if risk.max_holding_bars.is_some_and(|m| s >= t + m) {
        return Some(ExitReason::MaxHolding);
    }
    None
}

#[cfg(test)]
mod tests;
