//! Entry and exit rules as boolean series over bars.
//!
//! A condition compares a signal series (optionally transformed by a qualifier)
//! with a constant, with the signal's own moving average, or with another
//! series. Rules combine conditions: one condition, a vote (Scoring), or a
//! sequence (TimeOrder). NaN (warm-up) never satisfies a condition.

/// Comparison operators: the 16 codes' main and special classes, plus `>=`/`<=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Gt,
    Eq,
    Lt,
    Ge,
    Le,
    CrossAbove,
    CrossBelow,
    /// The signal makes a new high above every earlier value.
    AllTimeHigh,
    /// The signal makes a new low below every earlier value.
    AllTimeLow,
    /// The signal has been above the target on each of the last `n` bars.
    ConsecutiveAbove(usize),
    /// The signal has been below the target on each of the last `n` bars.
    ConsecutiveBelow(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaKind {
    Simple,
    Exponential,
}

/// Qualifier transforms (codes 5-11), each over `period` bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transform {
    /// (x / x[t-p] - 1) x 100.
    RateOfChange(usize),
    /// Position of x within the high-low range of the previous p bars, in percent.
    PctOfPreviousRange(usize),
    /// x / MA_p(x).
    MaRatio(usize, MaKind),
    /// Position of x within the range of the last p bars (current included), 0-100.
    RangeRank(usize),
    /// (x / max of the last p bars - 1) x 100, at most 0.
    DrawDown(usize),
    /// (x / min of the last p bars - 1) x 100, at least 0.
    DrawUp(usize),
    /// x - x[t-p].
    NetChange(usize),
}

/// What the signal is compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Value(f64),
    /// The signal's own moving average, shifted by `offset_pct` percent.
    OwnAverage {
        kind: MaKind,
        period: usize,
        offset_pct: f64,
    },
    /// Another series of the same length (e.g. a moving average of price).
    Series(Vec<f64>),
}

/// Moving average that skips leading NaN (warm-up of the input series).
pub fn moving_average(x: &[f64], kind: MaKind, period: usize) -> Vec<f64> {
    let first = x.iter().position(|v| !v.is_nan()).unwrap_or(x.len());
    let mut out = vec![f64::NAN; x.len()];
    let tail = &x[first..];
    let ma = match kind {
        MaKind::Simple => crate::indicators::sma(tail, period),
        MaKind::Exponential => crate::indicators::ema(tail, period),
    };
    out[first..].copy_from_slice(&ma);
    out
}

/// Minimum and maximum of the `p` values ending at each index (NaN ignored),
/// in O(n) with monotonic queues; NaN until a window is full or when a window
/// holds no number.
fn rolling_extremes(x: &[f64], p: usize) -> (Vec<f64>, Vec<f64>) {
    use std::collections::VecDeque;
    let n = x.len();
    let p = p.max(1);
    let (mut lo, mut hi) = (vec![f64::NAN; n], vec![f64::NAN; n]);
    let (mut minq, mut maxq): (VecDeque<usize>, VecDeque<usize>) =
        (VecDeque::new(), VecDeque::new());
    for i in 0..n {
        if !x[i].is_nan() {
            while minq.back().is_some_and(|&j| x[j] >= x[i]) {
                minq.pop_back();
            }
            minq.push_back(i);
            while maxq.back().is_some_and(|&j| x[j] <= x[i]) {
                maxq.pop_back();
            }
            maxq.push_back(i);
        }
        let first = (i + 1).saturating_sub(p);
        while minq.front().is_some_and(|&j| j < first) {
            minq.pop_front();
        }
        while maxq.front().is_some_and(|&j| j < first) {
            maxq.pop_front();
        }
        if i + 1 >= p
            && let (Some(&a), Some(&b)) = (minq.front(), maxq.front())
        {
            lo[i] = x[a];
            hi[i] = x[b];
        }
    }
    (lo, hi)
}

/// Applies a qualifier transform. Values without enough history are NaN.
pub fn transform(x: &[f64], t: Transform) -> Vec<f64> {
    let n = x.len();
    let mut out = vec![f64::NAN; n];
    match t {
        Transform::RateOfChange(p) => {
            for i in p..n {
                if x[i - p] != 0.0 {
                    out[i] = (x[i] / x[i - p] - 1.0) * 100.0;
                }
            }
        }
        Transform::NetChange(p) => {
            for i in p..n {
                out[i] = x[i] - x[i - p];
            }
        }
        Transform::PctOfPreviousRange(p) => {
            // The window of the p bars before t is the window ending at t-1.
            let (lo, hi) = rolling_extremes(x, p);
            for i in 1..n {
                if hi[i - 1] > lo[i - 1] {
                    out[i] = (x[i] - lo[i - 1]) / (hi[i - 1] - lo[i - 1]) * 100.0;
                }
            }
        }
        Transform::RangeRank(p) => {
            let (lo, hi) = rolling_extremes(x, p);
            for i in 0..n {
                if !lo[i].is_nan() {
                    out[i] = if hi[i] > lo[i] {
                        (x[i] - lo[i]) / (hi[i] - lo[i]) * 100.0
                    } else {
                        50.0
                    };
                }
            }
        }
        Transform::DrawDown(p) => {
            let (_, hi) = rolling_extremes(x, p);
            for i in 0..n {
                if !hi[i].is_nan() && hi[i] != 0.0 {
                    out[i] = (x[i] / hi[i] - 1.0) * 100.0;
                }
            }
        }
        Transform::DrawUp(p) => {
            let (lo, _) = rolling_extremes(x, p);
            for i in 0..n {
                if !lo[i].is_nan() && lo[i] != 0.0 {
                    out[i] = (x[i] / lo[i] - 1.0) * 100.0;
                }
            }
        }
        Transform::MaRatio(p, kind) => {
            let ma = moving_average(x, kind, p);
            for i in 0..n {
                if ma[i] != 0.0 {
                    out[i] = x[i] / ma[i];
                }
            }
        }
    }
    // A NaN input stays NaN whatever the transform.
    for i in 0..n {
        if x[i].is_nan() {
            out[i] = f64::NAN;
        }
    }
    out
}

/// Equality of floating values read from data: within 1e-9 relative.
fn equal(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Where the condition holds, bar by bar.
pub fn evaluate(x: &[f64], op: Op, target: &Target) -> Vec<bool> {
    let n = x.len();
    let y: Vec<f64> = match target {
        Target::Value(v) => vec![*v; n],
        Target::OwnAverage {
            kind,
            period,
            offset_pct,
        } => moving_average(x, *kind, *period)
            .into_iter()
            .map(|m| m * (1.0 + offset_pct / 100.0))
            .collect(),
        Target::Series(s) => {
            assert_eq!(s.len(), n, "target series has the signal's length");
            s.clone()
        }
    };
    let ok = |i: usize| !x[i].is_nan() && !y[i].is_nan();
    let mut out = vec![false; n];
    match op {
        Op::AllTimeHigh | Op::AllTimeLow => {
            let mut best: Option<f64> = None;
            for i in 0..n {
                if x[i].is_nan() {
                    continue;
                }
                if let Some(b) = best {
                    out[i] = if op == Op::AllTimeHigh {
                        x[i] > b
                    } else {
                        x[i] < b
                    };
                }
                best = Some(match best {
                    None => x[i],
                    Some(b) if op == Op::AllTimeHigh => b.max(x[i]),
                    Some(b) => b.min(x[i]),
                });
            }
        }
        Op::ConsecutiveAbove(k) | Op::ConsecutiveBelow(k) => {
            let mut run = 0usize;
            for i in 0..n {
                let holds = ok(i)
                    && if matches!(op, Op::ConsecutiveAbove(_)) {
                        x[i] > y[i]
                    } else {
                        x[i] < y[i]
                    };
                run = if holds { run + 1 } else { 0 };
                out[i] = holds && run >= k.max(1);
            }
        }
        _ => {
            for i in 0..n {
                if !ok(i) {
                    continue;
                }
                out[i] = match op {
                    Op::Gt => x[i] > y[i],
                    Op::Lt => x[i] < y[i],
                    Op::Ge => x[i] > y[i] || equal(x[i], y[i]),
                    Op::Le => x[i] < y[i] || equal(x[i], y[i]),
                    Op::Eq => equal(x[i], y[i]),
                    Op::CrossAbove => i > 0 && ok(i - 1) && x[i - 1] <= y[i - 1] && x[i] > y[i],
                    Op::CrossBelow => i > 0 && ok(i - 1) && x[i - 1] >= y[i - 1] && x[i] < y[i],
                    _ => unreachable!("handled above"),
                };
            }
        }
    }
    out
}

/// Scoring: at least `threshold` of the votes hold on the bar.
pub fn scoring(votes: &[Vec<bool>], threshold: usize) -> Vec<bool> {
    let n = votes.first().map_or(0, Vec::len);
    (0..n)
        .map(|i| votes.iter().filter(|v| v[i]).count() >= threshold.max(1))
        .collect()
}

/// TimeOrder: the steps fire in order, each on a later bar than the one
/// before, the whole sequence within `window` bars (first step to last). The
/// rule fires on the bar the last step completes a sequence; the sequence is
/// then consumed and the next one starts afresh.
pub fn time_order(steps: &[Vec<bool>], window: usize) -> Vec<bool> {
    let k = steps.len();
    let n = steps.first().map_or(0, Vec::len);
    let mut out = vec![false; n];
    if k == 0 {
        return out;
    }
    // started[j]: latest first-step bar of a chain that has completed steps 0..=j.
    let mut started: Vec<Option<usize>> = vec![None; k];
    for t in 0..n {
        for j in (0..k).rev() {
            if !steps[j][t] {
                continue;
            }
            if j == 0 {
                started[0] = Some(t);
            } else if let Some(s) = started[j - 1]
                && t - s <= window
            {
                started[j] = Some(started[j].map_or(s, |c| c.max(s)));
            }
        }
        // The last step is only ever set on the bar that completes a sequence.
        if started[k - 1].is_some() {
            out[t] = true;
            started.iter_mut().for_each(|s| *s = None);
        }
        // Chains older than the window can never complete.
        for s in started.iter_mut() {
            if s.is_some_and(|v| t - v >= window) {
                *s = None;
            }
        }
    }
    out
}

/// Shifts a signal `bars` later: it takes effect `bars` bars after it fires.
pub fn delay(signal: &[bool], bars: usize) -> Vec<bool> {
    let n = signal.len();
    (0..n).map(|i| i >= bars && signal[i - bars]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAN: f64 = f64::NAN;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x.is_nan() && y.is_nan()) || (x - y).abs() < 1e-12)
    }

    #[test]
    fn static_and_crossing_operators() {
        let x = [1.0, 3.0, 2.0, 5.0, 5.0, 1.0];
        let v = Target::Value(2.0);
        assert_eq!(
            evaluate(&x, Op::Gt, &v),
            [false, true, false, true, true, false]
        );
        assert_eq!(
            evaluate(&x, Op::Lt, &v),
            [true, false, false, false, false, true]
        );
        assert_eq!(
            evaluate(&x, Op::Eq, &v),
            [false, false, true, false, false, false]
        );
        assert_eq!(
            evaluate(&x, Op::Ge, &v),
            [false, true, true, true, true, false]
        );
        assert_eq!(
            evaluate(&x, Op::Le, &v),
            [true, false, true, false, false, true]
        );
        // Crossing fires only on the bar it happens: 1->3 and 2->5 cross above 2.
        assert_eq!(
            evaluate(&x, Op::CrossAbove, &v),
            [false, true, false, true, false, false]
        );
        assert_eq!(
            evaluate(&x, Op::CrossBelow, &v),
            [false, false, false, false, false, true]
        );
        // 3 -> 2 touches the level: not a cross below.
        assert!(!evaluate(&x, Op::CrossBelow, &v)[2]);
    }

    #[test]
    fn special_operators() {
        let x = [3.0, 2.0, 4.0, 4.0, 5.0, 1.0, 0.5];
        assert_eq!(
            evaluate(&x, Op::AllTimeHigh, &Target::Value(0.0)),
            [false, false, true, false, true, false, false]
        );
        assert_eq!(
            evaluate(&x, Op::AllTimeLow, &Target::Value(0.0)),
            [false, true, false, false, false, true, true]
        );
        let above = evaluate(&x, Op::ConsecutiveAbove(2), &Target::Value(2.5));
        assert_eq!(above, [false, false, false, true, true, false, false]);
        let below = evaluate(&x, Op::ConsecutiveBelow(2), &Target::Value(2.5));
        assert_eq!(below, [false, false, false, false, false, false, true]);
    }

    #[test]
    fn nan_never_satisfies() {
        let x = [NAN, 1.0, NAN, 3.0];
        assert_eq!(
            evaluate(&x, Op::Gt, &Target::Value(0.0)),
            [false, true, false, true]
        );
        assert_eq!(
            evaluate(&x, Op::CrossAbove, &Target::Value(2.0)),
            [false, false, false, false]
        );
    }

    #[test]
    fn own_average_comparisons() {
        // SMA(2): [NaN, 1.5, 2.5, 3.5]; with +10% offset: [NaN, 1.65, 2.75, 3.85].
        let x = [1.0, 2.0, 3.0, 4.0];
        let t = Target::OwnAverage {
            kind: MaKind::Simple,
            period: 2,
            offset_pct: 10.0,
        };
        assert_eq!(evaluate(&x, Op::Gt, &t), [false, true, true, true]);
        // SMA(2) = [NaN, 1.5, 2.25, 2.55] -> targets [NaN, 1.65, 2.475, 2.805].
        let x = [1.0, 2.0, 2.5, 2.6];
        assert_eq!(evaluate(&x, Op::Gt, &t), [false, true, true, false]);
        let e = Target::OwnAverage {
            kind: MaKind::Exponential,
            period: 2,
            offset_pct: 0.0,
        };
        // EMA(2): seed 1.5, then 2.5*2/3+1.5/3 = 2.1667, then 2.6*2/3 + 2.1667/3 = 2.4556.
        assert_eq!(evaluate(&x, Op::Gt, &e), [false, true, true, true]);
    }

    #[test]
    fn transforms_by_hand() {
        let x = [10.0, 12.0, 9.0, 15.0, 15.0];
        assert!(close(
            &transform(&x, Transform::RateOfChange(2)),
            &[NAN, NAN, -10.0, 25.0, 100.0 * (15.0 / 9.0 - 1.0)]
        ));
        assert!(close(
            &transform(&x, Transform::NetChange(1)),
            &[NAN, 2.0, -3.0, 6.0, 0.0]
        ));
        // Range rank over 3 bars, current included.
        assert!(close(
            &transform(&x, Transform::RangeRank(3)),
            &[NAN, NAN, 0.0, 100.0, 100.0]
        ));
        // Previous 2 bars' range: at 2 -> [10, 12]: (9-10)/2 = -50%; at 3 -> [12, 9]: 200%.
        assert!(close(
            &transform(&x, Transform::PctOfPreviousRange(2)),
            &[NAN, NAN, -50.0, 200.0, 100.0]
        ));
        assert!(close(
            &transform(&x, Transform::DrawDown(3)),
            &[NAN, NAN, -25.0, 0.0, 0.0]
        ));
        assert!(close(
            &transform(&x, Transform::DrawUp(3)),
            &[
                NAN,
                NAN,
                0.0,
                100.0 * (15.0 / 9.0 - 1.0),
                100.0 * (15.0 / 9.0 - 1.0)
            ]
        ));
        assert!(close(
            &transform(&x, Transform::MaRatio(2, MaKind::Simple)),
            &[NAN, 12.0 / 11.0, 9.0 / 10.5, 15.0 / 12.0, 1.0]
        ));
    }

    #[test]
    fn rolling_extremes_match_a_direct_scan() {
        let x: Vec<f64> = (0..300)
            .map(|i| {
                if i % 37 == 5 {
                    NAN
                } else {
                    ((i * 7919) % 101) as f64 - 50.0
                }
            })
            .collect();
        for p in [1, 2, 5, 21, 252] {
            let (lo, hi) = rolling_extremes(&x, p);
            for i in 0..x.len() {
                if i + 1 < p {
                    assert!(lo[i].is_nan() && hi[i].is_nan());
                    continue;
                }
                let w: Vec<f64> = x[i + 1 - p..=i]
                    .iter()
                    .cloned()
                    .filter(|v| !v.is_nan())
                    .collect();
                let want_lo = w.iter().cloned().fold(f64::INFINITY, f64::min);
                let want_hi = w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                if w.is_empty() {
                    assert!(lo[i].is_nan());
                } else {
                    assert_eq!((lo[i], hi[i]), (want_lo, want_hi), "p={p} i={i}");
                }
            }
        }
    }

    #[test]
    fn scoring_votes() {
        let a = vec![true, true, false, false];
        let b = vec![true, false, true, false];
        let c = vec![false, true, true, false];
        assert_eq!(
            scoring(&[a.clone(), b.clone(), c.clone()], 2),
            [true, true, true, false]
        );
        assert_eq!(scoring(&[a, b, c], 3), [false, false, false, false]);
    }

    #[test]
    fn time_order_sequences() {
        let s1 = vec![true, false, false, false, false, true, false, false];
        let s2 = vec![true, false, true, false, false, false, false, true];
        // s2 on bar 0 is the same bar as s1: not after it. Bar 2 completes; the
        // sequence is consumed. Bar 5 starts another, bar 7 completes it.
        assert_eq!(
            time_order(&[s1.clone(), s2.clone()], 100),
            [false, false, true, false, false, false, false, true]
        );
        // Within 1 bar only: 0 -> 2 is too slow, 5 -> 7 too.
        assert_eq!(time_order(&[s1.clone(), s2.clone()], 1), [false; 8]);
        assert_eq!(
            time_order(&[s1.clone(), s2], 2),
            [false, false, true, false, false, false, false, true]
        );
        let s3 = vec![false, true, false, true, true, false, true, false];
        let s2b = vec![false, true, false, false, false, false, true, false];
        // s1@0, s2@1, s3@3 -> fires at 3; s1@5, s2@6, s3 needs a later bar: none.
        assert_eq!(
            time_order(&[s1, s2b, s3], 100),
            [false, false, false, true, false, false, false, false]
        );
    }

    #[test]
    fn delay_shifts_later() {
        assert_eq!(
            delay(&[true, false, true, false], 1),
            [false, true, false, true]
        );
        assert_eq!(delay(&[true, false], 0), [true, false]);
    }
}
