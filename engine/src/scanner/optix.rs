//! Optix signals: the stock's sentiment reading (0-100, contrary: low is
//! pessimism) against fixed levels, with and without the close above its
//! 200-day average. All are Long: they buy pessimism in an uptrend.

use super::fire::{Direction, Firings, crosses_level, only};
use crate::indicators::sma;

/// Bars a rise "after below" may look back for the low reading.
pub const RECOVERY_BARS: usize = 20;

/// Close above its 200-day average.
fn uptrend(close: &[f64]) -> Vec<bool> {
    close
        .iter()
        .zip(sma(close, 200))
        .map(|(c, a)| *c > a)
        .collect()
}

fn long(flags: Vec<bool>) -> Firings {
    only(&flags, Direction::Long)
}

fn and(a: &[bool], b: &[bool]) -> Vec<bool> {
    a.iter().zip(b).map(|(x, y)| *x && *y).collect()
}

/// `x` below `level` on the bar.
fn below(x: &[f64], level: f64) -> Vec<bool> {
    x.iter().map(|v| *v < level).collect()
}

/// `x` crosses above `high` having been below `low` within the
/// [`RECOVERY_BARS`] bars before.
fn recovers(x: &[f64], low: f64, high: f64) -> Vec<bool> {
    let up = crosses_level(x, high, true);
    (0..x.len())
        .map(|i| {
            up[i]
                && x[i.saturating_sub(RECOVERY_BARS)..i]
                    .iter()
                    .any(|v| *v < low)
        })
        .collect()
}

/// `Optix #1`: close above its 200-day average and the Optix 5-day average below 35.
pub fn optix_1(close: &[f64], optix: &[f64]) -> Firings {
    long(and(&uptrend(close), &below(&sma(optix, 5), 35.0)))
}

/// `Optix #2`: close above its 200-day average and Optix below 30.
pub fn optix_2(close: &[f64], optix: &[f64]) -> Firings {
    long(and(&uptrend(close), &below(optix, 30.0)))
}

/// `Optix #3`: the Optix 10-day average below 30 and Optix below 20.
pub fn optix_3(_close: &[f64], optix: &[f64]) -> Firings {
    long(and(&below(&sma(optix, 10), 30.0), &below(optix, 20.0)))
}

/// `Optix #4`: Optix crosses below 0.5, the extreme of pessimism.
pub fn optix_4(_close: &[f64], optix: &[f64]) -> Firings {
    long(crosses_level(optix, 0.5, false))
}

/// `Optix #5`: close above its 200-day average and the Optix 5-day average
/// crossing above 43 after being below 35.
pub fn optix_5(close: &[f64], optix: &[f64]) -> Firings {
    long(and(&uptrend(close), &recovers(&sma(optix, 5), 35.0, 43.0)))
}

/// `Optix #6`: the same with the 10-day average.
pub fn optix_6(close: &[f64], optix: &[f64]) -> Firings {
    long(and(&uptrend(close), &recovers(&sma(optix, 10), 35.0, 43.0)))
}

/// `Optix #7`: close above its 200-day average and Optix crossing above 43
/// after being below 30.
pub fn optix_7(close: &[f64], optix: &[f64]) -> Firings {
    long(and(&uptrend(close), &recovers(optix, 30.0, 43.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scanner::fire::fired_at as bars;

    #[test]
    fn levels_need_the_uptrend() {
        let up: Vec<f64> = (0..230).map(|i| 100.0 + i as f64).collect();
        let down: Vec<f64> = up.iter().rev().copied().collect();
        let mut optix = vec![50.0; 230];
        optix[220] = 25.0;
        assert_eq!(bars(&optix_2(&up, &optix)), vec![220]);
        assert!(
            bars(&optix_2(&down, &optix)).is_empty(),
            "no uptrend, no signal"
        );
        // Five readings of 25 (bars 220-224): the 5-day average is 35 with
        // three of them (not below), 30 with four or five, 35 again after.
        for v in &mut optix[221..225] {
            *v = 25.0;
        }
        assert_eq!(bars(&optix_1(&up, &optix)), vec![223, 224, 225]);
    }

    #[test]
    fn deep_pessimism() {
        let mut optix = vec![50.0; 40];
        for v in &mut optix[20..30] {
            *v = 15.0;
        }
        // The 10-day average falls below 30 on the sixth low reading.
        assert_eq!(bars(&optix_3(&[0.0; 40], &optix)), vec![25, 26, 27, 28, 29]);
        let mut o = vec![5.0; 10];
        o[5] = 0.4;
        assert_eq!(bars(&optix_4(&[0.0; 10], &o)), vec![5]);
    }

    #[test]
    fn average_recoveries() {
        let up: Vec<f64> = (0..240).map(|i| 100.0 + i as f64).collect();
        let mut optix = vec![40.0; 240];
        optix[210..215].fill(20.0);
        optix[215..].fill(70.0);
        // 5-day averages: 40 at 216 (20, 20, 20, 70, 70), 50 at 217.
        assert_eq!(bars(&optix_5(&up, &optix)), vec![217]);
        // 10-day averages: 42 at 218, 45 at 219 (after 30 at 214).
        let m10 = crate::indicators::sma(&optix, 10);
        let want: Vec<usize> = (1..240)
            .filter(|&i| m10[i - 1] <= 43.0 && m10[i] > 43.0)
            .collect();
        assert_eq!(bars(&optix_6(&up, &optix)), want);
        assert_eq!(want.len(), 1);
    }

    #[test]
    fn recoveries() {
        let up: Vec<f64> = (0..240).map(|i| 100.0 + i as f64).collect();
        let mut optix = vec![40.0; 240];
        optix[210] = 25.0;
        optix[215] = 45.0; // up through 43, five bars after a 25
        optix[225] = 39.0;
        optix[230] = 45.0; // up through 43, but no reading under 30 in 20 bars? 25 at 210 is 20 bars back
        assert_eq!(bars(&optix_7(&up, &optix)), vec![215, 230]);
        optix[236] = 39.0;
        optix[238] = 45.0; // 25 was 28 bars ago
        assert_eq!(bars(&optix_7(&up, &optix)), vec![215, 230]);
    }
}
