//! Trend scores 0-10 and their signals. A point each for the close above
//! its 10-, 20-, 50-, 100- and 200-bar simple averages, for the 10-bar
//! average above the 20, the 20 above the 50 and the 50 above the 200, and
//! for the 50- and 200-bar averages higher than 10 bars before. NaN until
//! the 200-bar average is 10 bars old. The relative score is the same score
//! of the close divided by the benchmark's close.

use super::fire::{Direction, Firings, crosses_level, only};
use crate::indicators::sma;

/// The score's warm-up: the 200-bar average, and 10 bars more for its slope.
pub const WARM_UP: usize = 209;
/// Breakout above, breakdown below.
pub const BREAKOUT: f64 = 7.0;
pub const BREAKDOWN: f64 = 3.0;

/// The trend score of `close`, per bar.
pub fn score(close: &[f64]) -> Vec<f64> {
    let a: Vec<Vec<f64>> = [10, 20, 50, 100, 200]
        .iter()
        .map(|p| sma(close, *p))
        .collect();
    (0..close.len())
        .map(|i| {
            if i < WARM_UP {
                return f64::NAN;
            }
            let c = close[i];
            let points = [
                c > a[0][i],
                c > a[1][i],
                c > a[2][i],
                c > a[3][i],
                c > a[4][i],
                a[0][i] > a[1][i],
                a[1][i] > a[2][i],
                a[2][i] > a[4][i],
                a[2][i] > a[2][i - 10],
                a[4][i] > a[4][i - 10],
            ];
            points.iter().filter(|p| **p).count() as f64
        })
        .collect()
}

/// The score of `close / benchmark` (aligned bar for bar).
pub fn relative_score(close: &[f64], benchmark: &[f64]) -> Vec<f64> {
    let ratio: Vec<f64> = close.iter().zip(benchmark).map(|(c, b)| c / b).collect();
    score(&ratio)
}

/// `Trend Score Breakout`: the score rises above 7: Long.
pub fn breakout(close: &[f64]) -> Firings {
    only(
        &crosses_level(&score(close), BREAKOUT, true),
        Direction::Long,
    )
}

/// `Trend Score Breakdown`: the score falls below 3: Short.
pub fn breakdown(close: &[f64]) -> Firings {
    only(
        &crosses_level(&score(close), BREAKDOWN, false),
        Direction::Short,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_by_hand() {
        let rising: Vec<f64> = (0..260).map(|i| 100.0 + i as f64).collect();
        let s = score(&rising);
        assert!(s[..WARM_UP].iter().all(|v| v.is_nan()));
        assert!(
            s[WARM_UP..].iter().all(|v| *v == 10.0),
            "every point in a steady rise"
        );
        let falling: Vec<f64> = rising.iter().rev().copied().collect();
        assert!(score(&falling)[WARM_UP..].iter().all(|v| *v == 0.0));
        // Against itself, a ratio of 1 never moves: no point.
        assert!(
            relative_score(&rising, &rising)[WARM_UP..]
                .iter()
                .all(|v| *v == 0.0)
        );
    }

    #[test]
    fn breakouts_and_breakdowns() {
        // Down for 260 bars, then up for 100: the score climbs through 7 once.
        let mut c: Vec<f64> = (0..260).map(|i| 400.0 - i as f64).collect();
        c.extend((1..=100).map(|i| 140.0 + 3.0 * i as f64));
        let up = crate::scanner::fire::fired_at(&breakout(&c));
        assert_eq!(up.len(), 1, "{up:?}");
        let s = score(&c);
        assert!(s[up[0] - 1] <= 7.0 && s[up[0]] > 7.0);
        // And the other way round: through 3 once.
        let down_c: Vec<f64> = c.iter().map(|v| 1000.0 - v).collect();
        assert_eq!(breakdown(&down_c).iter().flatten().count(), 1);
        assert!(breakout(&vec![5.0; 300]).iter().all(Option::is_none));
    }
}
