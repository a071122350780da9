//! Correlation matrices and rolling correlation and beta over aligned return
//! columns: the matrix from centred columns, the rolling values from sliding
//! sums shared across columns ([`against`]). Both agree with pandas' `corr`,
//! `rolling(w).corr` and `rolling(w).cov / var` to 1e-12 (tests/reference).

/// Pearson correlation matrix of columns (NaN where a column is constant;
/// exactly 1 on the diagonal otherwise). Each column is centred once; each
/// pair is then one dot product, computed once for both halves.
pub fn matrix(columns: &[&[f64]]) -> Vec<Vec<f64>> {
    let k = columns.len();
    let centred: Vec<(Vec<f64>, f64)> = columns
        .iter()
        .map(|c| {
            let m = if c.is_empty() {
                f64::NAN
            } else {
                crate::stats::sum(c) / c.len() as f64
            };
            let d: Vec<f64> = c.iter().map(|v| v - m).collect();
            let ss = dot(&d, &d);
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
            let r = dot(di, dj) / (si * sj).sqrt();
            out[i][j] = r;
            out[j][i] = r;
        }
    }
    out
}

/// Dot product in four lanes, as [`crate::stats::sum_by`].
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let rest: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..4 {
            acc[l] += x[l] * y[l];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + rest
}

/// Correlation of each `window`-long trailing window; NaN until the first
/// full one, and where either series is constant over the window.
pub fn rolling_corr(x: &[f64], y: &[f64], window: usize) -> Vec<f64> {
    against(y, &[x], window, corr).pop().unwrap_or_default()
}

/// Beta of `asset` against `bench` per trailing window: covariance over the
/// benchmark's variance (equal to correlation times the volatility ratio).
pub fn rolling_beta(asset: &[f64], bench: &[f64], window: usize) -> Vec<f64> {
    against(bench, &[asset], window, beta)
        .pop()
        .unwrap_or_default()
}

/// Pearson correlation of a window's co-moments (NaN when either side is flat).
pub fn corr(m: &Moments) -> f64 {
    if m.flat_x || m.flat_y {
        f64::NAN
    } else {
        m.cxy / (m.cxx * m.cyy).sqrt()
    }
}

/// Beta of a window's co-moments (NaN when the benchmark is flat).
pub fn beta(m: &Moments) -> f64 {
    if m.flat_y { f64::NAN } else { m.cxy / m.cyy }
}

/// Centred co-moments of one window (sums of products of deviations from
/// the window's means); `x` is a column, `y` the benchmark.
pub struct Moments {
    pub cxx: f64,
    pub cyy: f64,
    pub cxy: f64,
    pub flat_x: bool,
    pub flat_y: bool,
}

/// Windows between exact re-summations of the sliding sums.
const RESUM: usize = 64;
/// A window's sums are taken again, exactly, when the squares they have
/// added and removed since they were last taken (the scale of their
/// rounding) exceed this many times its centred sum of squares: beyond it
/// the subtraction would cost more than about 1e-13 relative.
const OFFSET: f64 = 256.0;

/// Whether each window ending at `end` (from `w - 1`) holds one value only,
/// by run lengths, never by rounding.
fn flat_runs(v: &[f64], w: usize) -> Vec<bool> {
    let mut run = 0usize;
    let mut out = vec![false; v.len()];
    for i in 0..v.len() {
        run = if i > 0 && v[i] == v[i - 1] {
            run + 1
        } else {
            1
        };
        out[i] = run >= w;
    }
    out
}

fn window_mean(v: &[f64], start: usize, w: usize) -> f64 {
    v[start..start + w].iter().sum::<f64>() / w as f64
}

/// The benchmark's side of every window, computed once for all columns:
/// per window end, the shift its sums are about (and whether it changed
/// there), its shifted sum and its centred sum of squares.
struct Bench {
    shift: Vec<f64>,
    moved: Vec<bool>,
    sum: Vec<f64>,
    cyy: Vec<f64>,
    flat: Vec<bool>,
}

impl Bench {
    fn new(y: &[f64], w: usize) -> Bench {
        let n = y.len();
        let wf = w as f64;
        let mut b = Bench {
            shift: vec![0.0; n],
            moved: vec![false; n],
            sum: vec![0.0; n],
            cyy: vec![0.0; n],
            flat: flat_runs(y, w),
        };
        let (mut k, mut s, mut ss, mut mag) = (0.0, 0.0, 0.0, 0.0);
        for end in w - 1..n {
            let start = end + 1 - w;
            let mut again = start.is_multiple_of(RESUM);
            if !again {
                let (a, o) = (y[end] - k, y[start - 1] - k);
                s += a - o;
                ss += a * a - o * o;
                mag += a * a + o * o;
                again = mag + s * s / wf > OFFSET * (ss - s * s / wf);
            }
            if again {
                k = window_mean(y, start, w);
                (s, ss) = (0.0, 0.0);
                for v in &y[start..=end] {
                    let d = v - k;
                    s += d;
                    ss += d * d;
                }
                mag = ss;
                b.moved[end] = true;
            }
            b.shift[end] = k;
            b.sum[end] = s;
            b.cyy[end] = ss - s * s / wf;
        }
        b
    }
}

/// `f` of every trailing window of each column against `bench`, in one pass
/// per column: the benchmark's sums are computed once and shared; each
/// column's sums slide by one value in and one out, about a shift near the
/// window's mean. They are taken again, exactly, every [`RESUM`] windows and
/// whenever the mean has moved far from the shift (a level shift, prices),
/// so neither rounding nor cancellation builds up: every window agrees with
/// a two-pass computation to about 1e-13. NaN until the first full window.
pub fn against(
    bench: &[f64],
    columns: &[&[f64]],
    window: usize,
    f: impl Fn(&Moments) -> f64,
) -> Vec<Vec<f64>> {
    let n = bench.len();
    let mut out: Vec<Vec<f64>> = columns.iter().map(|_| vec![f64::NAN; n]).collect();
    sweep(bench, columns, window, |k, end, m| out[k][end] = f(m));
    out
}

/// Rolling correlation and beta of each column against `bench` from the
/// same pass ([`against`]): `(corr, beta)`, one vector per column each.
pub fn corr_and_beta(
    bench: &[f64],
    columns: &[&[f64]],
    window: usize,
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let n = bench.len();
    let mut c: Vec<Vec<f64>> = columns.iter().map(|_| vec![f64::NAN; n]).collect();
    let mut b = c.clone();
    sweep(bench, columns, window, |k, end, m| {
        c[k][end] = corr(m);
        b[k][end] = beta(m);
    });
    (c, b)
}

/// Calls `visit(column, window end, moments)` for every full window of every
/// column, as [`against`] describes.
fn sweep(
    bench: &[f64],
    columns: &[&[f64]],
    window: usize,
    mut visit: impl FnMut(usize, usize, &Moments),
) {
    let (n, w) = (bench.len(), window.max(2));
    if n < w {
        return;
    }
    let b = Bench::new(bench, w);
    let wf = w as f64;
    for (col, x) in columns.iter().enumerate() {
        assert_eq!(x.len(), n, "aligned columns");
        let flat = flat_runs(x, w);
        let (mut kx, mut ky) = (0.0, 0.0);
        let (mut sx, mut sxx, mut sxy, mut mag) = (0.0, 0.0, 0.0, 0.0);
        for end in w - 1..n {
            let start = end + 1 - w;
            let mut again = b.moved[end];
            if !again {
                let (a, o) = (x[end] - kx, x[start - 1] - kx);
                let (c, d) = (bench[end] - ky, bench[start - 1] - ky);
                sx += a - o;
                sxx += a * a - o * o;
                sxy += a * c - o * d;
                mag += a * a + o * o;
                again = mag + sx * sx / wf > OFFSET * (sxx - sx * sx / wf);
            }
            if again {
                kx = window_mean(x, start, w);
                ky = b.shift[end];
                (sx, sxx, sxy) = (0.0, 0.0, 0.0);
                for (a, c) in x[start..=end].iter().zip(&bench[start..=end]) {
                    let (dx, dy) = (a - kx, c - ky);
                    sx += dx;
                    sxx += dx * dx;
                    sxy += dx * dy;
                }
                mag = sxx;
            }
            let m = Moments {
                cxx: sxx - sx * sx / wf,
                cyy: b.cyy[end],
                cxy: sxy - sx * b.sum[end] / wf,
                flat_x: flat[end],
                flat_y: b.flat[end],
            };
            visit(col, end, &m);
        }
    }
}

/// Closes of several series (dates ascending) on the dates they all share:
/// the common dates and one close column per series.
/// Any ordered key serves: dates, or bar times at midnight as stored.
pub fn align<T: Ord + Copy>(series: &[(&[T], &[f64])]) -> (Vec<T>, Vec<Vec<f64>>) {
    let Some(((first, _), rest)) = series.split_first() else {
        return (Vec::new(), Vec::new());
    };
    // Both sides ascending: intersect and gather by merging, not searching.
    let mut common: Vec<T> = first.to_vec();
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
    use chrono::NaiveDate;

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
            let (cc, bb) = corr_and_beta(&y, &[&x], w);
            let same =
                |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits());
            assert!(
                same(&cc[0], &c) && same(&bb[0], &b),
                "one pass for both, w{w}"
            );
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
                        (got.is_nan() && want.is_nan())
                            || (got - want).abs() < 1e-12 * want.abs().max(1.0),
                        "{what} w{w} [{i}]: {got} vs {want}"
                    );
                }
            }
        }
    }
}
