//! Small descriptive statistics over slices. NaN-free input is the caller's job.

/// The sum of `f` over `x` in four lanes: a single running total waits on
/// each addition (its latency, not the arithmetic, bounds a long sum), four
/// overlap, and the result is no less exact.
#[inline]
pub fn sum_by(x: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0; 4];
    let quads = x.chunks_exact(4);
    for (l, &v) in quads.remainder().iter().enumerate() {
        acc[l] += f(v);
    }
    for q in quads {
        for l in 0..4 {
            acc[l] += f(q[l]);
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// [`sum_by`] of the values themselves.
#[inline]
pub fn sum(x: &[f64]) -> f64 {
    sum_by(x, |v| v)
}

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(x: &[f64]) -> Option<f64> {
    (!x.is_empty()).then(|| x.iter().sum::<f64>() / x.len() as f64)
}

/// The middle value, or the mean of the two middle values; `None` for an
/// empty slice.
pub fn median(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let k = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[k]
    } else {
        (v[k - 1] + v[k]) / 2.0
    })
}

/// Sample standard deviation (n - 1); `None` below two points.
pub fn std_dev(x: &[f64]) -> Option<f64> {
    if x.len() < 2 {
        return None;
    }
    let m = mean(x)?;
    let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    Some((ss / (x.len() - 1) as f64).sqrt())
}

/// What the trade lists of the pattern and scanner backtests report about
/// their trades' returns (percent). A zero return is neither a win nor a
/// loss; every figure is 0 without trades.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TradeReturns {
    pub median: f64,
    pub average: f64,
    /// Share of trades with a positive return, %.
    pub win_rate: f64,
    /// Mean of the positive returns.
    pub average_win: f64,
    /// Mean of the negative returns.
    pub average_loss: f64,
    pub trades: usize,
    pub positive: usize,
    pub negative: usize,
    /// Sample standard deviation (0 below two trades).
    pub std_dev: f64,
    /// The average over its standard error (0 when the deviation is 0).
    pub z_score: f64,
}

impl TradeReturns {
    pub fn of(returns: &[f64]) -> TradeReturns {
        if returns.is_empty() {
            return TradeReturns::default();
        }
        let wins: Vec<f64> = returns.iter().copied().filter(|r| *r > 0.0).collect();
        let losses: Vec<f64> = returns.iter().copied().filter(|r| *r < 0.0).collect();
        let n = returns.len();
        let average = mean(returns).unwrap_or(0.0);
        let std_dev = self::std_dev(returns).unwrap_or(0.0);
        TradeReturns {
            median: median(returns).unwrap_or(0.0),
            average,
            win_rate: wins.len() as f64 / n as f64 * 100.0,
            average_win: mean(&wins).unwrap_or(0.0),
            average_loss: mean(&losses).unwrap_or(0.0),
            trades: n,
            positive: wins.len(),
            negative: losses.len(),
            std_dev,
            z_score: if std_dev > 0.0 {
                average / (std_dev / (n as f64).sqrt())
            } else {
                0.0
            },
        }
    }
}

/// Pearson correlation; `None` when lengths differ, below two points, or a
/// series is constant.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let (mx, my) = (mean(x)?, mean(y)?);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// Simple returns `p[i] / p[i-1] - 1`.
pub fn returns(prices: &[f64]) -> Vec<f64> {
    prices.windows(2).map(|w| w[1] / w[0] - 1.0).collect()
}

/// Log returns `ln(p[i] / p[i-1])`.
pub fn log_returns(prices: &[f64]) -> Vec<f64> {
    prices.windows(2).map(|w| (w[1] / w[0]).ln()).collect()
}

/// Excess kurtosis (population moments); a normal sample is near 0.
pub fn excess_kurtosis(x: &[f64]) -> Option<f64> {
    let m = mean(x)?;
    let n = x.len() as f64;
    let m2 = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n;
    let m4 = x.iter().map(|v| (v - m).powi(4)).sum::<f64>() / n;
    (m2 > 0.0).then(|| m4 / (m2 * m2) - 3.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lane_sums_take_every_value_once_whatever_the_length() {
        // Integers sum exactly in any order: each length's remainder lands.
        for n in 0..13 {
            let x: Vec<f64> = (1..=n).map(f64::from).collect();
            let want = f64::from(n * (n + 1) / 2);
            assert_eq!(super::sum(&x), want, "{n} values");
            let squares = f64::from(n * (n + 1) * (2 * n + 1) / 6);
            assert_eq!(super::sum_by(&x, |v| v * v), squares, "{n} squares");
        }
    }

    #[test]
    fn trade_returns_by_hand() {
        let t = super::TradeReturns::of(&[4.0, -2.0, 0.0, 6.0]);
        assert_eq!((t.trades, t.positive, t.negative), (4, 2, 1));
        assert_eq!((t.median, t.average, t.win_rate), (2.0, 2.0, 50.0));
        assert_eq!((t.average_win, t.average_loss), (5.0, -2.0));
        // Squared deviations from 2: 4 + 16 + 4 + 16, over 3.
        let sd = (40.0f64 / 3.0).sqrt();
        assert!((t.std_dev - sd).abs() < 1e-12);
        assert!((t.z_score - 2.0 / (sd / 2.0)).abs() < 1e-12);
        assert_eq!(super::TradeReturns::of(&[]), super::TradeReturns::default());
    }

    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn known_values() {
        let x = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&x), Some(5.0));
        // Sample variance = 32 / 7.
        assert!((std_dev(&x).unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-15);
        let y: Vec<f64> = x.iter().map(|v| 3.0 - 2.0 * v).collect();
        assert!((pearson(&x, &y).unwrap() + 1.0).abs() < 1e-15);
        assert_eq!(pearson(&x, &[1.0; 8]), None);
        let r = returns(&[100.0, 110.0, 99.0]);
        assert!((r[0] - 0.1).abs() < 1e-15 && (r[1] + 0.1).abs() < 1e-15);
        assert_eq!(mean(&[]), None);
    }
}
