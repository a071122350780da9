//! The statistics of a signal's own history on a symbol, with no
//! look-ahead: every earlier firing traded in its direction, exiting at the
//! first close that reaches the profit target or the stop loss, else after
//! the holding period; only trades closed by the as-of bar count.

use super::fire::{Direction, Firings};

/// Sessions of returns the volatility of a firing is measured over.
pub const VOL_SESSIONS: usize = 252;
/// Profit target and stop loss in units of the holding period's volatility
/// (the daily standard deviation x sqrt(holding days)).
pub const TARGET_SIGMAS: f64 = 2.0;
pub const STOP_SIGMAS: f64 = 1.5;

/// Why a trade ended, as the API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitReason {
    TimeIsUp,
    ProfitTarget,
    StopLoss,
}

impl ExitReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ExitReason::TimeIsUp => "Time Is Up",
            ExitReason::ProfitTarget => "Profit Target",
            ExitReason::StopLoss => "Stop Loss",
        }
    }

    pub fn parse(s: &str) -> Option<ExitReason> {
        [
            ExitReason::TimeIsUp,
            ExitReason::ProfitTarget,
            ExitReason::StopLoss,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}

/// One firing's trade.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trade {
    pub entry: usize,
    pub exit: usize,
    pub direction: Direction,
    /// Percent, in the trade's direction.
    pub ret: f64,
    pub reason: ExitReason,
}

/// The target and stop of a firing on bar `i`, in percent: `None` before
/// [`VOL_SESSIONS`] returns exist or when they do not move.
pub fn levels(close: &[f64], i: usize, hold: usize) -> Option<(f64, f64)> {
    Vols::new(&close[..(i + 1).min(close.len())]).levels(i, hold)
}

/// The daily volatility behind [`levels`] on every bar in one O(n) pass:
/// the window's mean and squared deviations slide (Welford's update), and
/// are recomputed exactly every [`EXACT_EVERY`] bars so rounding cannot
/// build up (the drift stays near 1e-15 of the value).
pub struct Vols<'a> {
    close: &'a [f64],
    sd: Vec<f64>,
}

/// Bars between exact recomputations of the sliding volatility.
pub const EXACT_EVERY: usize = 64;

impl<'a> Vols<'a> {
    pub fn new(close: &'a [f64]) -> Self {
        let n = close.len();
        let mut sd = vec![f64::NAN; n];
        let r = |k: usize| close[k] / close[k - 1] - 1.0;
        let w = VOL_SESSIONS as f64;
        let (mut mean, mut m2) = (0.0f64, 0.0f64);
        #[allow(clippy::needless_range_loop)] // i also indexes the closes
        for i in VOL_SESSIONS..n {
            if (i - VOL_SESSIONS).is_multiple_of(EXACT_EVERY) {
                let window: Vec<f64> = (i + 1 - VOL_SESSIONS..=i).map(r).collect();
                mean = window.iter().sum::<f64>() / w;
                m2 = window.iter().map(|x| (x - mean) * (x - mean)).sum();
            } else {
                let (x_in, x_out) = (r(i), r(i - VOL_SESSIONS));
                let old = mean;
                mean += (x_in - x_out) / w;
                m2 += (x_in - x_out) * (x_in - mean + x_out - old);
            }
            sd[i] = (m2.max(0.0) / (w - 1.0)).sqrt();
        }
        Vols { close, sd }
    }

    /// The target and stop of a firing on bar `i` (see [`levels`]).
    pub fn levels(&self, i: usize, hold: usize) -> Option<(f64, f64)> {
        let sd = *self.sd.get(i)?;
        (sd > 0.0).then(|| {
            let v = sd * (hold as f64).sqrt() * 100.0;
            (TARGET_SIGMAS * v, STOP_SIGMAS * v)
        })
    }

    /// Every earlier firing's trade closed by bar `asof` (see [`history`]).
    pub fn history(&self, firings: &Firings, hold: usize, asof: usize) -> Vec<Trade> {
        let close = self.close;
        (0..asof.min(close.len()))
            .filter_map(|i| {
                let d = firings[i]?;
                let lv = self.levels(i, hold)?;
                trade(close, i, d, hold, lv, asof)
            })
            .collect()
    }
}

/// The trade of the firing on bar `i`, if it closed by bar `last`.
pub fn trade(
    close: &[f64],
    i: usize,
    direction: Direction,
    hold: usize,
    (target, stop): (f64, f64),
    last: usize,
) -> Option<Trade> {
    let sign = if direction == Direction::Long {
        1.0
    } else {
        -1.0
    };
    let end = (i + hold).min(last);
    for k in i + 1..=end {
        let ret = sign * (close[k] / close[i] - 1.0) * 100.0;
        let reason = if ret >= target {
            Some(ExitReason::ProfitTarget)
        } else if ret <= -stop {
            Some(ExitReason::StopLoss)
        } else if k == i + hold {
            Some(ExitReason::TimeIsUp)
        } else {
            None
        };
        if let Some(reason) = reason {
            return Some(Trade {
                entry: i,
                exit: k,
                direction,
                ret,
                reason,
            });
        }
    }
    None
}

/// Every earlier firing's trade closed by bar `asof` (firings on `asof`
/// itself are today's signal, not history), in order of entry.
pub fn history(close: &[f64], firings: &Firings, hold: usize, asof: usize) -> Vec<Trade> {
    Vols::new(close).history(firings, hold, asof)
}

/// The figures of a trade history (percent unless a count or ratio).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    pub trade_number: usize,
    pub win_rate: f64,
    pub avg_win: f64,
    pub avg_loss: f64,
    pub avg_return: f64,
    pub median_return: f64,
    /// Sample standard deviation of the returns.
    pub std_dev: f64,
    /// The average trade compounded over a year of its average length.
    pub annual_return: f64,
    /// The deepest fall of the trades compounded in order of exit, as a
    /// positive percent.
    pub max_risk: f64,
    /// Average over standard deviation, per trade, scaled to a year.
    pub sharpe_ratio: f64,
    /// The average over its standard error: t = mean / (sd / sqrt(n)).
    pub z_score: f64,
    /// win rate x average win + (1 - win rate) x average loss.
    pub expected_return: f64,
    /// Average bars held.
    pub avg_hold: f64,
}

/// The mean, 0 for no values.
fn mean(x: &[f64]) -> f64 {
    crate::stats::mean(x).unwrap_or(0.0)
}

/// `avg` percent per trade compounded `per_year` times: a total loss at
/// worst, and the largest number rather than infinity at best.
fn annual(avg: f64, per_year: f64) -> f64 {
    if avg <= -100.0 {
        return -100.0;
    }
    let a = ((1.0 + avg / 100.0).powf(per_year) - 1.0) * 100.0;
    if a.is_finite() { a } else { f64::MAX }
}

/// The figures of `trades`; all zero without any.
pub fn figures(trades: &[Trade]) -> Figures {
    let n = trades.len();
    if n == 0 {
        return Figures::default();
    }
    let r: Vec<f64> = trades.iter().map(|t| t.ret).collect();
    let wins: Vec<f64> = r.iter().copied().filter(|v| *v > 0.0).collect();
    let losses: Vec<f64> = r.iter().copied().filter(|v| *v <= 0.0).collect();
    let win_rate = wins.len() as f64 / n as f64;
    let avg = mean(&r);
    let sd = crate::stats::std_dev(&r).unwrap_or(0.0);
    let avg_hold = mean(
        &trades
            .iter()
            .map(|t| (t.exit - t.entry) as f64)
            .collect::<Vec<_>>(),
    );
    let per_year = 252.0 / avg_hold.max(1.0);
    let mut by_exit: Vec<&Trade> = trades.iter().collect();
    by_exit.sort_by_key(|t| (t.exit, t.entry));
    let (mut equity, mut peak, mut deepest) = (1.0f64, 1.0f64, 0.0f64);
    for t in by_exit {
        equity *= 1.0 + t.ret / 100.0;
        peak = peak.max(equity);
        deepest = deepest.max(1.0 - equity / peak);
    }
    Figures {
        trade_number: n,
        win_rate: win_rate * 100.0,
        avg_win: mean(&wins),
        avg_loss: mean(&losses),
        avg_return: avg,
        median_return: crate::stats::median(&r).unwrap_or(0.0),
        std_dev: sd,
        annual_return: annual(avg, per_year),
        max_risk: deepest * 100.0,
        sharpe_ratio: if sd > 0.0 {
            avg / sd * per_year.sqrt()
        } else {
            0.0
        },
        z_score: if sd > 0.0 {
            avg / (sd / (n as f64).sqrt())
        } else {
            0.0
        },
        expected_return: win_rate * mean(&wins) + (1.0 - win_rate) * mean(&losses),
        avg_hold,
    }
}

/// [`figures`] kept up to date as trades are added in order of exit (then
/// entry): O(log n) per trade (the median's two heaps). Equal to the
/// batch figures up to rounding (the mean and deviation are Welford's).
#[derive(Debug, Clone, Default)]
pub struct Running {
    /// The lower half of the returns (a max-heap) and the upper half (a
    /// min-heap); the lower holds the extra one when the count is odd.
    lower: std::collections::BinaryHeap<Total>,
    upper: std::collections::BinaryHeap<std::cmp::Reverse<Total>>,
    mean: f64,
    m2: f64,
    wins: usize,
    win_sum: f64,
    loss_sum: f64,
    hold_sum: f64,
    equity: f64,
    peak: f64,
    deepest: f64,
}

/// An f64 ordered by `total_cmp`, for the heaps.
#[derive(Debug, Clone, Copy)]
struct Total(f64);

impl PartialEq for Total {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for Total {}

impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Total {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl Running {
    fn len(&self) -> usize {
        self.lower.len() + self.upper.len()
    }

    /// The running figures of `trades` (any order): what [`Running`] gives
    /// after adding them in order of exit, so one-day and range scans agree
    /// to the bit.
    pub fn of(trades: &[Trade]) -> Figures {
        let mut sorted: Vec<&Trade> = trades.iter().collect();
        sorted.sort_by_key(|t| (t.exit, t.entry));
        let mut r = Running::default();
        for t in sorted {
            r.add(t);
        }
        r.figures()
    }

    pub fn add(&mut self, t: &Trade) {
        if self.len() == 0 {
            self.equity = 1.0;
            self.peak = 1.0;
        }
        match self.lower.peek() {
            Some(top) if t.ret > top.0 => self.upper.push(std::cmp::Reverse(Total(t.ret))),
            _ => self.lower.push(Total(t.ret)),
        }
        if self.lower.len() > self.upper.len() + 1 {
            let moved = self.lower.pop().expect("not empty");
            self.upper.push(std::cmp::Reverse(moved));
        } else if self.upper.len() > self.lower.len() {
            let std::cmp::Reverse(moved) = self.upper.pop().expect("not empty");
            self.lower.push(moved);
        }
        let n = self.len() as f64;
        let delta = t.ret - self.mean;
        self.mean += delta / n;
        self.m2 += delta * (t.ret - self.mean);
        if t.ret > 0.0 {
            self.wins += 1;
            self.win_sum += t.ret;
        } else {
            self.loss_sum += t.ret;
        }
        self.hold_sum += (t.exit - t.entry) as f64;
        self.equity *= 1.0 + t.ret / 100.0;
        self.peak = self.peak.max(self.equity);
        self.deepest = self.deepest.max(1.0 - self.equity / self.peak);
    }

    pub fn figures(&self) -> Figures {
        let n = self.len();
        if n == 0 {
            return Figures::default();
        }
        let nf = n as f64;
        let losses = n - self.wins;
        let win_rate = self.wins as f64 / nf;
        let avg_win = if self.wins > 0 {
            self.win_sum / self.wins as f64
        } else {
            0.0
        };
        let avg_loss = if losses > 0 {
            self.loss_sum / losses as f64
        } else {
            0.0
        };
        let avg = self.mean;
        let sd = if n > 1 {
            (self.m2.max(0.0) / (nf - 1.0)).sqrt()
        } else {
            0.0
        };
        let avg_hold = self.hold_sum / nf;
        let per_year = 252.0 / avg_hold.max(1.0);
        Figures {
            trade_number: n,
            win_rate: win_rate * 100.0,
            avg_win,
            avg_loss,
            avg_return: avg,
            median_return: {
                let low = self.lower.peek().expect("not empty").0;
                if n % 2 == 1 {
                    low
                } else {
                    (low + self.upper.peek().expect("two or more").0.0) / 2.0
                }
            },
            std_dev: sd,
            annual_return: annual(avg, per_year),
            max_risk: self.deepest * 100.0,
            sharpe_ratio: if sd > 0.0 {
                avg / sd * per_year.sqrt()
            } else {
                0.0
            },
            z_score: if sd > 0.0 {
                avg / (sd / nf.sqrt())
            } else {
                0.0
            },
            expected_return: win_rate * avg_win + (1.0 - win_rate) * avg_loss,
            avg_hold,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    #[test]
    fn exits_by_target_stop_or_time() {
        let close = [100.0, 101.0, 104.0, 99.0, 97.0, 103.0];
        // Long from 100 with a 3% target and 2% stop: 104 is +4% at bar 2.
        let t = trade(&close, 0, Long, 5, (3.0, 2.0), 5).unwrap();
        assert_eq!((t.exit, t.reason), (2, ExitReason::ProfitTarget));
        assert!((t.ret - 4.0).abs() < 1e-12);
        // Short from 104 (bar 2): 99 is +4.8% -> target.
        let t = trade(&close, 2, Short, 5, (3.0, 2.0), 5).unwrap();
        assert_eq!((t.exit, t.reason), (3, ExitReason::ProfitTarget));
        // Long from 104 with a 10% target and 5% stop: 97 is -6.7% -> stop at bar 4.
        let t = trade(&close, 2, Long, 5, (10.0, 5.0), 5).unwrap();
        assert_eq!((t.exit, t.reason), (4, ExitReason::StopLoss));
        // Wide levels: out after 2 bars, time is up.
        let t = trade(&close, 0, Long, 2, (50.0, 50.0), 5).unwrap();
        assert_eq!((t.exit, t.reason), (2, ExitReason::TimeIsUp));
        // Not closed by the as-of bar: no trade yet.
        assert!(trade(&close, 3, Long, 5, (50.0, 50.0), 5).is_none());
        assert_eq!(ExitReason::TimeIsUp.as_str(), "Time Is Up");
    }

    #[test]
    fn figures_by_hand() {
        let t = |entry, exit, ret| Trade {
            entry,
            exit,
            direction: Long,
            ret,
            reason: ExitReason::TimeIsUp,
        };
        // +10, -5, +4 (held 5, 5 and 2 bars).
        let trades = [t(0, 5, 10.0), t(10, 15, -5.0), t(20, 22, 4.0)];
        let f = figures(&trades);
        assert_eq!(f.trade_number, 3);
        assert!((f.win_rate - 200.0 / 3.0).abs() < 1e-12);
        assert!((f.avg_win - 7.0).abs() < 1e-12);
        assert!((f.avg_loss + 5.0).abs() < 1e-12);
        assert!((f.avg_return - 3.0).abs() < 1e-12);
        assert_eq!(f.median_return, 4.0);
        // Sample sd of (10, -5, 4): deviations 7, -8, 1 -> sqrt(114 / 2).
        let sd = (114.0f64 / 2.0).sqrt();
        assert!((f.std_dev - sd).abs() < 1e-12);
        assert!((f.avg_hold - 4.0).abs() < 1e-12);
        assert!((f.annual_return - (1.03f64.powf(63.0) - 1.0) * 100.0).abs() < 1e-9);
        // Equity 1.10, 1.045, 1.0868: the deepest fall is 5%.
        assert!((f.max_risk - 5.0).abs() < 1e-9);
        assert!((f.sharpe_ratio - 3.0 / sd * 63f64.sqrt()).abs() < 1e-12);
        assert!((f.z_score - 3.0 / (sd / 3f64.sqrt())).abs() < 1e-12);
        assert!((f.expected_return - (2.0 / 3.0 * 7.0 - 5.0 / 3.0)).abs() < 1e-12);
        assert_eq!(figures(&[]), Figures::default());
        // A short that lost more than everything, and an absurd gain: finite.
        assert_eq!(figures(&[t(0, 1, -150.0)]).annual_return, -100.0);
        assert_eq!(figures(&[t(0, 1, 1e6)]).annual_return, f64::MAX);
    }

    #[test]
    fn running_figures_equal_the_batch_ones() {
        let t = |entry: usize, exit: usize, ret: f64| Trade {
            entry,
            exit,
            direction: Long,
            ret,
            reason: ExitReason::TimeIsUp,
        };
        let mut trades: Vec<Trade> = (0..40)
            .map(|i| {
                let r = ((i * 7919) % 23) as f64 / 3.0 - 3.5;
                t(i * 3, i * 3 + 1 + i % 5, r)
            })
            .collect();
        trades.sort_by_key(|t| (t.exit, t.entry));
        let mut run = Running::default();
        assert_eq!(run.figures(), Figures::default());
        for k in 0..trades.len() {
            run.add(&trades[k]);
            let (a, b) = (run.figures(), figures(&trades[..=k]));
            assert_eq!(a.trade_number, b.trade_number);
            assert_eq!(a.median_return, b.median_return);
            for (x, y) in [
                (a.win_rate, b.win_rate),
                (a.avg_win, b.avg_win),
                (a.avg_loss, b.avg_loss),
                (a.avg_return, b.avg_return),
                (a.median_return, b.median_return),
                (a.std_dev, b.std_dev),
                (a.annual_return, b.annual_return),
                (a.max_risk, b.max_risk),
                (a.sharpe_ratio, b.sharpe_ratio),
                (a.z_score, b.z_score),
                (a.expected_return, b.expected_return),
                (a.avg_hold, b.avg_hold),
            ] {
                assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{k}: {x} vs {y}");
            }
        }
    }

    #[test]
    fn history_has_no_look_ahead() {
        // 300 bars of a gentle zigzag, firings every 20 bars from 260 on.
        let close: Vec<f64> = (0..300).map(|i| 100.0 + (i % 4) as f64).collect();
        let mut firings: Firings = vec![None; 300];
        for i in (260..300).step_by(20) {
            firings[i] = Some(Long);
        }
        // As of bar 283: the firing at 260 closed; 280 has not.
        let h = history(&close, &firings, 5, 283);
        assert_eq!(h.iter().map(|t| t.entry).collect::<Vec<_>>(), vec![260]);
        let h = history(&close, &firings, 5, 299);
        assert_eq!(h.len(), 2);
        // Before a year of returns there are no levels.
        assert!(levels(&close, 100, 5).is_none());
        // The sliding volatility stays within 1e-12 of the exact one on
        // every bar; a bar's levels do not depend on later bars.
        let moving: Vec<f64> = (0..1200)
            .map(|i| 100.0 * (1.0 + 0.3 * (i as f64 / 37.0).sin()) + (i % 7) as f64)
            .collect();
        let vols = Vols::new(&moving);
        for i in 252..1200 {
            let r: Vec<f64> = (i - 251..=i)
                .map(|k| moving[k] / moving[k - 1] - 1.0)
                .collect();
            let exact = crate::stats::std_dev(&r).unwrap() * 2f64.sqrt() * 100.0;
            let (target, stop) = vols.levels(i, 2).unwrap();
            assert!(
                (target / TARGET_SIGMAS - exact).abs() <= 1e-12 * exact,
                "{i}"
            );
            assert!((stop / STOP_SIGMAS - exact).abs() <= 1e-12 * exact, "{i}");
            assert_eq!(levels(&moving, i, 2), Some((target, stop)));
        }
        let (target, stop) = levels(&close, 260, 4).unwrap();
        assert!((target / stop - TARGET_SIGMAS / STOP_SIGMAS).abs() < 1e-12);
    }
}
