//! Small descriptive statistics over slices. NaN-free input is the caller's job.

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
