//! Portfolio simulation: many symbols trading from one pool of cash.
//!
//! Two ways to decide what is held. In signal mode each symbol's entry and
//! exit rules (evaluated once per symbol, before the simulation) open and
//! close positions in a limited number of slots, sized by a rule. In
//! target-weight mode a schedule rebalances the account to weights chosen
//! by a selection and a weighting. Both share the account ([`book`]): the
//! orders fill as vectorbt fills them, so its `Portfolio` is the reference.
//!
//! Timing follows the single backtest: a decision on bar t's close fills
//! at that close, the next open or the next close ([`TradePrice`]); on a
//! bar, exits and sells fill before entries and buys, so the cash they free
//! is spent the same bar. The account is valued at each bar's closes.

pub mod book;
pub mod metrics;
pub mod schedule;
pub mod signals;
pub mod sizing;
pub mod weights;

pub use crate::backtest::TradePrice;

/// Costs and limits of every order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Costs {
    /// Per side, a fraction of the traded value.
    pub commission: f64,
    /// Per side, a fraction of the price, always against the trader.
    pub slippage: f64,
    /// Fractional units; else whole units, rounded down.
    pub fractional: bool,
    /// Gross exposure allowed over the account's value: 1 keeps cash from
    /// going negative; above 1 buys may borrow the difference.
    pub max_leverage: f64,
}

/// Closes and opens of each symbol on the portfolio's calendar (the union of
/// its symbols' sessions): `close[symbol][bar]`, NaN where the symbol has no
/// bar that day.
#[derive(Debug, Clone, Default)]
pub struct Panel {
    pub open: Vec<Vec<f64>>,
    pub close: Vec<Vec<f64>>,
}

impl Panel {
    pub fn symbols(&self) -> usize {
        self.close.len()
    }

    pub fn len(&self) -> usize {
        self.close.first().map_or(0, Vec::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each symbol's [`sizing::rolling_volatility`] over `bars` returns
    /// (none when no rule reads it).
    pub(crate) fn volatilities(&self, bars: Option<usize>) -> Vec<Vec<f64>> {
        bars.map_or_else(Vec::new, |b| {
            self.close
                .iter()
                .map(|c| sizing::rolling_volatility(c, b))
                .collect()
        })
    }

    /// Where an order decided on a bar fills: bars later, and the price of
    /// `symbol` on the fill bar.
    pub(crate) fn lag(tp: TradePrice) -> usize {
        match tp {
            TradePrice::CurrentClose => 0,
            TradePrice::NextOpen | TradePrice::NextClose => 1,
        }
    }

    pub(crate) fn fill_price(&self, tp: TradePrice, symbol: usize, bar: usize) -> f64 {
        match tp {
            TradePrice::NextOpen => self.open[symbol][bar],
            _ => self.close[symbol][bar],
        }
    }
}

/// What every portfolio run shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Common {
    pub capital: f64,
    pub costs: Costs,
    pub trade_price: TradePrice,
    /// First bar of the window; earlier bars only feed signals and scores.
    pub start: usize,
    /// Bars whose holdings are kept as weights (for a chart over time).
    pub snapshots: Vec<usize>,
}

/// Why a position closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitReason {
    Signal,
    StopLoss,
    TakeProfit,
    MaxHolding,
    /// Sold to its target weight of zero at a rebalance.
    Rebalance,
    /// Still held at the last bar (valued at its last close).
    Open,
}

/// One filled order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Order {
    pub bar: usize,
    pub symbol: usize,
    /// Bought (positive) or sold (negative).
    pub units: f64,
    /// The fill after slippage.
    pub price: f64,
    pub fee: f64,
}

/// A position from its first buy until it is flat again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundTrip {
    pub symbol: usize,
    pub entry_signal_bar: usize,
    pub entry_bar: usize,
    /// The first buy's fill after slippage.
    pub entry_price: f64,
    /// The most units held.
    pub units: f64,
    /// Paid for every buy, commissions included.
    pub bought: f64,
    /// The buys' value at their fills, commissions not included (the
    /// most units times the entry price for a trip of one buy).
    pub cost: f64,
    /// Received for every sale net of commissions (an open trip: its value
    /// at the last close).
    pub sold: f64,
    pub exit_bar: Option<usize>,
    /// The last sale's fill after slippage (open: the last close).
    pub exit_price: f64,
    pub reason: ExitReason,
    /// Commissions paid on every buy and sale of the trip.
    pub fees: f64,
    /// Bars from the entry to the exit (open: to the last bar).
    pub bars_held: usize,
}

impl RoundTrip {
    pub fn profit(&self) -> f64 {
        self.sold - self.bought
    }

    /// Profit (net of every commission) over the buys' value at their
    /// fills, as a single backtest's trade return and vectorbt's count it.
    pub fn ret(&self) -> f64 {
        if self.cost > 0.0 {
            self.profit() / self.cost
        } else {
            0.0
        }
    }
}

/// What a run gives; series cover the window, one value per bar.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub equity: Vec<f64>,
    pub cash: Vec<f64>,
    /// The open positions' value at each close.
    pub exposure: Vec<f64>,
    /// Value bought and sold on each bar (commissions not included).
    pub traded: Vec<f64>,
    pub orders: Vec<Order>,
    pub trips: Vec<RoundTrip>,
    /// Money each symbol made, net of costs, open positions at their last close.
    pub profit: Vec<f64>,
    /// Per requested snapshot bar: each held symbol's weight at its close.
    pub snapshots: Vec<Vec<(usize, f64)>>,
    /// Entries that fired with no free slot.
    pub crowded_out: usize,
}

/// The per-bar bookkeeping both modes end each bar with.
pub(crate) struct Recorder<'a> {
    out: Outcome,
    snapshots: &'a [usize],
    next_snapshot: usize,
    orders_seen: usize,
    /// The last bar marked (what open trips are held to).
    last_bar: usize,
}

impl<'a> Recorder<'a> {
    pub(crate) fn new(common: &'a Common, bars: usize) -> Self {
        let w = bars.saturating_sub(common.start);
        Recorder {
            out: Outcome {
                equity: Vec::with_capacity(w),
                cash: Vec::with_capacity(w),
                exposure: Vec::with_capacity(w),
                traded: Vec::with_capacity(w),
                snapshots: Vec::with_capacity(common.snapshots.len()),
                ..Outcome::default()
            },
            snapshots: &common.snapshots,
            next_snapshot: 0,
            orders_seen: 0,
            last_bar: common.start,
        }
    }

    pub(crate) fn crowded_out(&mut self, k: usize) {
        self.out.crowded_out += k;
    }

    /// Marks bar `bar` at its closes.
    pub(crate) fn bar(&mut self, book: &mut book::Book, panel: &Panel, bar: usize) {
        self.last_bar = bar;
        let (equity, held) = book.mark(|s| panel.close[s][bar]);
        let traded: f64 = book.orders[self.orders_seen..]
            .iter()
            .map(|o| (o.units * o.price).abs())
            .sum();
        self.orders_seen = book.orders.len();
        self.out.equity.push(equity);
        self.out.cash.push(book.cash);
        self.out.exposure.push(held);
        self.out.traded.push(traded);
        while self.next_snapshot < self.snapshots.len() && self.snapshots[self.next_snapshot] <= bar
        {
            let at = self.snapshots[self.next_snapshot];
            let mut w = Vec::new();
            if at == bar && equity != 0.0 {
                for &s in &book.open {
                    w.push((s, book.units(s) * book.last[s] / equity));
                }
                w.sort_by_key(|x| x.0);
            }
            self.out.snapshots.push(w);
            self.next_snapshot += 1;
        }
    }

    pub(crate) fn finish(mut self, mut book: book::Book) -> Outcome {
        // Snapshots past the last bar stay empty.
        while self.out.snapshots.len() < self.snapshots.len() {
            self.out.snapshots.push(Vec::new());
        }
        book.finish(self.last_bar);
        self.out.orders = book.orders;
        self.out.trips = book.trips;
        self.out.profit = book.profit;
        self.out
    }
}
