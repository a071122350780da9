//! A stock's scanner items: every signal that fired on an as-of bar, with
//! its levels and the statistics of its own earlier firings there. Signals
//! are causal, so one pass over the history up to the last as-of bar serves
//! every as-of bar before it.

use super::fire::Direction;
use super::stats::{self, Figures, Trade};
use super::{Inputs, SIGNALS, trend};
use std::ops::Range;

/// One signal that fired on one bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The as-of bar.
    pub bar: usize,
    /// Index into [`SIGNALS`].
    pub signal: usize,
    pub direction: Direction,
    /// Percent.
    pub profit_target: f64,
    /// Percent, positive.
    pub stop_loss: f64,
    /// Sessions a trade on it is held at most.
    pub hold: usize,
    /// The earlier firings' trades closed by the as-of bar, in order of entry.
    pub trades: Vec<Trade>,
    pub figures: Figures,
    /// 0-10 (NaN before the score's warm-up).
    pub trend_score: f64,
    /// 0-10 against the benchmark (NaN without one, or before its warm-up).
    pub rel_trend_score: f64,
    /// The Optix reading on the bar (NaN where there is none).
    pub optix: f64,
}

/// The items of the as-of bars in `asof`, ordered by bar, then signal. A
/// firing before a year of returns has no levels and makes no item.
/// `benchmark` holds the benchmark's close on each of the stock's bars.
pub fn items(inputs: &Inputs, benchmark: Option<&[f64]>, asof: Range<usize>) -> Vec<Item> {
    let n = inputs.close.len();
    let asof = asof.start.min(n)..asof.end.min(n);
    if asof.is_empty() {
        return Vec::new();
    }
    // Nothing after the last as-of bar is read.
    let cut = |x: &[f64]| -> Vec<f64> { x[..asof.end].to_vec() };
    let (open, high, low, close) = (
        cut(inputs.open),
        cut(inputs.high),
        cut(inputs.low),
        cut(inputs.close),
    );
    let optix = inputs.optix.map(cut);
    let upto = Inputs {
        open: &open,
        high: &high,
        low: &low,
        close: &close,
        optix: optix.as_deref(),
    };
    let score = trend::score(&close);
    let rel = benchmark.map(|b| trend::relative_score(&close, &b[..asof.end]));
    let last = asof.end - 1;
    let mut out = Vec::new();
    let vols = stats::Vols::new(&close);
    for (k, signal) in SIGNALS.iter().enumerate() {
        let firings = (signal.fire)(&upto);
        if !asof.clone().any(|i| firings[i].is_some()) {
            continue;
        }
        let hold = signal.horizon().hold();
        // Every earlier firing's trade that closed by the last as-of bar;
        // each as-of bar keeps those closed by it.
        let all = vols.history(&firings, hold, last);
        for i in asof.clone() {
            let Some(direction) = firings[i] else {
                continue;
            };
            let Some((profit_target, stop_loss)) = vols.levels(i, hold) else {
                continue;
            };
            let trades: Vec<Trade> = all
                .iter()
                .filter(|t| t.entry < i && t.exit <= i)
                .copied()
                .collect();
            out.push(Item {
                bar: i,
                signal: k,
                direction,
                profit_target,
                stop_loss,
                hold,
                figures: stats::Running::of(&trades),
                trades,
                trend_score: score[i],
                rel_trend_score: rel.as_ref().map_or(f64::NAN, |r| r[i]),
                optix: optix.as_ref().map_or(f64::NAN, |o| o[i]),
            });
        }
    }
    out.sort_by_key(|it| (it.bar, it.signal));
    out
}

/// [`items`] without the trade lists (`trades` empty), for many as-of bars
/// at once: each signal's history is walked once, its figures kept up to
/// date as trades close (see [`stats::Running`]).
pub fn summaries(inputs: &Inputs, benchmark: Option<&[f64]>, asof: Range<usize>) -> Vec<Item> {
    let n = inputs.close.len();
    let asof = asof.start.min(n)..asof.end.min(n);
    if asof.is_empty() {
        return Vec::new();
    }
    let end = asof.end;
    let upto = Inputs {
        open: &inputs.open[..end],
        high: &inputs.high[..end],
        low: &inputs.low[..end],
        close: &inputs.close[..end],
        optix: inputs.optix.map(|o| &o[..end]),
    };
    let close = upto.close;
    let mut score: Option<Vec<f64>> = None;
    let mut rel: Option<Option<Vec<f64>>> = None;
    let mut out = Vec::new();
    let vols = stats::Vols::new(close);
    for (k, signal) in SIGNALS.iter().enumerate() {
        let firings = (signal.fire)(&upto);
        if !asof.clone().any(|i| firings[i].is_some()) {
            continue;
        }
        let score = score.get_or_insert_with(|| trend::score(close));
        let rel =
            rel.get_or_insert_with(|| benchmark.map(|b| trend::relative_score(close, &b[..end])));
        let hold = signal.horizon().hold();
        let mut all = vols.history(&firings, hold, end - 1);
        all.sort_by_key(|t| (t.exit, t.entry));
        let mut running = stats::Running::default();
        let mut next = 0;
        for i in asof.clone() {
            let Some(direction) = firings[i] else {
                continue;
            };
            let Some((profit_target, stop_loss)) = vols.levels(i, hold) else {
                continue;
            };
            while next < all.len() && all[next].exit <= i {
                running.add(&all[next]);
                next += 1;
            }
            out.push(Item {
                bar: i,
                signal: k,
                direction,
                profit_target,
                stop_loss,
                hold,
                trades: Vec::new(),
                figures: running.figures(),
                trend_score: score[i],
                rel_trend_score: rel.as_ref().map_or(f64::NAN, |r| r[i]),
                optix: upto.optix.map_or(f64::NAN, |o| o[i]),
            });
        }
    }
    out.sort_by_key(|it| (it.bar, it.signal));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        let close: Vec<f64> = (0..n)
            .map(|i| 100.0 + 12.0 * (i as f64 / 11.0).sin() + i as f64 * 0.03)
            .collect();
        let high = close.iter().map(|c| c + 1.0).collect();
        let low = close.iter().map(|c| c - 1.0).collect();
        let open = close.iter().map(|c| c - 0.2).collect();
        (open, high, low, close)
    }

    #[test]
    fn one_bar_equals_the_history_cut_there_and_a_range_equals_its_bars() {
        let (open, high, low, close) = series(700);
        let optix: Vec<f64> = (0..700)
            .map(|i| 50.0 + 40.0 * (i as f64 / 7.0).cos())
            .collect();
        let bench: Vec<f64> = (0..700).map(|i| 1000.0 + i as f64).collect();
        let inputs = Inputs {
            open: &open,
            high: &high,
            low: &low,
            close: &close,
            optix: Some(&optix),
        };
        let range = items(&inputs, Some(&bench), 600..700);
        assert!(range.len() > 20, "{}", range.len());
        for bar in [600, 650, 699] {
            let one = items(&inputs, Some(&bench), bar..bar + 1);
            let from_range: Vec<Item> = range.iter().filter(|it| it.bar == bar).cloned().collect();
            assert_eq!(one, from_range, "bar {bar}");
        }
        // Each item is the signal's firing there, its history closed by then.
        for it in &range {
            let signal = &SIGNALS[it.signal];
            assert_eq!((signal.fire)(&inputs)[it.bar], Some(it.direction));
            assert!(
                it.trades
                    .iter()
                    .all(|t| t.entry < it.bar && t.exit <= it.bar)
            );
            assert_eq!(it.figures.trade_number, it.trades.len());
            assert_eq!(it.hold, signal.horizon().hold());
            assert!((0.0..=10.0).contains(&it.trend_score));
            assert!((0.0..=10.0).contains(&it.rel_trend_score));
            assert_eq!(it.optix, optix[it.bar]);
        }
        // Without a benchmark or Optix: NaN readings, and no Optix signals.
        let plain = Inputs {
            optix: None,
            ..inputs
        };
        let without = items(&plain, None, 699..700);
        assert!(
            without
                .iter()
                .all(|it| it.rel_trend_score.is_nan() && it.optix.is_nan())
        );
        assert!(
            without
                .iter()
                .all(|it| SIGNALS[it.signal].category != super::super::Category::Optix)
        );
    }

    #[test]
    fn summaries_are_the_items_without_trades() {
        let (open, high, low, close) = series(900);
        let optix: Vec<f64> = (0..900)
            .map(|i| 50.0 + 40.0 * (i as f64 / 7.0).cos())
            .collect();
        let bench: Vec<f64> = (0..900).map(|i| 1000.0 + (i as f64 / 5.0).sin()).collect();
        let inputs = Inputs {
            open: &open,
            high: &high,
            low: &low,
            close: &close,
            optix: Some(&optix),
        };
        let full = items(&inputs, Some(&bench), 500..900);
        let fast = summaries(&inputs, Some(&bench), 500..900);
        assert_eq!(full.len(), fast.len());
        assert!(full.len() > 50);
        for (a, b) in full.iter().zip(&fast) {
            assert_eq!(
                (a.bar, a.signal, a.direction),
                (b.bar, b.signal, b.direction)
            );
            assert_eq!(
                (a.profit_target, a.stop_loss, a.hold),
                (b.profit_target, b.stop_loss, b.hold)
            );
            assert!(b.trades.is_empty());
            // The same figures to the bit, and the batch ones to rounding.
            assert_eq!(a.figures, b.figures);
            let batch = stats::figures(&a.trades);
            assert!((a.figures.avg_return - batch.avg_return).abs() < 1e-9);
            assert!((a.figures.std_dev - batch.std_dev).abs() < 1e-9);
            assert_eq!(a.trend_score, b.trend_score);
            assert_eq!(a.rel_trend_score, b.rel_trend_score);
            assert_eq!(a.optix.to_bits(), b.optix.to_bits());
        }
    }

    #[test]
    fn no_items_before_a_year_of_returns_or_outside_the_bars() {
        let (open, high, low, close) = series(300);
        let inputs = Inputs {
            open: &open,
            high: &high,
            low: &low,
            close: &close,
            optix: None,
        };
        assert!(items(&inputs, None, 0..252).is_empty());
        assert!(items(&inputs, None, 300..310).is_empty());
        assert!(!items(&inputs, None, 252..300).is_empty());
    }
}
