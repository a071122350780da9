//! High/Low signals: a close that is the highest (or lowest) close of its
//! window, on closes as the spec says. Weeks are sessions: 4 weeks are 20,
//! 13 weeks 63, 52 weeks 252; all-time is every close so far, once a year of
//! history exists.

/// Sessions in the windows of the 4-, 13- and 52-week signals.
pub const WEEKS_4: usize = 20;
pub const WEEKS_13: usize = 63;
pub const WEEKS_52: usize = 252;
/// History an all-time high or low needs before it counts.
pub const ALL_TIME_MIN_HISTORY: usize = WEEKS_52;

/// Which extreme a signal looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extreme {
    High,
    Low,
}

impl Extreme {
    fn beats(self, a: f64, b: f64) -> bool {
        match self {
            Extreme::High => a >= b,
            Extreme::Low => a <= b,
        }
    }
}

/// Bars whose close equals the extreme of the last `window` closes
/// (itself included); none before a full window.
pub fn rolling(closes: &[f64], window: usize, extreme: Extreme) -> Vec<bool> {
    let n = closes.len();
    let mut out = vec![false; n];
    if window == 0 || n < window {
        return out;
    }
    // The close is the window's extreme when no close within the window
    // before it beats it strictly: find each close's nearest strictly
    // better predecessor with a stack of candidates (O(n)).
    let mut stack: Vec<usize> = Vec::with_capacity(64);
    for i in 0..n {
        while stack
            .last()
            .is_some_and(|&j| extreme.beats(closes[i], closes[j]))
        {
            stack.pop();
        }
        if i + 1 >= window {
            out[i] = stack.last().is_none_or(|&j| i - j >= window);
        }
        stack.push(i);
    }
    out
}

/// Bars whose close equals the extreme of every close so far, from the
/// [`ALL_TIME_MIN_HISTORY`]-th bar on.
pub fn all_time(closes: &[f64], extreme: Extreme) -> Vec<bool> {
    let mut best = f64::NAN;
    closes
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            if best.is_nan() || extreme.beats(c, best) {
                best = c;
            }
            i + 1 >= ALL_TIME_MIN_HISTORY && c == best
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rolling_extremes_by_hand() {
        let c = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0];
        // 3-close windows: highs where the close tops (or ties) the two before it.
        let highs: Vec<usize> = (0..c.len())
            .filter(|&i| rolling(&c, 3, Extreme::High)[i])
            .collect();
        assert_eq!(highs, vec![2, 4, 5, 10]);
        let lows: Vec<usize> = (0..c.len())
            .filter(|&i| rolling(&c, 3, Extreme::Low)[i])
            .collect();
        // 1 at bar 3 ties the 1 at bar 1: a tie counts.
        assert_eq!(lows, vec![3, 6, 9]);
        assert!(rolling(&c, 20, Extreme::High).iter().all(|f| !f));
        assert!(rolling(&c, 0, Extreme::High).iter().all(|f| !f));
        // Window 1: every bar.
        assert!(rolling(&c, 1, Extreme::Low).iter().all(|f| *f));
    }

    #[test]
    fn all_time_extremes_need_a_year() {
        let mut c: Vec<f64> = (0..300).map(|i| 100.0 + (i % 7) as f64).collect();
        c[100] = 200.0; // before a year of history: not counted
        c[260] = 150.0; // below the 200 seen before
        c[280] = 201.0; // a new all-time high
        c[290] = 50.0; // a new all-time low
        let highs: Vec<usize> = (0..c.len())
            .filter(|&i| all_time(&c, Extreme::High)[i])
            .collect();
        assert_eq!(highs, vec![280]);
        // The base's 100s tie the all-time low every seventh bar until 50.
        let lows: Vec<usize> = (0..c.len())
            .filter(|&i| all_time(&c, Extreme::Low)[i])
            .collect();
        assert_eq!(lows, vec![252, 259, 266, 273, 287, 290]);
    }
}
