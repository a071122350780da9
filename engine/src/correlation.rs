//! Correlation matrices and rolling correlation and beta over aligned return
//! columns, computed window by window with two-pass moments so the numbers
//! agree with pandas' `corr`, `rolling(w).corr` and `rolling(w).cov / var`.

use crate::stats::mean;
use chrono::NaiveDate;

/// Sample covariance of two equally long slices (n - 1); `None` below two points.
fn covariance(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let (mx, my) = (mean(x)?, mean(y)?);
    Some(
        x.iter()
            .zip(y)
            .map(|(a, b)| (a - mx) * (b - my))
            .sum::<f64>()
            / (x.len() - 1) as f64,
    )
}

/// Pearson correlation matrix of columns (NaN where a column is constant).
pub fn matrix(columns: &[&[f64]]) -> Vec<Vec<f64>> {
    columns
        .iter()
        .map(|a| {
            columns
                .iter()
                .map(|b| crate::stats::pearson(a, b).unwrap_or(f64::NAN))
                .collect()
        })
        .collect()
}

/// Correlation of each `window`-long trailing window; NaN until the first full one.
pub fn rolling_corr(x: &[f64], y: &[f64], window: usize) -> Vec<f64> {
    rolling(x, y, window, |a, b| {
        crate::stats::pearson(a, b).unwrap_or(f64::NAN)
    })
}

/// Beta of `asset` against `bench` per trailing window: covariance over the
/// benchmark's variance (equal to correlation times the volatility ratio).
pub fn rolling_beta(asset: &[f64], bench: &[f64], window: usize) -> Vec<f64> {
    rolling(asset, bench, window, |a, b| {
        match (covariance(a, b), covariance(b, b)) {
            (Some(c), Some(v)) if v > 0.0 => c / v,
            _ => f64::NAN,
        }
    })
}

/// Closes of several series on the dates they all share, in date order:
/// the common dates and one close column per series.
pub fn align(series: &[(&[NaiveDate], &[f64])]) -> (Vec<NaiveDate>, Vec<Vec<f64>>) {
    let Some(((first, _), rest)) = series.split_first() else {
        return (Vec::new(), Vec::new());
    };
    let mut common: Vec<NaiveDate> = first.to_vec();
    for (dates, _) in rest {
        common.retain(|d| dates.binary_search(d).is_ok());
    }
    let columns = series
        .iter()
        .map(|(dates, close)| {
            common
                .iter()
                .map(|d| close[dates.binary_search(d).expect("common date")])
                .collect()
        })
        .collect();
    (common, columns)
}

fn rolling(x: &[f64], y: &[f64], window: usize, f: impl Fn(&[f64], &[f64]) -> f64) -> Vec<f64> {
    assert_eq!(x.len(), y.len(), "aligned columns");
    let w = window.max(2);
    (0..x.len())
        .map(|i| {
            if i + 1 >= w {
                f(&x[i + 1 - w..=i], &y[i + 1 - w..=i])
            } else {
                f64::NAN
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [2.0, 4.0, 6.0, 9.0];
        let m = matrix(&[&x, &y]);
        assert_eq!(m[0][0], 1.0);
        assert!((m[0][1] - m[1][0]).abs() < 1e-15 && m[0][1] > 0.98);
        let b = rolling_beta(&y, &x, 2);
        assert!(b[0].is_nan());
        assert_eq!(&b[1..], &[2.0, 2.0, 3.0]);
        let c = rolling_corr(&x, &[1.0, 0.0, 1.0, 0.0], 2);
        assert_eq!(&c[1..], &[-1.0, 1.0, -1.0]);

        let d = |n| NaiveDate::from_ymd_opt(2024, 1, n).unwrap();
        let (a_dates, b_dates) = ([d(2), d(3), d(4), d(5)], [d(1), d(3), d(5)]);
        let (dates, cols) = align(&[
            (&a_dates, &[1.0, 2.0, 3.0, 4.0]),
            (&b_dates, &[9.0, 8.0, 7.0]),
        ]);
        assert_eq!(dates, vec![d(3), d(5)]);
        assert_eq!(cols, vec![vec![2.0, 4.0], vec![8.0, 7.0]]);
    }
}
