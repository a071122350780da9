//! The metrics of a run: per-trade figures, and the equity curve's returns
//! and drawdowns walked stretch by stretch (a flat stretch is one step).

use super::{Metrics, Settings, Trade};
use crate::Bars;
use crate::stats::{sum, sum_by};
use chrono::NaiveDate;

/// Equity at each bar's close of the window: realised trades compound with
/// `capital_alloc`; an open position is marked to the close (entry costs paid).
pub fn equity_curve(bars: &Bars, trades: &[Trade], s: &Settings) -> Vec<f64> {
    let mut equity = Vec::with_capacity(bars.len().saturating_sub(s.start));
    walk_equity(bars, trades, s, |seg| match seg {
        Segment::Flat(e, k) => equity.extend(std::iter::repeat_n(e, k)),
        Segment::Held(es) => equity.extend_from_slice(es),
    });
    equity
}

/// The equity curve's per-bar returns (n bars, n - 1 returns), appended to
/// `out` without building the curve: what a batch keeps for its
/// statistics, equal to the ratios of `equity_curve`'s neighbours.
pub fn bar_returns(bars: &Bars, trades: &[Trade], s: &Settings, out: &mut Vec<f64>) {
    let mut prev: Option<f64> = None;
    walk_equity(bars, trades, s, |seg| match seg {
        Segment::Flat(e, k) => {
            if let Some(p) = prev {
                out.push(e / p - 1.0);
            }
            // A flat bar returns 0, or NaN where the equity is 0 or not finite (as e / e - 1).
            let flat = if e.is_finite() && e != 0.0 {
                0.0
            } else {
                f64::NAN
            };
            out.extend(std::iter::repeat_n(flat, k - 1));
            prev = Some(e);
        }
        Segment::Held(es) => {
            if let Some(p) = prev {
                out.push(es[0] / p - 1.0);
            }
            out.extend(es.windows(2).map(|w| w[1] / w[0] - 1.0));
            prev = Some(es[es.len() - 1]);
        }
    });
}

/// A stretch of the window's equity curve.
enum Segment<'a> {
    /// The same equity on this many bars.
    Flat(f64, usize),
    /// A trade's bars, from its entry bar to its exit bar (the last one
    /// realised, the others marked to the close).
    Held(&'a [f64]),
}

/// Calls `visit` along the window, stretch by stretch.
fn walk_equity(bars: &Bars, trades: &[Trade], s: &Settings, mut visit: impl FnMut(Segment)) {
    let n = bars.len();
    let (d, f, c) = (s.direction.sign(), s.capital_alloc, s.commission);
    let mut base = 1.0;
    let mut i = s.start.min(n);
    let mut held = Vec::new();
    for tr in trades {
        if tr.entry_bar > i {
            visit(Segment::Flat(base, tr.entry_bar - i));
        }
        let entry_eff = tr.entry_price * (1.0 + d * s.slippage);
        let last = tr.exit_bar.min(n - 1);
        held.clear();
        held.extend(
            bars.close[tr.entry_bar..last]
                .iter()
                .map(|&close| base * (1.0 + f * (d * (close - entry_eff) / entry_eff - c))),
        );
        base *= 1.0 + f * tr.ret;
        held.push(base);
        visit(Segment::Held(&held));
        i = last + 1;
    }
    if n > i {
        visit(Segment::Flat(base, n - i));
    }
}

/// Per-bar equity returns and drawdowns, taken in one walk: a flat stretch
/// of k bars is one step, since its returns after the first are all 0. The
/// window's first bar has no return (n bars of equity, n - 1 returns, as
/// `pct_change` gives them to empyrical and pandas).
struct EquityStats {
    prev: f64,
    /// No bar visited yet: the next one's equity has nothing to return on.
    first: bool,
    /// Returns of the bars visited one by one, in order.
    steps: Vec<f64>,
    /// Bars of flat stretches after their first: their returns are 0, or
    /// NaN when the equity is zero or not finite (`flat_nan`).
    flat: usize,
    flat_nan: bool,
    peak: f64,
    trough: f64,
    max_dd: f64,
    run: usize,
    longest: usize,
}

impl EquityStats {
    fn new(window: usize) -> Self {
        EquityStats {
            prev: 1.0,
            first: true,
            steps: Vec::with_capacity(window),
            flat: 0,
            flat_nan: false,
            peak: 1.0,
            trough: 1.0,
            max_dd: 0.0,
            run: 0,
            longest: 0,
        }
    }

    /// Takes a stretch; with `out`, also appends its per-bar returns as
    /// [`bar_returns`] gives them (the same divisions, copied).
    fn visit(&mut self, seg: Segment, out: Option<&mut Vec<f64>>) {
        let from = self.steps.len();
        match seg {
            Segment::Flat(e, k) => {
                if !std::mem::take(&mut self.first) {
                    self.steps.push(e / self.prev - 1.0);
                }
                let nan = !(e.is_finite() && e != 0.0);
                if let Some(out) = out {
                    out.extend_from_slice(&self.steps[from..]);
                    out.extend(std::iter::repeat_n(if nan { f64::NAN } else { 0.0 }, k - 1));
                }
                self.flat += k - 1;
                self.flat_nan |= k > 1 && nan;
                self.prev = e;
                self.drawdown(&[e]);
                if k > 1 && (e.is_nan() || e < self.peak) {
                    self.run += k - 1;
                    self.longest = self.longest.max(self.run);
                }
            }
            Segment::Held(es) => {
                // Returns in bulk (the divisions vectorise), then the drawdown scan.
                if !std::mem::take(&mut self.first) {
                    self.steps.push(es[0] / self.prev - 1.0);
                }
                crate::lanes::ratios(es, &mut self.steps);
                if let Some(out) = out {
                    out.extend_from_slice(&self.steps[from..]);
                }
                self.prev = es[es.len() - 1];
                self.drawdown(es);
            }
        }
    }

    fn drawdown(&mut self, es: &[f64]) {
        let (mut peak, mut trough, mut max_dd) = (self.peak, self.trough, self.max_dd);
        let (mut run, mut longest) = (self.run, self.longest);
        for &e in es {
            if e >= peak {
                if trough < peak {
                    max_dd = max_dd.min(trough / peak - 1.0);
                }
                (peak, trough, run) = (e, e, 0);
            } else {
                if e < trough {
                    trough = e;
                }
                run += 1;
                longest = longest.max(run);
            }
        }
        (self.peak, self.trough, self.max_dd) = (peak, trough, max_dd);
        (self.run, self.longest) = (run, longest);
    }

    /// The deepest drawdown, the one still open included.
    fn max_drawdown(&self) -> f64 {
        if self.trough < self.peak {
            self.max_dd.min(self.trough / self.peak - 1.0)
        } else {
            self.max_dd
        }
    }

    /// Root mean square of the `count` per-bar returns below 0 (the others
    /// count as 0): the downside deviation with a target of 0.
    fn downside(&self, count: usize) -> f64 {
        if count == 0 {
            return 0.0;
        }
        let ss = sum_by(&self.steps, |r| r.min(0.0).powi(2));
        (ss / count as f64).sqrt()
    }

    /// Mean and sample standard deviation of the `count` per-bar returns.
    fn mean_sd(&self, count: usize) -> (f64, Option<f64>) {
        if count == 0 {
            return (0.0, None);
        }
        let total = sum(&self.steps);
        let m = if self.flat_nan {
            f64::NAN
        } else {
            total / count as f64
        };
        if count < 2 {
            return (m, None);
        }
        let ss = sum_by(&self.steps, |r| (r - m) * (r - m)) + self.flat as f64 * m * m;
        (m, Some((ss / (count - 1) as f64).sqrt()))
    }
}

/// The run's metrics; with `returns`, its per-bar returns appended there
/// too, as [`bar_returns`] gives them, from the same walk of the equity.
pub(super) fn metrics(
    bars: &Bars,
    trades: &[Trade],
    s: &Settings,
    mut returns: Option<&mut Vec<f64>>,
) -> Metrics {
    let n = bars.len();
    let start = s.start.min(n);
    let pct = |v: f64| v * 100.0;
    let (mut wins, mut win_sum, mut losses, mut loss_sum) = (0usize, 0.0, 0usize, 0.0);
    for t in trades {
        if t.ret > 0.0 {
            wins += 1;
            win_sum += t.ret;
        } else if t.ret < 0.0 {
            losses += 1;
            loss_sum += t.ret;
        }
    }
    let mean = |sum: f64, k: usize| if k == 0 { 0.0 } else { sum / k as f64 };
    let final_equity = trades
        .iter()
        .fold(1.0, |e, t| e * (1.0 + s.capital_alloc * t.ret));
    let window = n - start;
    let (buy_hold, cagr) = if window > 0 {
        let first: NaiveDate = bars.date(start);
        let last: NaiveDate = bars.date(n - 1);
        let years = (last - first).num_days() as f64 / 365.25;
        let cagr = if years > 0.0 && final_equity > 0.0 {
            final_equity.powf(1.0 / years) - 1.0
        } else {
            0.0
        };
        (bars.close[n - 1] / bars.close[start] - 1.0, cagr)
    } else {
        (0.0, 0.0)
    };
    let mut eq = EquityStats::new(window);
    walk_equity(bars, trades, s, |seg| eq.visit(seg, returns.as_deref_mut()));
    let returns = window.saturating_sub(1);
    let (mean_ret, sd) = eq.mean_sd(returns);
    let annual = s.bars_per_year.sqrt();
    let sharpe = match sd {
        Some(sd) if sd > 0.0 => mean_ret / sd * annual,
        _ => 0.0,
    };
    let downside = eq.downside(returns);
    let sortino = if downside > 0.0 {
        mean_ret / downside * annual
    } else {
        0.0
    };
    let max_drawdown = eq.max_drawdown();
    let calmar = if max_drawdown < 0.0 {
        cagr / -max_drawdown
    } else {
        0.0
    };
    let in_market: usize = trades
        .iter()
        .map(|t| {
            let held_to = if t.is_open() { n } else { t.exit_bar };
            held_to.saturating_sub(t.entry_bar.max(start))
        })
        .sum();
    Metrics {
        total_trades: trades.len(),
        positive: wins,
        negative: losses,
        win_rate: if trades.is_empty() {
            0.0
        } else {
            pct(wins as f64 / trades.len() as f64)
        },
        average_win: pct(mean(win_sum, wins)),
        average_loss: pct(mean(loss_sum, losses)),
        total_return: pct(final_equity - 1.0),
        buy_hold: pct(buy_hold),
        cagr: pct(cagr),
        sharpe,
        sortino,
        annual_volatility: sd.map_or(0.0, |sd| sd * annual),
        calmar,
        max_drawdown: pct(max_drawdown),
        drawdown_period: eq.longest,
        time_in_market: if window == 0 {
            0.0
        } else {
            pct(in_market as f64 / window as f64)
        },
    }
}
