//! Chart-pattern signals: the eight predefined shapes of the pattern matcher
//! completed on the bar (the 20 bars ending there correlate at least 85 with
//! the shape read at 20 bars), and the UpTrend and DownTrend candle runs.

use super::fire::{Direction, Firings, only};
use crate::cpm::{Template, shape, sliding_corr};

/// Bars a shape is matched over, and the correlation (x 100) it needs.
pub const SHAPE_BARS: usize = 20;
pub const SHAPE_CORR: f64 = 85.0;
/// Consecutive bars of a trend run.
pub const RUN_BARS: usize = 3;

/// The side each shape trades: tops and falling channels short, bottoms and
/// rising channels long.
pub fn shape_direction(name: &str) -> Direction {
    match name {
        "head_and_shoulder_top" | "double_top" | "triple_tap" | "descending_channel" => {
            Direction::Short
        }
        _ => Direction::Long,
    }
}

/// Bars where the 20 closes ending there match the shape `name`.
pub fn shape_completed(name: &str, close: &[f64]) -> Firings {
    let s = shape(name).expect("a predefined shape");
    let t = Template::new(&s.template(SHAPE_BARS)).expect("shapes move");
    let mut flags = vec![false; close.len()];
    for (start, r) in sliding_corr(&t, close).iter().enumerate() {
        flags[start + SHAPE_BARS - 1] = 100.0 * r >= SHAPE_CORR;
    }
    only(&flags, shape_direction(name))
}

/// `UpTrend Pattern`: three bars in a row each with a higher high and a
/// higher low than the bar before: Long.
pub fn up_trend(high: &[f64], low: &[f64]) -> Firings {
    run(high, low, true)
}

/// `DownTrend Pattern`: three bars in a row each with a lower high and a
/// lower low: Short.
pub fn down_trend(high: &[f64], low: &[f64]) -> Firings {
    run(high, low, false)
}

fn run(high: &[f64], low: &[f64], up: bool) -> Firings {
    let step = |i: usize| {
        if up {
            high[i] > high[i - 1] && low[i] > low[i - 1]
        } else {
            high[i] < high[i - 1] && low[i] < low[i - 1]
        }
    };
    let flags: Vec<bool> = (0..high.len())
        .map(|i| i >= RUN_BARS && (i + 1 - RUN_BARS..=i).all(step))
        .collect();
    let side = if up {
        Direction::Long
    } else {
        Direction::Short
    };
    only(&flags, side)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scanner::fire::fired_at as bars;

    #[test]
    fn shapes_complete_where_drawn() {
        // Noise-free flat closes with a double bottom drawn at bars 30-49.
        let mut c = vec![100.0; 60];
        let drawn = shape("double_bottom").unwrap().template(SHAPE_BARS);
        for (k, v) in drawn.iter().enumerate() {
            c[30 + k] = 90.0 + 10.0 * v;
        }
        let f = shape_completed("double_bottom", &c);
        assert!(bars(&f).contains(&49));
        assert_eq!(f[49], Some(Direction::Long));
        assert!(
            bars(&shape_completed("double_top", &c))
                .iter()
                .all(|i| *i != 49)
        );
        assert_eq!(shape_completed("double_top", &c).len(), 60);
    }

    #[test]
    fn trend_runs() {
        let high = [10.0, 11.0, 12.0, 13.0, 14.0, 13.0, 12.0, 11.0, 10.0];
        let low = [9.0, 10.0, 11.0, 12.0, 13.0, 12.0, 11.0, 10.0, 9.0];
        assert_eq!(bars(&up_trend(&high, &low)), vec![3, 4]);
        assert_eq!(bars(&down_trend(&high, &low)), vec![7, 8]);
        // A higher high with a lower low (an outside bar) breaks the run.
        let low2 = [9.0, 10.0, 9.5, 12.0, 13.0, 12.0, 11.0, 10.0, 9.0];
        assert_eq!(bars(&up_trend(&high, &low2)), vec![]);
    }
}
