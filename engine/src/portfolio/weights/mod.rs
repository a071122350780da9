//! Target-weight mode: on each scheduled bar, a selection of the universe
//! and a weighting set target weights, and the account trades to them.
//!
//! Decided on the scheduled bar's close, filled as [`TradePrice`] says (bt
//! rebalances at that close). Symbols without a price on the decision or
//! fill bar are left out of the selection (a held one is kept as it is).
//! Held symbols outside the selection are sold whole; a selected symbol
//! trades when its weight is off its target by more than the tolerance.
//!
//! Each trade pays its own costs, as bt's `Rebalance` has them: a symbol's
//! trade is its target value less its held value, both at the fill prices
//! before the bar's trades; a buy spends that amount, commission and
//! slippage included, and a sale to target raises it net of them. Sells
//! fill before buys, each in universe order. What the buys ask for beyond
//! the buying power (the commission on the symbols sold whole, which bt
//! pays with negative cash; a held symbol that cannot trade) is taken from
//! every buy in proportion to its amount, not from the last one.
//!
//! [`TradePrice`]: super::TradePrice

use super::book::{Book, positive};
use super::{Common, ExitReason, Outcome, Panel, Recorder};

/// A figure symbols are ranked by, as of the decision bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Score {
    /// close / close `n` bars earlier - 1.
    Momentum(usize),
    /// The sample deviation of the last `n` close-to-close returns.
    Volatility(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Select {
    All,
    /// The `k` highest scores (ties in universe order).
    Top {
        k: usize,
        by: Score,
    },
    /// The `k` lowest.
    Bottom {
        k: usize,
        by: Score,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Weighting {
    Equal,
    /// In proportion to 1 / volatility over `bars` returns.
    InverseVolatility {
        bars: usize,
    },
    /// Per symbol (summing to 1 over the universe).
    Fixed(Vec<f64>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// Decision bars, ascending ([`super::schedule::bars`]).
    pub rebalance: Vec<usize>,
    pub select: Select,
    pub weighting: Weighting,
    /// A selected symbol trades when |weight - target| exceeds this.
    pub tolerance: f64,
}

fn score(panel: &Panel, by: Score, vol: &[Vec<f64>], sym: usize, s: usize) -> f64 {
    match by {
        Score::Momentum(n) if s >= n => panel.close[sym][s] / panel.close[sym][s - n] - 1.0,
        Score::Momentum(_) => f64::NAN,
        Score::Volatility(_) => vol[sym][s],
    }
}

/// The share of each buy's amount that is spent when the buys ask for
/// `wanted` and `power` can be spent: all of it when it can, else the same
/// share of every buy.
fn spread(wanted: f64, power: f64) -> f64 {
    if wanted > power && wanted > 0.0 {
        (power / wanted).max(0.0)
    } else {
        1.0
    }
}

/// Runs target-weight mode.
pub fn simulate(panel: &Panel, rules: &Rules, common: &Common) -> Outcome {
    let (k, n) = (panel.symbols(), panel.len());
    let start = common.start.min(n);
    let lag = Panel::lag(common.trade_price);
    let vol_bars = match (&rules.weighting, rules.select) {
        (Weighting::InverseVolatility { bars }, _) => Some(*bars),
        (
            _,
            Select::Top {
                by: Score::Volatility(b),
                ..
            },
        )
        | (
            _,
            Select::Bottom {
                by: Score::Volatility(b),
                ..
            },
        ) => Some(b),
        _ => None,
    };
    let vol = panel.volatilities(vol_bars);
    let mut book = Book::new(k, common.capital, common.costs);
    let mut rec = Recorder::new(common, n);
    let mut next = 0;
    let mut target = vec![0.0; k];
    let mut chosen: Vec<usize> = Vec::new();
    let mut buys: Vec<(usize, f64)> = Vec::new();
    for f in start..n {
        while next < rules.rebalance.len() && rules.rebalance[next] + lag < f {
            next += 1;
        }
        let due = next < rules.rebalance.len() && rules.rebalance[next] + lag == f;
        if due && rules.rebalance[next] >= start {
            let s = rules.rebalance[next];
            let price = |sym: usize| panel.fill_price(common.trade_price, sym, f);
            let tradable = |sym: usize| price(sym) > 0.0 && panel.close[sym][s] > 0.0;
            chosen.clear();
            chosen.extend((0..k).filter(|&sym| tradable(sym)));
            match rules.select {
                Select::All => {}
                Select::Top { k: top, by } | Select::Bottom { k: top, by } => {
                    let desc = matches!(rules.select, Select::Top { .. });
                    chosen.retain(|&sym| score(panel, by, &vol, sym, s).is_finite());
                    let key = |sym: usize| score(panel, by, &vol, sym, s);
                    if desc {
                        chosen.sort_by(|a, b| key(*b).total_cmp(&key(*a)));
                    } else {
                        chosen.sort_by(|a, b| key(*a).total_cmp(&key(*b)));
                    }
                    chosen.truncate(top);
                    chosen.sort_unstable();
                }
            }
            target.iter_mut().for_each(|t| *t = 0.0);
            match &rules.weighting {
                Weighting::Equal => {
                    let w = 1.0 / chosen.len().max(1) as f64;
                    chosen.iter().for_each(|&sym| target[sym] = w);
                }
                Weighting::InverseVolatility { .. } => {
                    chosen.retain(|&sym| vol[sym][s] > 0.0);
                    let total: f64 = chosen.iter().map(|&sym| 1.0 / vol[sym][s]).sum();
                    chosen
                        .iter()
                        .for_each(|&sym| target[sym] = 1.0 / vol[sym][s] / total);
                }
                Weighting::Fixed(w) => chosen.iter().for_each(|&sym| target[sym] = w[sym]),
            }
            let value = book.value(price);
            let off = |book: &Book, sym: usize| {
                (book.units(sym) * price(sym) / value - target[sym]).abs() > rules.tolerance
            };
            let (commission, slippage) = (book.costs.commission, book.costs.slippage);
            // Every trade is sized on the holdings before the bar's trades.
            buys.clear();
            buys.extend(chosen.iter().filter_map(|&sym| {
                let short = target[sym] * value - book.units(sym) * price(sym);
                (short > 0.0 && off(&book, sym)).then_some((sym, short))
            }));
            // Sells: whatever left the selection, then what is above target.
            for (sym, &want) in target.iter().enumerate() {
                if book.held[sym].is_none() || !positive(price(sym)) {
                    continue;
                }
                if want == 0.0 && chosen.binary_search(&sym).is_err() {
                    book.sell(f, sym, f64::INFINITY, price(sym), ExitReason::Rebalance);
                    continue;
                }
                let excess = book.units(sym) * price(sym) - want * value;
                if excess > 0.0 && off(&book, sym) {
                    let net = price(sym) * (1.0 - slippage) * (1.0 - commission);
                    book.sell(f, sym, excess / net, price(sym), ExitReason::Rebalance);
                }
            }
            let wanted: f64 = buys.iter().map(|&(_, amount)| amount).sum();
            let scale = spread(wanted, book.buying_power(value));
            for &(sym, amount) in &buys {
                let limit = (amount * scale).min(book.buying_power(value));
                book.buy(f, s, sym, f64::INFINITY, price(sym), limit);
            }
            next += 1;
        }
        rec.bar(&mut book, panel, f);
    }
    rec.finish(book)
}

#[cfg(test)]
mod tests;
