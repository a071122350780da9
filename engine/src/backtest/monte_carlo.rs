//! Monte Carlo of a result by the bootstrap: the run's trades (or its
//! per-bar returns, in blocks) drawn again with replacement, many times,
//! each draw compounded into an equity path from 1. The spread of the
//! paths' CAGR, maximum drawdown and final equity says how much of the
//! result is the order and the luck of its trades.
//!
//! Draw `d` of seed `s` always picks the same elements: its generator is
//! ChaCha8 seeded with `s` on stream `d`, so a draw does not depend on how
//! many were asked for or on how the work is split between threads.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How a path picks from the original sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resampling {
    /// Each step any element (Efron's bootstrap): trades, taken as
    /// independent.
    Independent,
    /// Runs of this many consecutive elements from random starts, wrapping
    /// at the end (Politis and Romano's circular block bootstrap): per-bar
    /// returns, keeping their short-range dependence.
    Blocks(usize),
}

/// The source indices of draw `draw`: `len` of them, into a sequence of
/// `len` elements.
pub fn draw(len: usize, how: Resampling, seed: u64, draw: u64, out: &mut Vec<usize>) {
    out.clear();
    if len == 0 {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(draw);
    match how {
        Resampling::Independent => out.extend((0..len).map(|_| rng.random_range(0..len))),
        Resampling::Blocks(block) => {
            let block = block.clamp(1, len);
            while out.len() < len {
                let start = rng.random_range(0..len);
                let take = block.min(len - out.len());
                // Wrapped without a division per element.
                let first = take.min(len - start);
                out.extend(start..start + first);
                out.extend(0..take - first);
            }
        }
    }
}

/// Up to `max` steps of a path of `steps` steps (0 = the start, `steps` =
/// the end), evenly spread: where a fan chart is drawn.
pub fn fan_points(steps: usize, max: usize) -> Vec<usize> {
    let max = max.max(2);
    if steps < max {
        return (0..=steps).collect();
    }
    (0..max)
        .map(|i| (i * steps + (max - 1) / 2) / (max - 1))
        .collect()
}

/// Compound annual growth over `years`: 0 when the equity ends at or below
/// zero or the span is empty (as a backtest's own CAGR).
pub fn annual_growth(final_equity: f64, years: f64) -> f64 {
    if years > 0.0 && final_equity > 0.0 {
        final_equity.powf(1.0 / years) - 1.0
    } else {
        0.0
    }
}

/// What one path ended with (fractions; equity from 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub final_equity: f64,
    /// Deepest fall below the highest equity so far (0 or negative), the
    /// start's 1 counting as a peak.
    pub max_drawdown: f64,
    pub cagr: f64,
}

/// The path through `growth` (one factor per step: 1 + a trade's return
/// on equity, or 1 + a bar's return) in the order `picks` gives; the
/// equity at each of `points` is written to `fan`.
pub fn walk(
    growth: &[f64],
    picks: &[usize],
    years: f64,
    points: &[usize],
    fan: &mut [f64],
) -> Outcome {
    let (mut equity, mut peak, mut deepest) = (1.0f64, 1.0f64, 0.0f64);
    let mut p = 0;
    while p < points.len() && points[p] == 0 {
        fan[p] = 1.0;
        p += 1;
    }
    for (k, &i) in picks.iter().enumerate() {
        equity *= growth[i];
        peak = peak.max(equity);
        deepest = deepest.min(equity / peak - 1.0);
        while p < points.len() && points[p] == k + 1 {
            fan[p] = equity;
            p += 1;
        }
    }
    Outcome {
        final_equity: equity,
        max_drawdown: deepest,
        cagr: annual_growth(equity, years),
    }
}

/// What to draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub how: Resampling,
    pub draws: usize,
    pub seed: u64,
    /// The original's span in calendar years, for every path's CAGR.
    pub years: f64,
    /// At most this many points of the fan chart.
    pub max_points: usize,
}

/// Every draw's outcome and its equity at the fan's points.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulation {
    pub outcomes: Vec<Outcome>,
    /// Steps of the paths the fan is taken at.
    pub points: Vec<usize>,
    /// Draw-major: draw d's equity at point j is `fan[d * points.len() + j]`.
    pub fan: Vec<f64>,
}

/// Draws per unit of parallel work: small enough that a stop is seen soon
/// and the cores stay balanced, large enough to amortise the hand-off.
const DRAWS_PER_PART: usize = 64;

/// `plan.draws` paths through `growth`, in parts of [`DRAWS_PER_PART`] on
/// the current rayon pool (the answer does not depend on its size: draw
/// `d` is seeded by `d`). `go_on` is asked before each part; once it says
/// no, the rest is skipped and the answer is `None` (its client has gone).
pub fn simulate(
    growth: &[f64],
    plan: &Plan,
    go_on: &(dyn Fn() -> bool + Sync),
) -> Option<Simulation> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    let points = fan_points(growth.len(), plan.max_points);
    let width = points.len();
    let mut outcomes = vec![
        Outcome {
            final_equity: 1.0,
            max_drawdown: 0.0,
            cagr: 0.0
        };
        plan.draws
    ];
    let mut fan = vec![0.0; plan.draws * width];
    let per = DRAWS_PER_PART;
    let stopped = AtomicBool::new(false);
    outcomes
        .par_chunks_mut(per)
        .zip(fan.par_chunks_mut(per * width))
        .enumerate()
        .for_each(|(part, (outs, fans))| {
            if stopped.load(Ordering::Relaxed) || !go_on() {
                stopped.store(true, Ordering::Relaxed);
                return;
            }
            let mut picks = Vec::with_capacity(growth.len());
            for (k, (out, row)) in outs.iter_mut().zip(fans.chunks_mut(width)).enumerate() {
                let d = (part * per + k) as u64;
                draw(growth.len(), plan.how, plan.seed, d, &mut picks);
                *out = walk(growth, &picks, plan.years, &points, row);
            }
        });
    if stopped.into_inner() {
        return None;
    }
    Some(Simulation {
        outcomes,
        points,
        fan,
    })
}

/// The `q`-th percentile (0 to 100) of ascending `sorted`, interpolated
/// linearly between neighbours: numpy's default (`method="linear"`),
/// including its way of interpolating from the nearer side.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let at = (n - 1) as f64 * (q / 100.0);
    let lo = (at.floor() as usize).min(n - 1);
    let hi = (lo + 1).min(n - 1);
    lerp(sorted[lo], sorted[hi], at - lo as f64)
}

/// numpy's `_lerp`: from `b` back when `t` is past the middle.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// `percentile` of `values` at each of `qs`, by selection instead of a
/// full sort (the same order statistics; `values` is reordered).
pub fn percentiles(values: &mut [f64], qs: &[f64]) -> Vec<f64> {
    let n = values.len();
    qs.iter()
        .map(|q| {
            if n == 0 {
                return f64::NAN;
            }
            let at = (n - 1) as f64 * (q / 100.0);
            let lo = (at.floor() as usize).min(n - 1);
            let (_, a, right) = values.select_nth_unstable_by(lo, f64::total_cmp);
            let a = *a;
            let b = right.iter().copied().min_by(f64::total_cmp).unwrap_or(a);
            lerp(a, b, at - lo as f64)
        })
        .collect()
}

/// Percentile bands of a simulation: per percentile, the outcomes' and
/// the fan's values.
#[derive(Debug, Clone, PartialEq)]
pub struct Bands {
    pub final_equity: Vec<f64>,
    pub max_drawdown: Vec<f64>,
    pub cagr: Vec<f64>,
    /// Per percentile, the equity at each fan point.
    pub fan: Vec<Vec<f64>>,
}

pub fn bands(sim: &Simulation, qs: &[f64]) -> Bands {
    let at = |mut values: Vec<f64>| percentiles(&mut values, qs);
    let width = sim.points.len();
    let draws = sim.outcomes.len();
    // Point-major, in tiles, so each point's values are read in a row.
    let mut columns = vec![0.0; sim.fan.len()];
    const TILE: usize = 32;
    for d0 in (0..draws).step_by(TILE) {
        for j0 in (0..width).step_by(TILE) {
            for d in d0..(d0 + TILE).min(draws) {
                for j in j0..(j0 + TILE).min(width) {
                    columns[j * draws + d] = sim.fan[d * width + j];
                }
            }
        }
    }
    let mut fan = vec![Vec::with_capacity(width); qs.len()];
    for column in columns.chunks_mut(draws.max(1)).take(width) {
        for (band, value) in fan.iter_mut().zip(percentiles(column, qs)) {
            band.push(value);
        }
    }
    Bands {
        final_equity: at(sim.outcomes.iter().map(|o| o.final_equity).collect()),
        max_drawdown: at(sim.outcomes.iter().map(|o| o.max_drawdown).collect()),
        cagr: at(sim.outcomes.iter().map(|o| o.cagr).collect()),
        fan,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(how: Resampling, draws: usize, seed: u64) -> Plan {
        Plan {
            how,
            draws,
            seed,
            years: 2.0,
            max_points: 250,
        }
    }

    #[test]
    fn percentiles_match_numpys_worked_values() {
        // np.percentile([1, 2, 3, 4], [0, 25, 50, 95, 100]), to the bit.
        let v = [1.0, 2.0, 3.0, 4.0];
        let got: Vec<f64> = [0.0, 25.0, 50.0, 95.0, 100.0]
            .iter()
            .map(|q| percentile(&v, *q))
            .collect();
        assert_eq!(got, vec![1.0, 1.75, 2.5, 3.8499999999999996, 4.0]);
        assert_eq!(percentile(&[7.0], 5.0), 7.0);
        assert!(percentile(&[], 50.0).is_nan());
    }

    #[test]
    fn selection_gives_the_sorted_percentiles() {
        let qs = [0.0, 1.0, 5.0, 33.3, 50.0, 95.0, 99.9, 100.0];
        for n in [1, 2, 7, 100, 1001] {
            let values: Vec<f64> = (0..n)
                .map(|i| ((i * 7919) % 1013) as f64 / 7.0 - 50.0)
                .collect();
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let want: Vec<f64> = qs.iter().map(|q| percentile(&sorted, *q)).collect();
            assert_eq!(percentiles(&mut values.clone(), &qs), want, "{n}");
        }
        assert!(percentiles(&mut [], &[50.0])[0].is_nan());
    }

    /// A run to its end.
    fn sim(growth: &[f64], plan: &Plan) -> Simulation {
        simulate(growth, plan, &|| true).expect("not stopped")
    }

    #[test]
    fn a_seed_gives_the_same_draws_and_another_does_not() {
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        draw(50, Resampling::Independent, 7, 3, &mut a);
        draw(50, Resampling::Independent, 7, 3, &mut b);
        draw(50, Resampling::Independent, 8, 3, &mut c);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|i| *i < 50));
        let growth: Vec<f64> = (0..40)
            .map(|i| 1.0 + ((i * 7 % 11) as f64 - 5.0) / 100.0)
            .collect();
        let on = |threads: usize, draws: usize, seed: u64| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| sim(&growth, &plan(Resampling::Independent, draws, seed)))
        };
        let one = on(1, 300, 42);
        assert_eq!(one, on(3, 300, 42));
        // The first draws of a longer run are the shorter run's.
        let more = on(2, 500, 42);
        assert_eq!(one.outcomes[..], more.outcomes[..300]);
        assert_ne!(one, on(1, 300, 43));
    }

    #[test]
    fn a_run_told_to_stop_skips_its_remaining_parts_and_answers_none() {
        let growth: Vec<f64> = (0..40).map(|i| 1.0 + (i % 3) as f64 / 100.0).collect();
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let go_on = || asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2;
        let p = plan(Resampling::Independent, 100 * DRAWS_PER_PART, 1);
        assert_eq!(simulate(&growth, &p, &go_on), None);
        let asked = asked.into_inner();
        assert!(
            asked < 100,
            "stopped early: asked {asked} times of 100 parts"
        );
    }

    #[test]
    fn blocks_are_circular_runs_of_their_length() {
        let mut picks = Vec::new();
        draw(10, Resampling::Blocks(4), 1, 0, &mut picks);
        assert_eq!(picks.len(), 10);
        for run in picks.chunks(4) {
            for w in run.windows(2) {
                assert_eq!(w[1], (w[0] + 1) % 10, "{picks:?}");
            }
        }
    }

    #[test]
    fn a_path_compounds_its_picks_and_falls_from_its_peak() {
        let growth = [1.1, 0.5, 1.2];
        let mut fan = [0.0; 4];
        let o = walk(&growth, &[0, 0, 1, 2], 2.0, &[0, 2, 3, 4], &mut fan);
        // 1 -> 1.1 -> 1.21 -> 0.605 -> 0.726
        assert!((o.final_equity - 0.726).abs() < 1e-15);
        assert!((o.max_drawdown - (0.605 / 1.21 - 1.0)).abs() < 1e-15);
        assert!((o.cagr - (0.726f64.sqrt() - 1.0)).abs() < 1e-15);
        assert_eq!(fan[0], 1.0);
        assert!((fan[1] - 1.21).abs() < 1e-15 && (fan[3] - 0.726).abs() < 1e-15);
        // A path that only falls has its start as its peak.
        let o = walk(&[0.9], &[0, 0], 1.0, &[], &mut []);
        assert!((o.max_drawdown - (0.81 - 1.0)).abs() < 1e-15);
    }

    #[test]
    fn one_block_as_long_as_the_series_only_rotates_it() {
        // Every draw is a rotation: the same product, the same final equity.
        let growth = [1.05, 0.97, 1.02, 0.9, 1.1, 1.01];
        let product: f64 = growth.iter().product();
        let sim = sim(&growth, &plan(Resampling::Blocks(6), 200, 5));
        let b = bands(&sim, &[5.0, 50.0, 95.0]);
        for v in &b.final_equity {
            assert!((v - product).abs() < 1e-12, "{v} vs {product}");
        }
        // The drawdowns differ with where the rotation starts.
        assert!(b.max_drawdown[0] < b.max_drawdown[2]);
    }

    #[test]
    fn the_bootstrap_mean_is_the_mean_growth_compounded() {
        // Independent picks: E[final] = mean(growth)^n.
        let growth: Vec<f64> = (0..30)
            .map(|i| 1.0 + ((i % 5) as f64 - 1.5) / 100.0)
            .collect();
        let mean = growth.iter().sum::<f64>() / 30.0;
        let sim = sim(&growth, &plan(Resampling::Independent, 20_000, 9));
        let got = sim.outcomes.iter().map(|o| o.final_equity).sum::<f64>() / 20_000.0;
        let want = mean.powi(30);
        assert!((got / want - 1.0).abs() < 0.005, "{got} vs {want}");
    }

    #[test]
    fn fan_points_span_the_path_and_bands_are_ordered() {
        assert_eq!(fan_points(3, 250), vec![0, 1, 2, 3]);
        let p = fan_points(5_000, 250);
        assert_eq!((p.len(), p[0], p[249]), (250, 0, 5_000));
        assert!(p.windows(2).all(|w| w[0] < w[1]));
        let growth: Vec<f64> = (0..600)
            .map(|i| 1.0 + ((i * 13 % 17) as f64 - 8.0) / 1000.0)
            .collect();
        let sim = sim(&growth, &plan(Resampling::Blocks(20), 400, 1));
        assert_eq!(sim.points.len(), 250);
        let b = bands(&sim, &[5.0, 50.0, 95.0]);
        for j in 0..250 {
            assert!(b.fan[0][j] <= b.fan[1][j] && b.fan[1][j] <= b.fan[2][j]);
        }
        assert_eq!(b.fan[0][0], 1.0);
        assert_eq!(b.fan[1][249], b.final_equity[1]);
    }
}
