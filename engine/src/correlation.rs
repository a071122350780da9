//! Correlation matrices and rolling correlation and beta over aligned return
//! columns, from deviations about each window's mean. Both agree with pandas' `corr`,
//! `rolling(w).corr` and `rolling(w).cov / var` to 1e-9 (tests/reference).

use chrono::NaiveDate;

/// Pearson correlation matrix of columns (NaN where a column is constant;
/// exactly 1 on the diagonal otherwise). Each column is centred once; each
/// pair is then one dot product, computed once for both halves.
pub fn matrix(columns: &[&[f64]]) -> Vec<Vec<f64>> {
    let k = columns.len();
    let centred: Vec<(Vec<f64>, f64)> = columns
        .iter()
        .map(|c| {
            let m = crate::stats::mean(c).unwrap_or(f64::NAN);
            let d: Vec<f64> = c.iter().map(|v| v - m).collect();
            let ss = d.iter().map(|v| v * v).sum::<f64>();
            let flat = c.len() < 2 || c.iter().all(|v| *v == c[0]);
            (d, if flat { f64::NAN } else { ss })
        })
        .collect();
    let mut out = vec![vec![f64::NAN; k]; k];
    for i in 0..k {
        let (di, si) = &centred[i];
        if si.is_nan() {
            continue;
        }
        out[i][i] = 1.0;
        for j in i + 1..k {
            let (dj, sj) = &centred[j];
            if di.len() != dj.len() || sj.is_nan() {
                continue;
            }
            let sxy: f64 = di.iter().zip(dj).map(|(a, b)| a * b).sum();
            let r = sxy / (si * sj).sqrt();
            out[i][j] = r;
            out[j][i] = r;
        }
    }
    out
}

/// Correlation of each `window`-long trailing window; NaN until the first
/// full one, and where either series is constant over the window.
pub fn rolling_corr(x: &[f64], y: &[f64], window: usize) -> Vec<f64> {
    rolling(x, y, window, |m| {
        if m.flat_x || m.flat_y {
            f64::NAN
        } else {
            m.cxy / (m.cxx * m.cyy).sqrt()
        }
    })
}

/// Beta of `asset` against `bench` per trailing window: covariance over the
/// benchmark's variance (equal to correlation times the volatility ratio).
pub fn rolling_beta(asset: &[f64], bench: &[f64], window: usize) -> Vec<f64> {
    rolling(asset, bench, window, |m| {
        if m.flat_y { f64::NAN } else { m.cxy / m.cyy }
    })
}

/// Centred co-moments of one window (sums of products of deviations).
struct Moments {
    cxx: f64,
    cyy: f64,
    cxy: f64,
    flat_x: bool,
    flat_y: bool,
}

/// Steps between exact re-summations of the sliding sums.
const RESUM: usize = 64;

/// Each window's means come from sliding sums (re-summed exactly every
/// [`RESUM`] steps), its co-moments from one fused pass of deviations: sliding
/// co-moment sums lose digits to cancellation in short windows, deviations
/// from the mean do not. A window is flat only when all its values are equal
/// (run lengths), never by rounding.
fn rolling(x: &[f64], y: &[f64], window: usize, f: impl Fn(&Moments) -> f64) -> Vec<f64> {
    assert_eq!(x.len(), y.len(), "aligned columns");
    let (n, w) = (x.len(), window.max(2));
    let mut out = vec![f64::NAN; n];
    if n < w {
        return out;
    }
    let wf = w as f64;
    let sums = |end: usize| {
        let r = end + 1 - w..=end;
        (x[r.clone()].iter().sum::<f64>(), y[r].iter().sum::<f64>())
    };
    let (mut run_x, mut run_y) = (1usize, 1usize);
    for i in 1..w {
        run_x = if x[i] == x[i - 1] { run_x + 1 } else { 1 };
        run_y = if y[i] == y[i - 1] { run_y + 1 } else { 1 };
    }
    let (mut sx, mut sy) = sums(w - 1);
    for end in w - 1..n {
        if end >= w {
            run_x = if x[end] == x[end - 1] { run_x + 1 } else { 1 };
            run_y = if y[end] == y[end - 1] { run_y + 1 } else { 1 };
            if (end + 1 - w) % RESUM == 0 {
                (sx, sy) = sums(end);
            } else {
                sx += x[end] - x[end - w];
                sy += y[end] - y[end - w];
            }
        }
        let (mx, my) = (sx / wf, sy / wf);
        let (mut cxx, mut cyy, mut cxy) = (0.0, 0.0, 0.0);
        for (a, b) in x[end + 1 - w..=end].iter().zip(&y[end + 1 - w..=end]) {
            let (dx, dy) = (a - mx, b - my);
            cxx += dx * dx;
            cyy += dy * dy;
            cxy += dx * dy;
        }
        out[end] = f(&Moments {
            cxx,
            cyy,
            cxy,
            flat_x: run_x >= w,
            flat_y: run_y >= w,
        });
    }
    out
}

/// Closes of several series (dates ascending) on the dates they all share:
/// the common dates and one close column per series.
pub fn align(series: &[(&[NaiveDate], &[f64])]) -> (Vec<NaiveDate>, Vec<Vec<f64>>) {
    let Some(((first, _), rest)) = series.split_first() else {
        return (Vec::new(), Vec::new());
    };
    // Both sides ascending: intersect and gather by merging, not searching.
    let mut common: Vec<NaiveDate> = first.to_vec();
    for (dates, _) in rest {
        let mut j = 0;
        common.retain(|d| {
            while j < dates.len() && dates[j] < *d {
                j += 1;
            }
            j < dates.len() && dates[j] == *d
        });
    }
    let columns = series
        .iter()
        .map(|(dates, close)| {
            let mut j = 0;
            common
                .iter()
                .map(|d| {
                    while dates[j] < *d {
                        j += 1;
                    }
                    close[j]
                })
                .collect()
        })
        .collect();
    (common, columns)
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

        // A flat stretch of the benchmark has no beta.
        let flat = rolling_beta(&[1.0, 2.0, 3.0, 4.0], &[1.0, 1.0, 1.0, 2.0], 3);
        assert!(flat[2].is_nan() && (flat[3] - 1.5).abs() < 1e-15);
        let d = |n| NaiveDate::from_ymd_opt(2024, 1, n).unwrap();
        let (a_dates, b_dates) = ([d(2), d(3), d(4), d(5)], [d(1), d(3), d(5)]);
        let (dates, cols) = align(&[
            (&a_dates, &[1.0, 2.0, 3.0, 4.0]),
            (&b_dates, &[9.0, 8.0, 7.0]),
        ]);
        assert_eq!(dates, vec![d(3), d(5)]);
        assert_eq!(cols, vec![vec![2.0, 4.0], vec![8.0, 7.0]]);
    }

    /// The sliding sums equal window-by-window two-pass moments over a long
    /// series with flat stretches and a level shift.
    #[test]
    fn sliding_equals_two_pass() {
        let n = 3000;
        let mut state = 7u64;
        let mut noise = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let y: Vec<f64> = (0..n)
            .map(|i| {
                if (500..540).contains(&i) {
                    0.0
                } else {
                    0.02 * noise()
                }
            })
            .collect();
        let x: Vec<f64> = (0..n)
            .map(|i| 1.3 * y[i] + 0.01 * noise() + if i > 2000 { 5.0 } else { 0.0 })
            .collect();
        for w in [2, 5, 21, 63, 250] {
            let (c, b) = (rolling_corr(&x, &y, w), rolling_beta(&x, &y, w));
            for i in w - 1..n {
                let (xs, ys) = (&x[i + 1 - w..=i], &y[i + 1 - w..=i]);
                let want_c = crate::stats::pearson(xs, ys).unwrap_or(f64::NAN);
                let (mx, my) = (
                    crate::stats::mean(xs).unwrap(),
                    crate::stats::mean(ys).unwrap(),
                );
                let cov: f64 = xs.iter().zip(ys).map(|(a, b)| (a - mx) * (b - my)).sum();
                let var: f64 = ys.iter().map(|b| (b - my) * (b - my)).sum();
                let want_b = if ys.iter().all(|v| *v == ys[0]) {
                    f64::NAN
                } else {
                    cov / var
                };
                for (got, want, what) in [(c[i], want_c, "corr"), (b[i], want_b, "beta")] {
                    assert!(
                        (got.is_nan() && want.is_nan()) || (got - want).abs() < 1e-9,
                        "{what} w{w} [{i}]: {got} vs {want}"
                    );
                }
            }
        }
    }
}
