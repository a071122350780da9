//! Walk-forward analysis (Pardo, "The Evaluation and Optimization of
//! Trading Strategies", 2008): the grid is ranked on each in-sample window
//! and its best is run on the out-of-sample window that follows, so the
//! stitched out-of-sample equity is what choosing by that rule would have
//! earned, and walk-forward efficiency says how much of the in-sample
//! return survived.
//!
//! Every window is a run of its own: it starts flat with a capital of 1,
//! earlier bars only feed the indicators, and a position still open at the
//! window's last bar is closed there (as at the end of any backtest).

use super::{Metrics, Settings, equity_curve, simulate};
use crate::Bars;
use crate::fired::Fired;
use chrono::NaiveDate;
use std::ops::Range;

/// How the windows are laid: lengths in bars (sessions, for daily bars).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub in_sample: usize,
    pub out_of_sample: usize,
    /// In-sample windows all start at the first bar (growing), instead of
    /// rolling forward with the out-of-sample ones.
    pub anchored: bool,
}

/// An in-sample window and the out-of-sample one after it (bar indices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub in_sample: Range<usize>,
    pub out_of_sample: Range<usize>,
}

/// The windows over bars `start..n`: the first in-sample window is the
/// first `in_sample` bars, out-of-sample windows follow each other to the
/// last bar (the last may be shorter).
pub fn windows(start: usize, n: usize, l: Layout) -> Vec<Window> {
    let mut out = Vec::new();
    if l.in_sample == 0 || l.out_of_sample == 0 {
        return out;
    }
    let mut from = start + l.in_sample;
    while from < n {
        let to = (from + l.out_of_sample).min(n);
        let first = if l.anchored {
            start
        } else {
            from - l.in_sample
        };
        out.push(Window {
            in_sample: first..from,
            out_of_sample: from..to,
        });
        from = to;
    }
    out
}

/// The metric the in-sample best is picked by (the highest wins; the first
/// of equals).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    Sharpe,
    Sortino,
    TotalReturn,
    Cagr,
    Calmar,
}

impl Pick {
    pub fn score(self, m: &Metrics) -> f64 {
        match self {
            Pick::Sharpe => m.sharpe,
            Pick::Sortino => m.sortino,
            Pick::TotalReturn => m.total_return,
            Pick::Cagr => m.cagr,
            Pick::Calmar => m.calmar,
        }
    }
}

/// A strategy of the grid: its signals over all the bars, and its settings
/// (whose `start` is replaced by each window's).
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub entry: &'a Fired,
    pub exit: &'a Fired,
    pub settings: &'a Settings,
}

/// A window's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub window: Window,
    /// The in-sample best (None: no candidate scored a number).
    pub best: Option<usize>,
    /// The best's score and metrics in sample, and its metrics out of sample.
    pub score: f64,
    pub in_sample: Option<Metrics>,
    pub out_of_sample: Option<Metrics>,
    /// Out-of-sample CAGR over in-sample CAGR: None when the in-sample one
    /// is not positive.
    pub efficiency: Option<f64>,
}

/// A window's step and its pick's out-of-sample equity (from 1).
pub type Walked = (Step, Vec<f64>);

/// The whole analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkForward {
    pub steps: Vec<Step>,
    /// The out-of-sample bars in order and the equity on each (the
    /// windows' runs chained: each starts with the last one's equity).
    pub bars: Vec<usize>,
    pub equity: Vec<f64>,
    pub summary: Summary,
}

/// The stitched out-of-sample run's figures, as a backtest's metrics count
/// them but in fractions (0.05 is 5 %; the steps' [`Metrics`] are the
/// backtest's, in percent), returns between consecutive out-of-sample bars.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    pub total_return: f64,
    pub cagr: f64,
    pub sharpe: f64,
    pub max_drawdown: f64,
    /// The stitched CAGR over the mean in-sample CAGR of the picks (None
    /// when that mean is not positive).
    pub efficiency: Option<f64>,
    /// Windows whose pick made money out of sample, and windows with a pick.
    pub profitable: usize,
    pub picked: usize,
}

fn truncated(bars: &Bars, end: usize) -> Bars {
    Bars {
        time: bars.time[..end].to_vec(),
        open: bars.open[..end].to_vec(),
        high: bars.high[..end].to_vec(),
        low: bars.low[..end].to_vec(),
        close: bars.close[..end].to_vec(),
        volume: bars.volume[..end].to_vec(),
    }
}

/// A window's run of one candidate on bars cut at the window's end.
fn run(bars: &Bars, c: &Candidate, range: &Range<usize>) -> (super::Report, Settings) {
    let settings = Settings {
        start: range.start,
        ..c.settings.clone()
    };
    let (entry, exit) = (c.entry.truncated(range.end), c.exit.truncated(range.end));
    (simulate(bars, &entry, &exit, &settings), settings)
}

/// One window: every candidate in sample, the best out of sample, and the
/// best's equity over the out-of-sample bars (from a capital of 1).
pub fn step(bars: &Bars, candidates: &[Candidate], pick: Pick, w: &Window) -> Walked {
    let in_bars = truncated(bars, w.in_sample.end);
    let mut best: Option<(usize, f64, Metrics)> = None;
    for (k, c) in candidates.iter().enumerate() {
        let (r, _) = run(&in_bars, c, &w.in_sample);
        let s = pick.score(&r.metrics);
        if s.is_finite() && best.as_ref().is_none_or(|b| s > b.1) {
            best = Some((k, s, r.metrics));
        }
    }
    let Some((k, score, in_sample)) = best else {
        let step = Step {
            window: w.clone(),
            best: None,
            score: f64::NAN,
            in_sample: None,
            out_of_sample: None,
            efficiency: None,
        };
        return (step, vec![1.0; w.out_of_sample.len()]);
    };
    let out_bars = truncated(bars, w.out_of_sample.end);
    let (r, settings) = run(&out_bars, &candidates[k], &w.out_of_sample);
    let equity = equity_curve(&out_bars, &r.trades, &settings);
    let efficiency = (in_sample.cagr > 0.0).then(|| r.metrics.cagr / in_sample.cagr);
    let step = Step {
        window: w.clone(),
        best: Some(k),
        score,
        in_sample: Some(in_sample),
        out_of_sample: Some(r.metrics),
        efficiency,
    };
    (step, equity)
}

/// Every window's step: one after another when `threads` is 1 (a task's
/// chunk, on its worker), else in parallel on the current rayon pool.
pub fn steps(
    bars: &Bars,
    candidates: &[Candidate],
    windows: &[Window],
    pick: Pick,
    threads: usize,
) -> Vec<Walked> {
    use rayon::prelude::*;
    if threads <= 1 {
        return windows
            .iter()
            .map(|w| step(bars, candidates, pick, w))
            .collect();
    }
    windows
        .par_iter()
        .map(|w| step(bars, candidates, pick, w))
        .collect()
}

/// The windows' steps (each with its pick's out-of-sample equity from 1)
/// chained into one out-of-sample run. Steps may come from parts of a grid
/// merged by score (the best of bests is the best). `date` gives the
/// session of the first and the last out-of-sample bar, for the CAGR.
pub fn stitch(
    done: Vec<Walked>,
    bars_per_year: f64,
    date: impl Fn(usize) -> NaiveDate,
) -> WalkForward {
    let mut steps = Vec::with_capacity(done.len());
    let (mut at, mut equity, mut level) = (Vec::new(), Vec::new(), 1.0);
    for (s, curve) in done {
        at.extend(s.window.out_of_sample.clone());
        equity.extend(curve.iter().map(|e| level * e));
        level = equity.last().copied().unwrap_or(level);
        steps.push(s);
    }
    let summary = summary(&steps, &at, &equity, bars_per_year, date);
    WalkForward {
        steps,
        bars: at,
        equity,
        summary,
    }
}

/// Steps of parts of one grid over the same windows merged: per window the
/// highest score (the earlier part of equals), its pick numbered in the
/// whole grid (`offset` of its part plus its index in it).
pub fn merge(parts: Vec<(usize, Vec<Walked>)>) -> Vec<Walked> {
    let mut merged: Vec<Walked> = Vec::new();
    for (offset, part) in parts {
        for (k, (mut step, curve)) in part.into_iter().enumerate() {
            step.best = step.best.map(|b| b + offset);
            match merged.get_mut(k) {
                None => merged.push((step, curve)),
                Some(m) => {
                    if step.best.is_some() && (m.0.best.is_none() || step.score > m.0.score) {
                        *m = (step, curve);
                    }
                }
            }
        }
    }
    merged
}

/// Walks the grid forward over `windows` (`steps`, then `stitch`).
pub fn walk_forward(
    bars: &Bars,
    candidates: &[Candidate],
    windows: &[Window],
    pick: Pick,
    threads: usize,
) -> WalkForward {
    let bars_per_year = candidates
        .first()
        .map_or(252.0, |c| c.settings.bars_per_year);
    let done = steps(bars, candidates, windows, pick, threads);
    stitch(done, bars_per_year, |i| bars.date(i))
}

fn summary(
    steps: &[Step],
    at: &[usize],
    equity: &[f64],
    per_year: f64,
    date: impl Fn(usize) -> NaiveDate,
) -> Summary {
    let mut s = Summary::default();
    let (Some(&first), Some(&last), Some(&end)) = (at.first(), at.last(), equity.last()) else {
        return s;
    };
    s.total_return = end - 1.0;
    let years = (date(last) - date(first)).num_days() as f64 / 365.25;
    if years > 0.0 && end > 0.0 {
        s.cagr = end.powf(1.0 / years) - 1.0;
    }
    let returns: Vec<f64> = equity.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    if let (Some(mean), Some(sd)) = (
        crate::stats::mean(&returns),
        crate::stats::std_dev(&returns),
    ) && sd > 0.0
    {
        s.sharpe = mean / sd * per_year.sqrt();
    }
    let mut peak = f64::NEG_INFINITY;
    for &e in equity {
        peak = peak.max(e);
        s.max_drawdown = s.max_drawdown.min(e / peak - 1.0);
    }
    let picked: Vec<&Metrics> = steps.iter().filter_map(|s| s.in_sample.as_ref()).collect();
    s.picked = picked.len();
    s.profitable = steps
        .iter()
        .filter_map(|s| s.out_of_sample.as_ref())
        .filter(|m| m.total_return > 0.0)
        .count();
    // The picks' CAGRs are in percent.
    let mean_in = picked.iter().map(|m| m.cagr).sum::<f64>() / picked.len().max(1) as f64;
    s.efficiency = (s.picked > 0 && mean_in > 0.0).then(|| s.cagr * 100.0 / mean_in);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backtest::TradePrice;
    use chrono::Duration;

    #[test]
    fn rolling_and_anchored_windows_tile_the_bars_after_the_first_in_sample() {
        let l = Layout {
            in_sample: 4,
            out_of_sample: 3,
            anchored: false,
        };
        let w = windows(2, 15, l);
        assert_eq!(
            w,
            vec![
                Window {
                    in_sample: 2..6,
                    out_of_sample: 6..9
                },
                Window {
                    in_sample: 5..9,
                    out_of_sample: 9..12
                },
                Window {
                    in_sample: 8..12,
                    out_of_sample: 12..15
                },
            ]
        );
        let a = windows(
            2,
            14,
            Layout {
                anchored: true,
                ..l
            },
        );
        assert_eq!(a.len(), 3);
        assert!(a.iter().all(|w| w.in_sample.start == 2));
        assert_eq!(a[2].out_of_sample, 12..14);
        assert!(windows(2, 6, l).is_empty());
        assert!(
            windows(
                0,
                10,
                Layout {
                    out_of_sample: 0,
                    ..l
                }
            )
            .is_empty()
        );
    }

    fn bars(closes: &[f64]) -> Bars {
        let mut b = Bars::with_capacity(closes.len());
        let day0 = NaiveDate::from_ymd_opt(2020, 1, 1).unwrap();
        for (i, &c) in closes.iter().enumerate() {
            let t = (day0 + Duration::days(i as i64))
                .and_hms_opt(0, 0, 0)
                .unwrap();
            b.push(t, c, c, c, c, 1.0);
        }
        b
    }

    fn settings() -> Settings {
        crate::backtest::tests::settings(TradePrice::CurrentClose)
    }

    fn at(n: usize, bars: &[usize]) -> Fired {
        let mut b = vec![false; n];
        bars.iter().for_each(|&i| b[i] = true);
        Fired::from_bools(&b)
    }

    #[test]
    fn the_in_sample_best_runs_out_of_sample_and_the_equity_chains() {
        // Prices rise over bars 0..6, fall over 6..9 and rise again after.
        let closes = [
            10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 12.0, 10.0, 8.0, 9.0, 10.0, 12.0,
        ];
        let b = bars(&closes);
        let n = b.len();
        let s = settings();
        // A: in at 0, 6 and 9, out at 5, 8 and 11. B: always out (never enters).
        let (a_in, a_out) = (at(n, &[0, 6, 9]), at(n, &[5, 8, 11]));
        let (b_in, b_out) = (Fired::none(n), Fired::none(n));
        let candidates = [
            Candidate {
                entry: &b_in,
                exit: &b_out,
                settings: &s,
            },
            Candidate {
                entry: &a_in,
                exit: &a_out,
                settings: &s,
            },
        ];
        let l = Layout {
            in_sample: 6,
            out_of_sample: 3,
            anchored: false,
        };
        let w = windows(0, n, l);
        assert_eq!(w.len(), 2);
        let wf = walk_forward(&b, &candidates, &w, Pick::TotalReturn, 2);
        // Window 1 in sample (0..6): A gains 15/10 - 1 = 50%, B nothing.
        let first = &wf.steps[0];
        assert_eq!(first.best, Some(1));
        assert!((first.score - 50.0).abs() < 1e-12);
        // Out of sample (6..9): A buys at 12 and sells at 8.
        let oos = first.out_of_sample.as_ref().unwrap();
        assert!((oos.total_return - (8.0 / 12.0 - 1.0) * 100.0).abs() < 1e-12);
        // Window 2 in sample (3..9): A's entry at 0 is before the window, so
        // it trades 6..8 alone (8/12): a loss; B (0%) is best, and stays
        // flat out of sample.
        let second = &wf.steps[1];
        assert_eq!(second.best, Some(0));
        assert_eq!(second.out_of_sample.as_ref().unwrap().total_return, 0.0);
        assert_eq!(second.efficiency, None);
        // Stitched: 12 -> 10 -> 8, then flat at 8 / 12.
        assert_eq!(wf.bars, vec![6, 7, 8, 9, 10, 11]);
        let expect = [
            1.0,
            10.0 / 12.0,
            8.0 / 12.0,
            8.0 / 12.0,
            8.0 / 12.0,
            8.0 / 12.0,
        ];
        for (e, x) in wf.equity.iter().zip(expect) {
            assert!((e - x).abs() < 1e-12, "{:?}", wf.equity);
        }
        let sm = wf.summary;
        // The stitched run's figures are fractions.
        assert!((sm.total_return - (8.0 / 12.0 - 1.0)).abs() < 1e-15);
        assert!((sm.max_drawdown - (8.0 / 12.0 - 1.0)).abs() < 1e-15);
        assert_eq!((sm.picked, sm.profitable), (2, 0));
        // Over the 5 days from bar 6 to bar 11; efficiency against the
        // picks' in-sample CAGRs (the backtest's, in percent).
        let cagr = (8.0f64 / 12.0).powf(365.25 / 5.0) - 1.0;
        assert!((sm.cagr - cagr).abs() < 1e-12, "{} vs {cagr}", sm.cagr);
        let mean_in = (first.in_sample.as_ref().unwrap().cagr
            + second.in_sample.as_ref().unwrap().cagr)
            / 2.0;
        let e = sm.efficiency.unwrap();
        assert!((e - cagr * 100.0 / mean_in).abs() <= 1e-12 * e.abs(), "{e}");
        // One thread gives the same, and so do the grid's halves merged.
        assert_eq!(walk_forward(&b, &candidates, &w, Pick::TotalReturn, 1), wf);
        let halves = vec![
            (0, steps(&b, &candidates[..1], &w, Pick::TotalReturn, 1)),
            (1, steps(&b, &candidates[1..], &w, Pick::TotalReturn, 1)),
        ];
        assert_eq!(stitch(merge(halves), 252.0, |i| b.date(i)), wf);
        // Equal scores keep the earlier part's pick.
        let twice = vec![
            (0, steps(&b, &candidates, &w, Pick::TotalReturn, 1)),
            (2, steps(&b, &candidates, &w, Pick::TotalReturn, 1)),
        ];
        assert_eq!(stitch(merge(twice), 252.0, |i| b.date(i)), wf);
    }

    #[test]
    fn efficiency_is_the_out_of_sample_cagr_over_the_in_sample_one() {
        // Steady growth: 1% a bar throughout.
        let closes: Vec<f64> = (0..40).map(|i| 100.0 * 1.01f64.powi(i)).collect();
        let b = bars(&closes);
        let n = b.len();
        let s = settings();
        let (hold_in, hold_out) = (at(n, &[0]), Fired::none(n));
        let candidates = [Candidate {
            entry: &hold_in,
            exit: &hold_out,
            settings: &s,
        }];
        let l = Layout {
            in_sample: 10,
            out_of_sample: 10,
            anchored: true,
        };
        // Entry only at bar 0: in sample from 0 it holds; out of sample it
        // never enters (windows start flat).
        let wf = walk_forward(&b, &candidates, &windows(0, n, l), Pick::Cagr, 2);
        let first = &wf.steps[0];
        let years = 9.0 / 365.25;
        let cagr = (1.01f64.powi(9).powf(1.0 / years) - 1.0) * 100.0;
        assert!((first.in_sample.as_ref().unwrap().cagr - cagr).abs() < 1e-6 * cagr);
        assert_eq!(first.efficiency, Some(0.0));
        assert_eq!(wf.summary.efficiency, Some(0.0));
        assert!(wf.equity.iter().all(|&e| e == 1.0));
    }
}
