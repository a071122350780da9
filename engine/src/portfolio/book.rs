//! The account of a portfolio: one pool of cash, units per symbol, every
//! order and round trip, each symbol's profit. Orders fill as vectorbt's
//! `buy_nb`/`sell_nb` fill them (its `Portfolio` with `cash_sharing`), so the
//! two agree to rounding: slippage moves the price against the trader,
//! commission is a fraction of the traded value paid from cash, and a buy
//! that the buying power cannot pay is cut to what it can.

use super::{Costs, ExitReason, Order, RoundTrip};

/// vectorbt's tolerance for "enough cash" (`is_close_or_less_nb`): a cost
/// within one part in 10^9 of the cash is paid in full.
const REL_TOL: f64 = 1e-9;
const ABS_TOL: f64 = 1e-12;

fn close_or_less(a: f64, b: f64) -> bool {
    a < b || (a - b).abs() <= (REL_TOL * a.abs().max(b.abs())).max(ABS_TOL)
}

/// Above zero (not NaN).
pub(crate) fn positive(x: f64) -> bool {
    x > 0.0
}

/// An open position: its units and the round trip it belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Held {
    pub units: f64,
    /// Index into [`Book::trips`].
    pub trip: usize,
}

#[derive(Debug, Clone)]
pub struct Book {
    pub costs: Costs,
    pub cash: f64,
    /// Per symbol; `None` when flat.
    pub held: Vec<Option<Held>>,
    /// The last finite close seen per symbol (what an open position is
    /// marked at on a bar without a price).
    pub last: Vec<f64>,
    pub orders: Vec<Order>,
    pub trips: Vec<RoundTrip>,
    /// Money each symbol made, net of costs: proceeds less what was paid,
    /// plus the open position's value once [`Book::finish`] marks it.
    pub profit: Vec<f64>,
    /// Symbols held, in the order they were entered.
    pub open: Vec<usize>,
}

impl Book {
    pub fn new(symbols: usize, capital: f64, costs: Costs) -> Self {
        Book {
            costs,
            cash: capital,
            held: vec![None; symbols],
            last: vec![f64::NAN; symbols],
            orders: Vec::new(),
            trips: Vec::new(),
            profit: vec![0.0; symbols],
            open: Vec::new(),
        }
    }

    pub fn units(&self, symbol: usize) -> f64 {
        self.held[symbol].map_or(0.0, |h| h.units)
    }

    /// Cash plus the open positions at `price(symbol)` (the last close
    /// where that is not finite).
    pub fn value(&self, price: impl Fn(usize) -> f64) -> f64 {
        self.cash
            + self
                .open
                .iter()
                .map(|&s| {
                    let p = price(s);
                    let p = if p.is_finite() { p } else { self.last[s] };
                    self.units(s) * p
                })
                .sum::<f64>()
    }

    /// What a buy may spend: the cash, and with leverage above 1 that much
    /// more of the account's `value` on credit.
    pub fn buying_power(&self, value: f64) -> f64 {
        let credit = (self.costs.max_leverage - 1.0).max(0.0) * value.max(0.0);
        (self.cash + credit).max(0.0)
    }

    /// Buys up to `units` (infinite: as many as `limit` pays for) at
    /// `price` on `bar`, spending at most `limit`. Answers the units
    /// bought (0 when none could be).
    pub fn buy(
        &mut self,
        bar: usize,
        signal_bar: usize,
        symbol: usize,
        units: f64,
        price: f64,
        limit: f64,
    ) -> f64 {
        let c = &self.costs;
        let adj = price * (1.0 + c.slippage);
        let whole = |u: f64| if c.fractional { u } else { u.floor() };
        if !positive(adj) || !positive(limit) || !positive(units) {
            return 0.0;
        }
        let want = whole(units);
        let (size, fee) =
            if want.is_finite() && close_or_less(want * adj * (1.0 + c.commission), limit) {
                (want, want * adj * c.commission)
            } else {
                let max_req = limit / (1.0 + c.commission);
                let size = whole(max_req / adj);
                let fee = if c.fractional {
                    limit - max_req
                } else {
                    size * adj * c.commission
                };
                (size, fee)
            };
        if !positive(size) || size < 1e-12 {
            return 0.0;
        }
        let paid = size * adj + fee;
        self.cash -= paid;
        self.profit[symbol] -= paid;
        self.last[symbol] = price;
        self.orders.push(Order {
            bar,
            symbol,
            units: size,
            price: adj,
            fee,
        });
        match &mut self.held[symbol] {
            Some(h) => {
                h.units += size;
                let t = &mut self.trips[h.trip];
                t.bought += paid;
                t.cost += size * adj;
                t.fees += fee;
                t.units = t.units.max(h.units);
            }
            None => {
                self.held[symbol] = Some(Held {
                    units: size,
                    trip: self.trips.len(),
                });
                self.open.push(symbol);
                self.trips.push(RoundTrip {
                    symbol,
                    entry_signal_bar: signal_bar,
                    entry_bar: bar,
                    entry_price: adj,
                    units: size,
                    bought: paid,
                    cost: size * adj,
                    sold: 0.0,
                    exit_bar: None,
                    exit_price: f64::NAN,
                    reason: ExitReason::Open,
                    fees: fee,
                    bars_held: 0,
                });
            }
        }
        size
    }

    /// Sells `units` of `symbol` (all it holds at most) at `price` on `bar`.
    pub fn sell(&mut self, bar: usize, symbol: usize, units: f64, price: f64, reason: ExitReason) {
        let Some(h) = self.held[symbol] else {
            return;
        };
        let c = &self.costs;
        let size = if units >= h.units {
            h.units
        } else if c.fractional {
            units
        } else {
            units.floor()
        };
        if !positive(size) || !positive(price) {
            return;
        }
        let adj = price * (1.0 - c.slippage);
        let gross = size * adj;
        let fee = gross * c.commission;
        let got = gross - fee;
        self.cash += got;
        self.profit[symbol] += got;
        self.last[symbol] = price;
        self.orders.push(Order {
            bar,
            symbol,
            units: -size,
            price: adj,
            fee,
        });
        let t = &mut self.trips[h.trip];
        t.sold += got;
        t.fees += fee;
        if size >= h.units {
            t.exit_bar = Some(bar);
            t.bars_held = bar - t.entry_bar;
            t.exit_price = adj;
            t.reason = reason;
            self.held[symbol] = None;
            self.open.retain(|&s| s != symbol);
        } else {
            self.held[symbol] = Some(Held {
                units: h.units - size,
                ..h
            });
        }
    }

    /// Notes each held symbol's close of `bar` as its last, and answers the
    /// account's value and the open positions' value at those closes.
    pub fn mark(&mut self, close: impl Fn(usize) -> f64) -> (f64, f64) {
        let mut held = 0.0;
        for &s in &self.open {
            let p = close(s);
            if p.is_finite() {
                self.last[s] = p;
            }
            held += self.held[s].map_or(0.0, |h| h.units) * self.last[s];
        }
        (self.cash + held, held)
    }

    /// Adds each open position's value at its last close to its symbol's
    /// profit and its round trip's proceeds (open trips stay open, held
    /// until `last_bar`, the last bar marked).
    pub fn finish(&mut self, last_bar: usize) {
        for &s in &self.open {
            if let Some(h) = self.held[s] {
                let v = h.units * self.last[s];
                self.profit[s] += v;
                let t = &mut self.trips[h.trip];
                t.sold += v;
                t.exit_price = self.last[s];
                t.bars_held = last_bar.saturating_sub(t.entry_bar);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn costs(commission: f64, slippage: f64, fractional: bool) -> Costs {
        Costs {
            commission,
            slippage,
            fractional,
            max_leverage: 1.0,
        }
    }

    #[test]
    fn a_buy_the_cash_cannot_pay_is_cut_to_what_it_can_fees_included() {
        let mut b = Book::new(2, 1_000.0, costs(0.01, 0.0, true));
        // 20 units at 100 cost 2,020: cut to 1,000 / 1.01 / 100.
        let got = b.buy(0, 0, 0, 20.0, 100.0, b.cash);
        assert!((got - 1_000.0 / 1.01 / 100.0).abs() < 1e-12);
        assert!(b.cash.abs() < 1e-9);
        assert!((b.orders[0].fee - (1_000.0 - 1_000.0 / 1.01)).abs() < 1e-9);
        // Whole units: 9 at 100 with a 1% fee is 909.
        let mut b = Book::new(1, 1_000.0, costs(0.01, 0.0, false));
        assert_eq!(b.buy(0, 0, 0, f64::INFINITY, 100.0, 1_000.0), 9.0);
        assert!((b.cash - (1_000.0 - 909.0)).abs() < 1e-9);
    }

    #[test]
    fn slippage_moves_both_fills_against_the_trader_and_profit_adds_up() {
        let mut b = Book::new(1, 1_000.0, costs(0.001, 0.01, true));
        b.buy(0, 0, 0, 5.0, 100.0, 1_000.0);
        assert_eq!(b.orders[0].price, 101.0);
        b.sell(3, 0, f64::INFINITY, 110.0, ExitReason::Signal);
        assert_eq!(b.orders[1].price, 108.9);
        let paid = 5.0 * 101.0 * 1.001;
        let got = 5.0 * 108.9 * 0.999;
        assert!((b.profit[0] - (got - paid)).abs() < 1e-9);
        assert!((b.cash - (1_000.0 - paid + got)).abs() < 1e-9);
        let t = &b.trips[0];
        assert_eq!(
            (t.entry_bar, t.exit_bar, t.reason),
            (0, Some(3), ExitReason::Signal)
        );
        assert!(b.open.is_empty() && b.held[0].is_none());
    }

    #[test]
    fn a_trip_s_fees_are_both_sides_commissions_and_its_bars_run_to_the_exit_or_the_end() {
        let mut b = Book::new(2, 10_000.0, costs(0.002, 0.01, true));
        // Symbol 0: 10 units on bar 2 (fill 50.5), 5 more on bar 4 (fill
        // 60.6), 6 sold on bar 5 (fill 69.3) and the other 9 on bar 7 (fill 79.2).
        b.buy(2, 1, 0, 10.0, 50.0, b.cash);
        b.buy(4, 3, 0, 5.0, 60.0, b.cash);
        b.sell(5, 0, 6.0, 70.0, ExitReason::Signal);
        assert_eq!(b.trips[0].exit_bar, None);
        b.sell(7, 0, f64::INFINITY, 80.0, ExitReason::TakeProfit);
        // Symbol 1: 20 units on bar 6 (fill 20.2), never sold.
        b.buy(6, 5, 1, 20.0, 20.0, b.cash);
        b.mark(|s| [80.0, 25.0][s]);
        b.finish(9);
        let t = &b.trips[0];
        let fees = 0.002 * (10.0 * 50.5 + 5.0 * 60.6 + 6.0 * 69.3 + 9.0 * 79.2);
        assert!((t.fees - fees).abs() < 1e-12, "{} vs {fees}", t.fees);
        let paid: f64 = b.orders[..4].iter().map(|o| o.fee).sum();
        assert!((t.fees - paid).abs() < 1e-12);
        assert_eq!((t.exit_bar, t.bars_held), (Some(7), 5));
        // Profit is what was got less what was paid, both net of the fees;
        // the return is it over the buys' value at their fills.
        let cost = 10.0 * 50.5 + 5.0 * 60.6;
        let gross = 6.0 * 69.3 + 9.0 * 79.2 - cost;
        assert!((t.profit() - (gross - fees)).abs() < 1e-9);
        assert!((t.ret() - (gross - fees) / cost).abs() < 1e-12);
        // The open trip: its buy's commission; held from bar 6 to the last, 9.
        let o = &b.trips[1];
        assert!((o.fees - 0.002 * 20.0 * 20.2).abs() < 1e-12);
        assert_eq!((o.exit_bar, o.bars_held, o.exit_price), (None, 3, 25.0));
    }

    #[test]
    fn leverage_lends_against_the_account_and_without_it_cash_stays_positive() {
        let mut b = Book::new(
            1,
            1_000.0,
            Costs {
                max_leverage: 2.0,
                ..costs(0.0, 0.0, true)
            },
        );
        assert_eq!(b.buying_power(1_000.0), 2_000.0);
        b.buy(0, 0, 0, f64::INFINITY, 10.0, b.buying_power(1_000.0));
        assert_eq!((b.units(0), b.cash), (200.0, -1_000.0));
        let mut b = Book::new(1, 1_000.0, costs(0.0, 0.0, true));
        b.buy(0, 0, 0, 500.0, 10.0, b.buying_power(1_000.0));
        assert_eq!((b.units(0), b.cash), (100.0, 0.0));
    }
}
