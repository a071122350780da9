//! The scanner backtest's portfolio: each session's ranked candidates
//! entered at the next session's open, sized by Kelly or a fixed fraction
//! of their side's capital, in whole shares, and closed on daily closes by
//! profit target, stop loss or time. Pure and deterministic: the same
//! inputs give the same bits.

use super::fire::Direction;
use super::stats::ExitReason;

/// One scanner item that may be traded, on session `day` (its signal's close).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub day: usize,
    /// Index into the price table.
    pub symbol: usize,
    pub direction: Direction,
    /// Percent.
    pub profit_target: f64,
    /// Percent, positive.
    pub stop_loss: f64,
    /// Sessions held at most, the entry session included.
    pub hold: usize,
    /// Percent.
    pub win_rate: f64,
    /// Percent (positive).
    pub avg_win: f64,
    /// Percent (at most 0).
    pub avg_loss: f64,
}

/// How a trade's money is set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Allocation {
    /// The Kelly fraction of the item's history, capped at [`KELLY_CAP`].
    Kelly,
    /// This fraction of the side's capital, (0, 1].
    Fixed(f64),
}

/// The Kelly fraction never stakes more than this share of a side.
pub const KELLY_CAP: f64 = 0.25;

/// Kelly fraction f = W - (1 - W) / R, W the win rate, R the average win
/// over the average loss; 0 when the history shows no edge (no wins, or
/// f <= 0); W itself when nothing was lost; at most [`KELLY_CAP`].
pub fn kelly(win_rate: f64, avg_win: f64, avg_loss: f64) -> f64 {
    let w = win_rate / 100.0;
    if w <= 0.0 || avg_win <= 0.0 {
        return 0.0;
    }
    let f = if avg_loss >= 0.0 {
        w
    } else {
        w - (1.0 - w) / (avg_win / -avg_loss)
    };
    f.clamp(0.0, KELLY_CAP)
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub capital: f64,
    /// Shares of the capital for long and for short trades (summing to at most 1).
    pub long_share: f64,
    pub short_share: f64,
    /// Percent of the traded value, paid on entry and on exit.
    pub commission: f64,
    pub allocation: Allocation,
    /// New trades a session at most.
    pub daily_limit: usize,
}

/// A symbol's opens and closes on the calendar's sessions (NaN: no bar).
#[derive(Debug, Clone, Default)]
pub struct Prices {
    pub open: Vec<f64>,
    pub close: Vec<f64>,
}

/// A trade the portfolio made.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    /// Index of its candidate in the input.
    pub candidate: usize,
    pub entry_day: usize,
    pub entry_price: f64,
    pub shares: f64,
    pub fraction: f64,
    /// Closed: the exit session, price and reason.
    pub exit: Option<(usize, f64, ExitReason)>,
    /// The last close seen (the exit price once closed).
    pub last_price: f64,
    /// Percent of the entry value, net of both commissions (open: marked at
    /// the last close, exit commission included).
    pub ret: f64,
    /// Money made, net of commissions (open: as if closed at the last close).
    pub profit: f64,
}

/// What the simulation gives.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    pub positions: Vec<Position>,
    /// Per session, after the session's exits and entries, marked at its closes.
    pub equity: Vec<f64>,
    pub cash: Vec<f64>,
    /// Market value of the open positions per session.
    pub exposure: Vec<f64>,
    /// Trades that did not fit the cash (or whose symbol had no bar to enter on).
    pub skipped: usize,
}

fn sign(d: Direction) -> f64 {
    match d {
        Direction::Long => 1.0,
        Direction::Short => -1.0,
    }
}

/// Runs `candidates` (each session's list already filtered and ranked best
/// first; `by_day[s]` holds indices into `candidates`) over `sessions`
/// sessions of `prices`.
pub fn simulate(
    sessions: usize,
    prices: &[Prices],
    candidates: &[Candidate],
    by_day: &[Vec<usize>],
    s: &Settings,
) -> Outcome {
    let c = s.commission / 100.0;
    let mut cash = s.capital;
    let mut out = Outcome::default();
    // Open positions: index into out.positions, and the cash each reserved.
    let mut open: Vec<(usize, f64)> = Vec::new();
    for day in 0..sessions {
        // Entries: yesterday's first `daily_limit` candidates (its orders)
        // at today's open.
        if day > 0 {
            let mut today: Vec<usize> = Vec::new();
            let orders = by_day.get(day - 1).map(Vec::as_slice).unwrap_or(&[]);
            for &k in orders.iter().take(s.daily_limit) {
                let cand = &candidates[k];
                let held = open
                    .iter()
                    .any(|(p, _)| candidates[out.positions[*p].candidate].symbol == cand.symbol)
                    || today.contains(&cand.symbol);
                let fraction = match s.allocation {
                    Allocation::Kelly => kelly(cand.win_rate, cand.avg_win, cand.avg_loss),
                    Allocation::Fixed(f) => f,
                };
                if held || fraction <= 0.0 {
                    continue;
                }
                let price = prices[cand.symbol].open[day];
                let side = match cand.direction {
                    Direction::Long => s.long_share,
                    Direction::Short => s.short_share,
                };
                let shares = if price.is_finite() && price > 0.0 {
                    (fraction * side * s.capital / price).floor()
                } else {
                    0.0
                };
                // Longs pay for their shares; shorts set the same aside as
                // collateral. Both pay the entry commission.
                let reserve = shares * price * (1.0 + c);
                if shares < 1.0 || reserve > cash {
                    out.skipped += 1;
                    continue;
                }
                cash -= reserve;
                today.push(cand.symbol);
                open.push((out.positions.len(), reserve));
                out.positions.push(Position {
                    candidate: k,
                    entry_day: day,
                    entry_price: price,
                    shares,
                    fraction,
                    exit: None,
                    last_price: price,
                    ret: 0.0,
                    profit: 0.0,
                });
            }
        }
        // Exits on today's closes (an entry is checked on its own session).
        let mut still = Vec::with_capacity(open.len());
        let mut exposure = 0.0;
        for (p, reserve) in open.drain(..) {
            let pos = &mut out.positions[p];
            let cand = &candidates[pos.candidate];
            let close = prices[cand.symbol].close[day];
            if close.is_finite() {
                pos.last_price = close;
            }
            let dir = sign(cand.direction);
            let gross = dir * (pos.last_price / pos.entry_price - 1.0) * 100.0;
            let reason = if !close.is_finite() {
                None
            } else if gross >= cand.profit_target {
                Some(ExitReason::ProfitTarget)
            } else if gross <= -cand.stop_loss {
                Some(ExitReason::StopLoss)
            } else if day + 1 >= pos.entry_day + cand.hold {
                Some(ExitReason::TimeIsUp)
            } else {
                None
            };
            let value = pos.shares * pos.entry_price;
            let pnl = dir * pos.shares * (pos.last_price - pos.entry_price);
            let exit_fee = pos.shares * pos.last_price * c;
            pos.profit = pnl - value * c - exit_fee;
            pos.ret = pos.profit / value * 100.0;
            // What closing now returns to cash: the entry value set aside
            // (the entry commission is spent), plus or minus the move, less
            // the exit commission.
            let back = reserve - value * c + pnl - exit_fee;
            match reason {
                Some(r) => {
                    pos.exit = Some((day, pos.last_price, r));
                    cash += back;
                }
                None => {
                    exposure += pos.shares * pos.last_price;
                    still.push((p, reserve));
                }
            }
        }
        open = still;
        let marked: f64 = open
            .iter()
            .map(|(p, reserve)| {
                let pos = &out.positions[*p];
                let dir = sign(candidates[pos.candidate].direction);
                reserve - pos.shares * pos.entry_price * c
                    + dir * pos.shares * (pos.last_price - pos.entry_price)
                    - pos.shares * pos.last_price * c
            })
            .sum();
        out.cash.push(cash);
        out.equity.push(cash + marked);
        out.exposure.push(exposure);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    #[test]
    fn kelly_by_hand() {
        // W = 0.6, R = 2 / 1: f = 0.6 - 0.4 / 2 = 0.4, capped at 0.25.
        assert_eq!(kelly(60.0, 2.0, -1.0), 0.25);
        // W = 0.5, R = 1.5: f = 0.5 - 0.5 / 1.5 = 1/6.
        assert!((kelly(50.0, 1.5, -1.0) - 1.0 / 6.0).abs() < 1e-15);
        // No edge, no wins, no history: nothing staked.
        assert_eq!(kelly(40.0, 1.0, -1.0), 0.0);
        assert_eq!(kelly(0.0, 0.0, -1.0), 0.0);
        // Never lost: the win rate, capped.
        assert_eq!(kelly(20.0, 1.0, 0.0), 0.2);
    }

    fn cand(day: usize, symbol: usize, direction: Direction) -> Candidate {
        Candidate {
            day,
            symbol,
            direction,
            profit_target: 10.0,
            stop_loss: 5.0,
            hold: 3,
            win_rate: 50.0,
            avg_win: 1.5,
            avg_loss: -1.0,
        }
    }

    fn flat(n: usize, open: f64, close: f64) -> Prices {
        Prices {
            open: vec![open; n],
            close: vec![close; n],
        }
    }

    fn settings(allocation: Allocation) -> Settings {
        Settings {
            capital: 10_000.0,
            long_share: 1.0,
            short_share: 0.0,
            commission: 0.0,
            allocation,
            daily_limit: 3,
        }
    }

    #[test]
    fn enters_next_open_in_whole_shares_and_exits_on_time() {
        // A long on day 0 enters at day 1's open of 100: Kelly 1/6 of
        // 10,000 is 1,666.67 -> 16 shares; held 3 sessions (1, 2, 3).
        let prices = vec![flat(6, 100.0, 101.0)];
        let cands = vec![cand(0, 0, Long)];
        let by_day = vec![vec![0]];
        let o = simulate(6, &prices, &cands, &by_day, &settings(Allocation::Kelly));
        let p = &o.positions[0];
        assert_eq!((p.entry_day, p.entry_price, p.shares), (1, 100.0, 16.0));
        assert_eq!(p.exit, Some((3, 101.0, ExitReason::TimeIsUp)));
        assert!((p.profit - 16.0).abs() < 1e-12 && (p.ret - 1.0).abs() < 1e-12);
        assert_eq!(o.cash[0], 10_000.0);
        assert_eq!(o.cash[1], 10_000.0 - 1_600.0);
        assert_eq!(o.equity[1], 10_000.0 + 16.0);
        assert_eq!(o.equity[3], 10_016.0);
        assert_eq!(o.exposure[2], 16.0 * 101.0);
        assert_eq!(o.cash[5], 10_016.0);
        assert_eq!(o.exposure[4], 0.0);
    }

    #[test]
    fn targets_stops_shorts_and_commission() {
        let mut up = flat(5, 100.0, 100.0);
        up.close[2] = 111.0; // +11% -> target
        let mut down = flat(5, 50.0, 50.0);
        down.close[1] = 47.0; // -6% long -> stop on the entry session
        let mut short = flat(5, 20.0, 20.0);
        short.close[2] = 17.0; // +15% short -> target
        let prices = vec![up, down, short];
        let cands = vec![cand(0, 0, Long), cand(0, 1, Long), cand(0, 2, Short)];
        let by_day = vec![vec![0, 1, 2]];
        let mut s = settings(Allocation::Fixed(0.1));
        s.long_share = 0.5;
        s.short_share = 0.5;
        s.commission = 1.0;
        let o = simulate(5, &prices, &cands, &by_day, &s);
        let reason = |i: usize| o.positions[i].exit.map(|e| (e.0, e.2));
        assert_eq!(reason(0), Some((2, ExitReason::ProfitTarget)));
        assert_eq!(reason(1), Some((1, ExitReason::StopLoss)));
        assert_eq!(reason(2), Some((2, ExitReason::ProfitTarget)));
        // 0.1 x 5,000: 5 shares at 100, 10 at 50, 25 at 20.
        let shares: Vec<f64> = o.positions.iter().map(|p| p.shares).collect();
        assert_eq!(shares, vec![5.0, 10.0, 25.0]);
        // Long 5 x (111 - 100) = 55, less 1% of 500 and of 555.
        assert!((o.positions[0].profit - (55.0 - 5.0 - 5.55)).abs() < 1e-9);
        // Short 25 x (20 - 17) = 75, less 1% of 500 and of 425.
        assert!((o.positions[2].profit - (75.0 - 5.0 - 4.25)).abs() < 1e-9);
        let total: f64 = o.positions.iter().map(|p| p.profit).sum();
        assert!((o.cash[4] - (10_000.0 + total)).abs() < 1e-9);
        assert_eq!(o.equity[4], o.cash[4]);
    }

    #[test]
    fn the_daily_orders_held_symbols_and_cash_running_out() {
        let prices: Vec<Prices> = (0..5).map(|_| flat(4, 100.0, 100.0)).collect();
        // Day 0: five candidates, two on the same symbol; the limit is 3.
        let cands = vec![
            cand(0, 0, Long),
            cand(0, 0, Long),
            cand(0, 1, Long),
            cand(0, 2, Long),
            cand(0, 3, Long),
        ];
        let by_day = vec![vec![0, 1, 2, 3, 4]];
        let o = simulate(
            4,
            &prices,
            &cands,
            &by_day,
            &settings(Allocation::Fixed(0.4)),
        );
        // The limit makes the first three the day's orders. 0.4 x 10,000 =
        // 40 shares (4,000) each: the repeat symbol is passed over, the other
        // two fit; the fourth and fifth candidates are not orders.
        let entered: Vec<usize> = o.positions.iter().map(|p| p.candidate).collect();
        assert_eq!(entered, vec![0, 2]);
        assert_eq!(o.skipped, 0);
        // At 0.6 (6,000 each) only the first fits; the other two are skipped.
        let fixed = settings(Allocation::Fixed(0.6));
        let o = simulate(4, &prices, &cands, &[vec![0, 2, 3, 4]], &fixed);
        assert_eq!((o.positions.len(), o.skipped), (1, 2));
        assert!(o.cash.iter().all(|c| *c >= 0.0));
        // A limit of 1 takes the best only.
        let mut s = settings(Allocation::Fixed(0.1));
        s.daily_limit = 1;
        let o = simulate(4, &prices, &cands, &by_day, &s);
        assert_eq!(o.positions.len(), 1);
        // No short side: shorts never fit.
        let shorts = vec![cand(0, 0, Short)];
        let o = simulate(
            4,
            &prices,
            &shorts,
            &[vec![0]],
            &settings(Allocation::Fixed(0.1)),
        );
        assert!(o.positions.is_empty());
        assert_eq!(o.skipped, 1);
    }

    #[test]
    fn open_positions_at_the_end_are_marked_and_no_bar_is_skipped() {
        let mut p = flat(3, 100.0, 104.0);
        p.open[1] = f64::NAN;
        let q = flat(3, 50.0, 52.0);
        let cands = vec![cand(0, 0, Long), cand(0, 1, Long)];
        let o = simulate(
            3,
            &[p, q],
            &cands,
            &[vec![0, 1]],
            &settings(Allocation::Fixed(0.1)),
        );
        assert_eq!(o.skipped, 1);
        let pos = &o.positions[0];
        assert_eq!(pos.exit, None);
        assert_eq!(pos.shares, 20.0);
        assert!((pos.profit - 40.0).abs() < 1e-12);
        assert!((o.equity[2] - 10_040.0).abs() < 1e-9);
    }
}
