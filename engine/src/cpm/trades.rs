//! The pattern-match backtest: after each match, a position from the
//! window's last close held for a fixed number of bars, and the statistics
//! of those trades (analytics 2.4). Returns are in percent.

use super::matches::Match;
use crate::stats::TradeReturns;
use chrono::NaiveDate;

/// One trade after a match: in at the close of `entry` (the window's last
/// bar), out at the close of `exit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trade {
    pub found: Match,
    pub entry: usize,
    pub exit: usize,
    /// Percent, in the position's direction.
    pub ret: f64,
    /// Best return reached at a close between entry and exit, at least 0.
    pub max_gain: f64,
    /// Worst return reached at a close between entry and exit, at most 0.
    pub max_loss: f64,
}

/// The trade after `found`, held `hold` bars; `None` when the data end
/// before the holding period does.
pub fn trade(closes: &[f64], found: &Match, hold: usize, short: bool) -> Option<Trade> {
    let entry = found.end;
    let exit = entry + hold;
    if hold == 0 || exit >= closes.len() {
        return None;
    }
    let sign = if short { -1.0 } else { 1.0 };
    let at = |k: usize| sign * (closes[k] / closes[entry] - 1.0) * 100.0;
    let (mut best, mut worst) = (0.0f64, 0.0f64);
    for k in entry + 1..=exit {
        let r = at(k);
        best = best.max(r);
        worst = worst.min(r);
    }
    Some(Trade {
        found: *found,
        entry,
        exit,
        ret: at(exit),
        max_gain: best,
        max_loss: worst,
    })
}

/// `backtest_info`'s figures (percent unless a count).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// The trades compounded in order of entry: prod(1 + r) - 1.
    pub total_return: f64,
    pub returns: TradeReturns,
    /// Holding the symbol from the lookback's first close to the last.
    pub buy_and_hold: f64,
    /// Share of the lookback's bars after the first during which a trade was open.
    pub time_in_market: f64,
}

/// Statistics of `trades` (in any order) over the lookback bars
/// `first_bar..closes.len()`.
pub fn summary(trades: &[Trade], closes: &[f64], first_bar: usize) -> Summary {
    let mut s = Summary::default();
    let n = closes.len();
    if first_bar + 1 < n {
        s.buy_and_hold = (closes[n - 1] / closes[first_bar] - 1.0) * 100.0;
        // Bars first_bar+1..n can each be held; a trade holds entry+1..=exit.
        let mut held = vec![false; n];
        for t in trades {
            held[(t.entry + 1).max(first_bar + 1)..=t.exit].fill(true);
        }
        let count = held[first_bar + 1..].iter().filter(|h| **h).count();
        s.time_in_market = count as f64 / (n - first_bar - 1) as f64 * 100.0;
    }
    if trades.is_empty() {
        return s;
    }
    let mut ordered: Vec<&Trade> = trades.iter().collect();
    ordered.sort_by_key(|t| (t.entry, t.found.start));
    let returns: Vec<f64> = ordered.iter().map(|t| t.ret).collect();
    s.total_return = (returns.iter().fold(1.0, |acc, r| acc * (1.0 + r / 100.0)) - 1.0) * 100.0;
    s.returns = TradeReturns::of(&returns);
    s
}

/// Labels of the market a trade entered: `Bull` when the benchmark's close
/// is above its 200-session simple average on the entry date (or the
/// session before it), `Bear` when at or below; `Rec` inside a US recession.
#[derive(Debug, Clone, Default)]
pub struct MarketLabels {
    dates: Vec<NaiveDate>,
    above: Vec<Option<bool>>,
    /// (peak month, trough month) as first days of the months.
    recessions: Vec<(NaiveDate, NaiveDate)>,
}

/// Sessions in the benchmark average.
pub const TREND_SESSIONS: usize = 200;

impl MarketLabels {
    /// From the benchmark's daily dates and closes and the recessions as
    /// (peak, trough) dates; a recession covers the months after its peak's
    /// month through its trough's month, as the NBER dates them.
    pub fn new(dates: &[NaiveDate], closes: &[f64], recessions: &[(NaiveDate, NaiveDate)]) -> Self {
        let ma = crate::indicators::sma(closes, TREND_SESSIONS);
        MarketLabels {
            dates: dates.to_vec(),
            above: closes
                .iter()
                .zip(&ma)
                .map(|(c, a)| (!a.is_nan()).then_some(c > a))
                .collect(),
            recessions: recessions
                .iter()
                .map(|(p, t)| (month_start(*p), month_start(*t)))
                .collect(),
        }
    }

    pub fn labels(&self, date: NaiveDate) -> Vec<&'static str> {
        let mut out = Vec::new();
        let i = self.dates.partition_point(|d| *d <= date);
        if let Some(Some(above)) = i.checked_sub(1).map(|k| self.above[k]) {
            out.push(if above { "Bull" } else { "Bear" });
        }
        let month = month_start(date);
        if self
            .recessions
            .iter()
            .any(|(p, t)| *p < month && month <= *t)
        {
            out.push("Rec");
        }
        out
    }
}

fn month_start(d: NaiveDate) -> NaiveDate {
    use chrono::Datelike;
    d.with_day(1).expect("day 1 exists")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(start: usize, end: usize) -> Match {
        Match {
            start,
            end,
            corr: 90.0,
        }
    }

    #[test]
    fn trades_by_hand() {
        let closes = [10.0, 11.0, 12.0, 9.0, 13.0, 12.0, 15.0];
        // Long from bar 2 (12) for 3 bars: 9, 13, 12 -> -25%, +8.33%, 0%.
        let t = trade(&closes, &found(0, 2), 3, false).unwrap();
        assert_eq!((t.entry, t.exit), (2, 5));
        assert!((t.ret - 0.0).abs() < 1e-12);
        assert!((t.max_gain - 100.0 / 12.0).abs() < 1e-12);
        assert!((t.max_loss + 25.0).abs() < 1e-12);
        // Short: signs flip.
        let s = trade(&closes, &found(0, 2), 3, true).unwrap();
        assert!((s.max_gain - 25.0).abs() < 1e-12);
        assert!((s.max_loss + 100.0 / 12.0).abs() < 1e-12);
        // Too close to the end.
        assert!(trade(&closes, &found(2, 4), 3, false).is_none());
        assert!(trade(&closes, &found(2, 3), 3, false).is_some());
    }

    #[test]
    fn summary_by_hand() {
        let closes = [10.0, 11.0, 12.0, 9.0, 13.0, 12.0, 15.0, 15.0, 16.0, 20.0];
        let a = trade(&closes, &found(0, 1), 2, false).unwrap(); // 11 -> 9: -18.18%
        let b = trade(&closes, &found(2, 4), 2, false).unwrap(); // 13 -> 15: +15.38%
        let c = trade(&closes, &found(4, 6), 1, false).unwrap(); // 15 -> 15: 0
        let s = summary(&[c, b, a], &closes, 0);
        let (ra, rb) = (-2.0 / 11.0 * 100.0, 2.0 / 13.0 * 100.0);
        assert!(
            (s.total_return - ((1.0 + ra / 100.0) * (1.0 + rb / 100.0) - 1.0) * 100.0).abs() < 1e-9
        );
        assert!((s.returns.average - (ra + rb) / 3.0).abs() < 1e-12);
        assert_eq!(s.returns.median, 0.0);
        assert_eq!(
            (s.returns.trades, s.returns.positive, s.returns.negative),
            (3, 1, 1)
        );
        assert!((s.returns.win_rate - 100.0 / 3.0).abs() < 1e-12);
        assert!(
            (s.returns.average_win - rb).abs() < 1e-12
                && (s.returns.average_loss - ra).abs() < 1e-12
        );
        assert!((s.buy_and_hold - 100.0).abs() < 1e-12);
        // Held: bars 2-3 (a), 5-6 (b), 7 (c): 5 of the 9 bars after the first.
        assert!((s.time_in_market - 500.0 / 9.0).abs() < 1e-12);
        let none = summary(&[], &closes, 5);
        assert_eq!(none.returns.trades, 0);
        assert!((none.buy_and_hold - (20.0 / 12.0 - 1.0) * 100.0).abs() < 1e-12);
        assert_eq!(none.time_in_market, 0.0);
    }

    #[test]
    fn market_labels() {
        let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day).unwrap();
        let dates: Vec<NaiveDate> = (0..250)
            .map(|k| d(2007, 1, 1) + chrono::Days::new(k))
            .collect();
        // Rising for 220 sessions, then a crash below the average.
        let closes: Vec<f64> = (0..250)
            .map(|k| if k < 220 { 100.0 + k as f64 } else { 50.0 })
            .collect();
        let l = MarketLabels::new(&dates, &closes, &[(d(2007, 12, 1), d(2009, 6, 1))]);
        assert!(l.labels(dates[100]).is_empty()); // no average yet
        assert_eq!(l.labels(dates[210]), vec!["Bull"]);
        assert_eq!(l.labels(dates[230]), vec!["Bear"]);
        // The peak month itself is not a recession month; the trough month is.
        assert_eq!(l.labels(d(2007, 12, 31)), vec!["Bear"]);
        assert_eq!(l.labels(d(2008, 1, 2)), vec!["Bear", "Rec"]);
        assert_eq!(l.labels(d(2009, 6, 30)), vec!["Bear", "Rec"]);
        assert_eq!(l.labels(d(2009, 7, 1)), vec!["Bear"]);
        assert!(l.labels(d(2006, 1, 1)).is_empty());
    }
}
