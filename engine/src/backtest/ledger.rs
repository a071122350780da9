//! The account behind a run, bar by bar and trade by trade: units held,
//! cash, each trade's size and profit and its worst and best moves while
//! held. All per unit of starting capital, on the equity model of
//! [`equity_curve`](super::equity_curve): a trade commits `capital_alloc`
//! of the equity at its entry, bought (or sold short) at the entry fill
//! after slippage, with commission paid from cash on each side.

use super::{Settings, Trade, TradePrice};
use crate::Bars;

/// A trade's account figures, per unit of starting capital.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TradeLedger {
    /// Units bought (sold short), always positive.
    pub units: f64,
    /// The entry's and the exit's fills after slippage (the trade's
    /// prices move them against the trader).
    pub entry_fill: f64,
    pub exit_fill: f64,
    /// Commission of both sides: on the entry's and the exit's value.
    pub fees: f64,
    /// Profit after slippage and commission.
    pub profit: f64,
    /// Bars from the entry fill to the exit fill.
    pub bars_held: usize,
    /// The worst move against the position while held, as a fraction of
    /// the entry fill after slippage (0 or negative).
    pub mae: f64,
    /// The best move for it (0 or positive).
    pub mfe: f64,
}

/// Units held at each bar's close of the window (negative short) and the
/// cash beside them: equity = cash + units x close. The bars held are
/// those the metrics' time in market counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Holdings {
    pub units: Vec<f64>,
    pub cash: Vec<f64>,
}

/// Each trade's figures; `trades` as the run gave them.
pub fn trade_ledger(bars: &Bars, trades: &[Trade], s: &Settings) -> Vec<TradeLedger> {
    let d = s.direction.sign();
    let mut base = 1.0;
    trades
        .iter()
        .map(|t| {
            let entry_eff = t.entry_price * (1.0 + d * s.slippage);
            let exit_eff = t.exit_price * (1.0 - d * s.slippage);
            let committed = base * s.capital_alloc;
            let units = committed / entry_eff;
            let (mae, mfe) = excursions(bars, t, s, entry_eff, exit_eff);
            let l = TradeLedger {
                units,
                entry_fill: entry_eff,
                exit_fill: exit_eff,
                fees: units * (entry_eff + exit_eff) * s.commission,
                profit: committed * t.ret,
                bars_held: t.exit_bar - t.entry_bar,
                mae,
                mfe,
            };
            base *= 1.0 + s.capital_alloc * t.ret;
            l
        })
        .collect()
}

/// The worst and best price reached while the trade was held, against its
/// entry fill (`entry`, after slippage; `exit` the exit's): the fills and
/// the bars from the entry fill to the exit fill, where a fill at a close
/// leaves out the rest of that bar before it (at the entry) and a fill at
/// an open the rest of that bar after it (at the exit).
fn excursions(bars: &Bars, t: &Trade, s: &Settings, entry: f64, exit: f64) -> (f64, f64) {
    let at_close = s.trade_price != TradePrice::NextOpen;
    let (mut low, mut high) = (entry.min(exit), entry.max(exit));
    let last = t.exit_bar.min(bars.len().saturating_sub(1));
    // The exit of a position still open at the end is the last close.
    let exit_at_open = !at_close && t.reason != super::ExitReason::EndOfData;
    for i in t.entry_bar..=last {
        // Part of the bar lies before the entry's fill or after the exit's.
        let partial = (i == t.entry_bar && at_close) || (i == last && exit_at_open);
        if !partial {
            low = low.min(bars.low[i]);
            high = high.max(bars.high[i]);
        }
    }
    let (down, up) = (low / entry - 1.0, high / entry - 1.0);
    match s.direction {
        super::Direction::Long => (down.min(0.0), up.max(0.0)),
        super::Direction::Short => ((-up).min(0.0), (-down).max(0.0)),
    }
}

/// Units and cash at each bar's close of the window (`bars[s.start..]`).
pub fn holdings(bars: &Bars, trades: &[Trade], s: &Settings) -> Holdings {
    let n = bars.len();
    let start = s.start.min(n);
    let d = s.direction.sign();
    let mut h = Holdings {
        units: vec![0.0; n - start],
        cash: Vec::with_capacity(n - start),
    };
    let curve = super::equity_curve(bars, trades, s);
    let ledger = trade_ledger(bars, trades, s);
    for (t, l) in trades.iter().zip(&ledger) {
        // Held at the closes from the entry bar to the one before the exit;
        // one still open at the end, at the last close too (valued, as the
        // equity curve values it, net of the costs of closing it there).
        let end = if t.is_open() {
            t.exit_bar + 1
        } else {
            t.exit_bar
        };
        for i in t.entry_bar.max(start)..end.min(n) {
            h.units[i - start] = d * l.units;
        }
    }
    h.cash = curve
        .iter()
        .zip(&h.units)
        .zip(&bars.close[start..])
        .map(|((e, u), c)| e - u * c)
        .collect();
    h
}

#[cfg(test)]
mod tests {
    use super::super::tests::settings;
    use super::super::{Direction, run};
    use super::*;
    use chrono::NaiveDate;

    /// Opens and closes as given; each bar's high one above the higher of
    /// them and its low one below the lower.
    fn bars(open: &[f64], close: &[f64]) -> Bars {
        let mut b = Bars::default();
        let d0 = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
        for i in 0..close.len() {
            let (o, c) = (open[i], close[i]);
            let t = (d0 + chrono::Days::new(i as u64))
                .and_hms_opt(0, 0, 0)
                .unwrap();
            b.push(t, o, o.max(c) + 1.0, o.min(c) - 1.0, c, 1000.0);
        }
        b
    }

    const OPEN: [f64; 8] = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0];
    const CLOSE: [f64; 8] = [10.5, 11.5, 12.5, 13.5, 13.0, 12.0, 16.5, 17.5];

    fn sig(on: &[usize]) -> Vec<bool> {
        (0..8).map(|i| on.contains(&i)).collect()
    }

    #[test]
    fn a_long_trade_s_units_profit_and_excursions_by_hand() {
        let b = bars(&OPEN, &CLOSE);
        let mut s = settings(TradePrice::CurrentClose);
        (s.capital_alloc, s.commission, s.slippage) = (0.5, 0.001, 0.002);
        let r = run(&b, &sig(&[1]), &sig(&[3]), &s);
        let l = trade_ledger(&b, &r.trades, &s)[0];
        // In at the close of bar 1 (11.5, paid 11.523), out at the close of 3 (13.5, got 13.473).
        let (paid, got) = (11.5 * 1.002, 13.5 * 0.998);
        let units = 0.5 / paid;
        assert!((l.units - units).abs() < 1e-15);
        let profit = units * (got - paid) - 0.001 * units * (paid + got);
        assert!((l.profit - profit).abs() < 1e-15, "{} {profit}", l.profit);
        assert!((l.entry_fill - paid).abs() < 1e-14 && (l.exit_fill - got).abs() < 1e-14);
        let fees = 0.001 * units * (paid + got);
        assert!((l.fees - fees).abs() < 1e-15, "{} {fees}", l.fees);
        // Profit is the fills' difference less the fees.
        assert!((l.profit - (units * (l.exit_fill - l.entry_fill) - l.fees)).abs() < 1e-15);
        assert_eq!(l.bars_held, 2);
        // Bar 1 is left out (filled at its close); bars 2 and 3 whole:
        // lows 11 and 12, highs 13.5 and 14.5; against the fill, 11.523.
        assert!((l.mae - (11.0 / paid - 1.0)).abs() < 1e-15);
        assert!((l.mfe - (14.5 / paid - 1.0)).abs() < 1e-15);
        let h = holdings(&b, &r.trades, &s);
        assert_eq!(h.units, vec![0.0, units, units, 0.0, 0.0, 0.0, 0.0, 0.0]);
        // While held: the starting equity less what was committed and its commission.
        assert!((h.cash[1] - (1.0 - 0.5 - 0.0005)).abs() < 1e-15);
        assert!((h.cash[2] - h.cash[1]).abs() < 1e-15);
        // After: all cash, the start plus the profit.
        assert!((h.cash[3] - (1.0 + profit)).abs() < 1e-15);
        let curve = crate::backtest::equity_curve(&b, &r.trades, &s);
        for (i, e) in curve.iter().enumerate() {
            assert!((h.cash[i] + h.units[i] * b.close[i] - e).abs() < 1e-15);
        }
    }

    #[test]
    fn a_short_trade_filled_at_opens_counts_the_bars_between_its_fills() {
        let b = bars(&OPEN, &CLOSE);
        let mut s = settings(TradePrice::NextOpen);
        s.direction = Direction::Short;
        // Signals on 3 and 5: in at the open of 4 (14), out at the open of 6 (16).
        let r = run(&b, &sig(&[3]), &sig(&[5]), &s);
        let l = trade_ledger(&b, &r.trades, &s)[0];
        assert_eq!(l.bars_held, 2);
        // Short, no costs: the fills are the opens, the profit units x (14 - 16).
        assert_eq!((l.entry_fill, l.exit_fill, l.fees), (14.0, 16.0, 0.0));
        assert!((l.profit - l.units * (14.0 - 16.0)).abs() < 1e-15);
        // Bars 4 and 5 whole (highs 15 and 16, lows 12 and 11); of bar 6 its open.
        assert!((l.mae - -(16.0 / 14.0 - 1.0)).abs() < 1e-15);
        assert!((l.mfe - (1.0 - 11.0 / 14.0)).abs() < 1e-15);
        assert!((l.profit - r.trades[0].ret).abs() < 1e-15);
        let h = holdings(&b, &r.trades, &s);
        assert_eq!(&h.units[3..7], &[0.0, -l.units, -l.units, 0.0]);
        // Short: the proceeds are cash.
        assert!((h.cash[4] - (1.0 + 1.0)).abs() < 1e-12);
    }

    #[test]
    fn a_trade_still_open_at_the_end_is_held_at_the_last_close() {
        let b = bars(&OPEN, &CLOSE);
        let s = settings(TradePrice::CurrentClose);
        let r = run(&b, &sig(&[5]), &sig(&[]), &s);
        assert!(r.trades[0].is_open());
        let h = holdings(&b, &r.trades, &s);
        let held = h.units.iter().filter(|u| **u != 0.0).count();
        assert_eq!(held, 3, "bars 5, 6 and 7");
        assert!((held as f64 / 8.0 * 100.0 - r.metrics.time_in_market).abs() < 1e-12);
    }

    #[test]
    fn later_trades_commit_the_equity_of_their_entry() {
        let b = bars(&OPEN, &CLOSE);
        let mut s = settings(TradePrice::CurrentClose);
        s.capital_alloc = 0.25;
        let r = run(&b, &sig(&[0, 4]), &sig(&[2, 6]), &s);
        let ls = trade_ledger(&b, &r.trades, &s);
        assert_eq!(ls.len(), 2);
        let after_first = 1.0 + 0.25 * r.trades[0].ret;
        assert!((ls[1].units - after_first * 0.25 / 13.0).abs() < 1e-15);
        let curve = crate::backtest::equity_curve(&b, &r.trades, &s);
        assert!((curve[7] - (1.0 + ls[0].profit + ls[1].profit)).abs() < 1e-15);
    }
}
