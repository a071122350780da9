//! Technical Indicator signals: moving-average and MACD crossings and turns,
//! an RSI recovery, and breakouts of the recent range.

use super::fire::{Direction, Firings, crosses, crosses_level, only, sides};
use crate::indicators::{macd, rsi, sma};

/// The moving average of the MA signals.
pub const MA_PERIOD: usize = 20;
/// The RSI period and the level its "golden cross" crosses.
pub const RSI_PERIOD: usize = 14;
pub const RSI_LEVEL: f64 = 35.0;
/// Closes a breakout is ranked against; highs and lows of the points signals.
pub const BREAKOUT_CLOSES: usize = 21;
pub const POINTS_BARS: usize = 13;

/// `MA`: the close crosses its 20-day average: above is Long, below Short.
pub fn ma(close: &[f64]) -> Firings {
    let a = sma(close, MA_PERIOD);
    sides(&crosses(close, &a, true), &crosses(close, &a, false))
}

/// Day-over-day change of `x`; NaN on the first bar.
fn change(x: &[f64]) -> Vec<f64> {
    std::iter::once(f64::NAN)
        .chain(x.windows(2).map(|w| w[1] - w[0]))
        .collect()
}

/// `MAGap`: the 20-day average's day-over-day change turns positive (Long)
/// or negative (Short).
pub fn ma_gap(close: &[f64]) -> Firings {
    let d = change(&sma(close, MA_PERIOD));
    sides(
        &crosses_level(&d, 0.0, true),
        &crosses_level(&d, 0.0, false),
    )
}

fn histogram(close: &[f64]) -> Vec<f64> {
    macd(close, 12, 26, 9).2
}

/// `MACDHist`: the MACD(12, 26, 9) histogram crosses zero: up Long, down Short.
pub fn macd_hist(close: &[f64]) -> Firings {
    let h = histogram(close);
    sides(
        &crosses_level(&h, 0.0, true),
        &crosses_level(&h, 0.0, false),
    )
}

/// `MACDHistGap`: the histogram turns: rising after falling while below
/// zero is Long, falling after rising while above zero is Short.
pub fn macd_hist_gap(close: &[f64]) -> Firings {
    let h = histogram(close);
    let d = change(&h);
    let up = crosses_level(&d, 0.0, true);
    let down = crosses_level(&d, 0.0, false);
    let long: Vec<bool> = up.iter().zip(&h).map(|(u, v)| *u && *v < 0.0).collect();
    let short: Vec<bool> = down.iter().zip(&h).map(|(u, v)| *u && *v > 0.0).collect();
    sides(&long, &short)
}

/// `RSI`: RSI(14) crosses above 35 (a recovery from oversold): Long.
pub fn rsi_cross(close: &[f64]) -> Firings {
    only(
        &crosses_level(&rsi(close, RSI_PERIOD), RSI_LEVEL, true),
        Direction::Long,
    )
}

/// Rank 0-100 of `x[i]` among the `n` values before it: the share of them
/// strictly below it; NaN until `n` values exist.
fn rank(x: &[f64], n: usize) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            if i < n {
                return f64::NAN;
            }
            let below = x[i - n..i].iter().filter(|v| **v < x[i]).count();
            100.0 * below as f64 / n as f64
        })
        .collect()
}

/// `PriceBreakout`: yesterday's close ranked 0 among the 21 closes before
/// it (the lowest) and today's ranks above 0: a turn off the range's floor,
/// Long.
pub fn price_breakout(close: &[f64]) -> Firings {
    let r = rank(close, BREAKOUT_CLOSES);
    let flags: Vec<bool> = (0..close.len())
        .map(|i| i > 0 && r[i - 1] == 0.0 && r[i] > 0.0)
        .collect();
    only(&flags, Direction::Long)
}

/// `HighPoints`: the high ranks 100 against the 13 highs before it (above
/// them all): Long.
pub fn high_points(high: &[f64]) -> Firings {
    let flags: Vec<bool> = rank(high, POINTS_BARS)
        .iter()
        .map(|r| *r == 100.0)
        .collect();
    only(&flags, Direction::Long)
}

/// `LowPoints`: the low is below the 13 lows before it: Short.
pub fn low_points(low: &[f64]) -> Firings {
    let flags: Vec<bool> = (0..low.len())
        .map(|i| i >= POINTS_BARS && low[i - POINTS_BARS..i].iter().all(|v| low[i] < *v))
        .collect();
    only(&flags, Direction::Short)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    fn at(f: &Firings) -> Vec<(usize, Direction)> {
        f.iter()
            .enumerate()
            .filter_map(|(i, d)| d.map(|d| (i, d)))
            .collect()
    }

    #[test]
    fn moving_average_crossings() {
        // 25 flat closes, a jump above the average, then a drop below it.
        let mut c = vec![10.0; 25];
        c.extend([12.0, 12.0, 8.0]);
        assert_eq!(at(&ma(&c)), vec![(25, Long), (27, Short)]);
        // The average's change: 0 while flat, then up on the jump, down on the drop.
        assert_eq!(at(&ma_gap(&c)), vec![(25, Long), (27, Short)]);
        assert!(at(&ma(&[10.0; 40])).is_empty(), "flat closes never cross");
    }

    #[test]
    fn macd_histogram() {
        // An accelerating fall then a rise: the histogram, falling below
        // zero, turns up first and crosses zero later.
        let mut c: Vec<f64> = (0..60).map(|i| 200.0 - 0.03 * (i * i) as f64).collect();
        let last = c[59];
        c.extend((1..40).map(|i| last + 2.0 * i as f64));
        let cross = at(&macd_hist(&c));
        let turn = at(&macd_hist_gap(&c));
        assert_eq!(cross.len(), 1);
        assert_eq!(cross[0].1, Long);
        assert_eq!(turn.iter().filter(|(_, d)| *d == Long).count(), 1);
        assert!(
            turn[0].0 < cross[0].0,
            "the turn comes first: {turn:?} {cross:?}"
        );
        assert!(at(&macd_hist(&[50.0; 80])).is_empty());
    }

    #[test]
    fn rsi_recovery() {
        // A slide to oversold, then a rebound through 35.
        let mut c: Vec<f64> = (0..30).map(|i| 100.0 - i as f64).collect();
        c.extend((0..10).map(|i| 72.0 + 3.0 * i as f64));
        let f = at(&rsi_cross(&c));
        assert_eq!(f.len(), 1);
        let r = crate::indicators::rsi(&c, RSI_PERIOD);
        let (i, d) = f[0];
        assert!(r[i - 1] <= 35.0 && r[i] > 35.0 && d == Long);
    }

    #[test]
    fn range_breakouts() {
        // Falling to a new low at bar 21, then up.
        let mut c: Vec<f64> = (0..22).map(|i| 50.0 - i as f64).collect();
        c.push(40.0);
        assert_eq!(at(&price_breakout(&c)), vec![(22, Long)]);
        let mut highs = vec![10.0; 13];
        highs.push(10.0); // ties are not above
        highs.push(10.5);
        assert_eq!(at(&high_points(&highs)), vec![(14, Long)]);
        let mut lows = vec![10.0; 13];
        lows.push(9.5);
        assert_eq!(at(&low_points(&lows)), vec![(13, Short)]);
    }
}
