//! Sliding Pearson correlation of a template against every window of a
//! series, in one pass over the series.
//!
//! The series is cut into blocks of about twice the template's length. In each block the
//! values are re-centred on the block's first value before anything is summed,
//! so the window sums and the dot products stay the size of the local price
//! moves, not of the price level: running sums over raw prices lose the digits
//! that a correlation of a 60-bar window needs. The dot products with the
//! (mean-removed) template are the only O(n m) work, computed a few windows
//! at a time with the accumulators in registers.

/// Windows accumulated together in the portable dot products.
const LANES: usize = 8;

/// Windows per block for a template of `m` values: about `2 m`, so a block's
/// values drift little more than one window's do (a multiple of 32, the
/// vector kernel's step).
fn block_len(m: usize) -> usize {
    (2 * m).div_ceil(32).clamp(1, 128) * 32
}

/// A template prepared for searching: its values minus their mean and the
/// sum of their squares.
#[derive(Debug, Clone)]
pub struct Template {
    centred: Vec<f64>,
    sum_sq: f64,
}

impl Template {
    /// `None` below two values or when the values do not move (a flat
    /// template correlates with nothing).
    pub fn new(values: &[f64]) -> Option<Template> {
        if values.len() < 2 || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let centred: Vec<f64> = values.iter().map(|v| v - mean).collect();
        let sum_sq: f64 = centred.iter().map(|v| v * v).sum();
        let scale = values.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        (sum_sq > flat_floor(values.len(), scale)).then_some(Template { centred, sum_sq })
    }

    pub fn len(&self) -> usize {
        self.centred.len()
    }

    pub fn is_empty(&self) -> bool {
        self.centred.is_empty()
    }
}

/// Below this sum of squared deviations a window of `m` values around `scale`
/// counts as flat: its spread is rounding noise (a relative spread under 1e-9).
fn flat_floor(m: usize, scale: f64) -> f64 {
    let tiny = 1e-9 * scale;
    m as f64 * tiny * tiny
}

/// Pearson correlation of `template` with each window `series[i..i + m]`,
/// written to `out[i]` (`out` has `series.len() - m + 1` entries; none when
/// the series is shorter than the template). A flat window gets NaN.
pub fn sliding_corr(template: &Template, series: &[f64]) -> Vec<f64> {
    let m = template.len();
    if series.len() < m {
        return Vec::new();
    }
    let mut out = vec![f64::NAN; series.len() - m + 1];
    sliding_corr_into(template, series, &mut out);
    out
}

/// [`sliding_corr`] into a caller's buffer of `series.len() - m + 1` values.
pub fn sliding_corr_into(template: &Template, series: &[f64], out: &mut [f64]) {
    assert_eq!(
        out.len() + template.len(),
        series.len() + 1,
        "output length"
    );
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has both features, checked just above.
            unsafe { avx2::search(template, series, out) };
            return;
        }
    }
    search_with(template, series, out, dots_portable);
}

/// The search, block by block, with the dot-product kernel given; inlined
/// into each kernel's caller so every loop is compiled for its features.
#[inline(always)]
fn search_with(
    template: &Template,
    series: &[f64],
    out: &mut [f64],
    dots: impl Fn(&[f64], &[f64], &mut [f64]),
) {
    let m = template.len();
    let block = block_len(m);
    let mut y = vec![0.0; block + m];
    let mut p1 = vec![0.0; block + m];
    let mut p2 = vec![0.0; block + m];
    let mut dot = vec![0.0; block];
    let inv_m = 1.0 / m as f64;
    let mut start = 0;
    while start < out.len() {
        let count = block.min(out.len() - start);
        let x = &series[start..start + count + m - 1];
        let len = x.len();
        // Re-centre on the block's middle value.
        let centre = x[len / 2];
        for (yk, xk) in y[..len].iter_mut().zip(x) {
            *yk = xk - centre;
        }
        // Prefix sums of the re-centred values and their squares: p[k] is
        // the sum of the first k values.
        let (mut s, mut q) = (0.0, 0.0);
        p1[0] = 0.0;
        p2[0] = 0.0;
        for ((v, a), b) in y[..len].iter().zip(&mut p1[1..=len]).zip(&mut p2[1..=len]) {
            s += v;
            q += v * v;
            *a = s;
            *b = q;
        }
        dots(&template.centred, &y[..len], &mut dot[..count]);
        let tss = template.sum_sq;
        let mf = m as f64;
        // Slices of equal length, no indexing: the loop runs in vector registers.
        let rows = out[start..start + count]
            .iter_mut()
            .zip(&dot[..count])
            .zip(p1[m..m + count].iter().zip(&p1[..count]))
            .zip(p2[m..m + count].iter().zip(&p2[..count]));
        for (((r, d), (s_hi, s_lo)), (q_hi, q_lo)) in rows {
            let s1 = s_hi - s_lo;
            let sxx = (q_hi - q_lo) - s1 * (s1 * inv_m);
            // Flat: a spread within the sums' rounding (1e-13 of the
            // squares summed so far) or under 1e-9 of the window's level.
            let level = centre + s1 * inv_m;
            let floor = 1e-13 * q_hi + mf * (1e-18 * level * level);
            let v = (d / (sxx * tss).sqrt()).clamp(-1.0, 1.0);
            *r = if sxx > floor { v } else { f64::NAN };
        }
        start += count;
    }
}

/// `dot[i] = sum_j t[j] * y[i + j]` for every `i < dot.len()`, with
/// [`LANES`] accumulators the compiler keeps in vector registers of whatever
/// width the target has.
fn dots_portable(t: &[f64], y: &[f64], dot: &mut [f64]) {
    let n = dot.len();
    let mut i = 0;
    while i + LANES <= n {
        let mut acc = [0.0; LANES];
        for (j, &tj) in t.iter().enumerate() {
            let w = &y[i + j..i + j + LANES];
            for k in 0..LANES {
                acc[k] += tj * w[k];
            }
        }
        dot[i..i + LANES].copy_from_slice(&acc);
        i += LANES;
    }
    for (k, d) in dot.iter_mut().enumerate().skip(i) {
        *d = t.iter().zip(&y[k..]).map(|(a, b)| a * b).sum();
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Template, dots_portable, search_with};
    use std::arch::x86_64::*;

    /// The whole search compiled for AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn search(template: &Template, series: &[f64], out: &mut [f64]) {
        // SAFETY: this function only runs where the features exist.
        search_with(template, series, out, |t, y, d| unsafe { dots(t, y, d) });
    }

    /// 32 windows at a time in eight 4-wide registers: enough independent
    /// fused multiply-adds in flight to hide their latency.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn dots(t: &[f64], y: &[f64], dot: &mut [f64]) {
        const STEP: usize = 32;
        let n = dot.len();
        assert!(y.len() + 1 >= n + t.len());
        let yp = y.as_ptr();
        let mut i = 0;
        // SAFETY (all loads and stores): i + STEP <= n and j < m, so
        // i + j + STEP - 1 < n + m - 1 <= y.len(), and i + STEP - 1 < n = dot.len().
        unsafe {
            while i + STEP <= n {
                let mut acc = [_mm256_setzero_pd(); STEP / 4];
                for (j, &tj) in t.iter().enumerate() {
                    let tv = _mm256_set1_pd(tj);
                    let p = yp.add(i + j);
                    for (k, a) in acc.iter_mut().enumerate() {
                        *a = _mm256_fmadd_pd(tv, _mm256_loadu_pd(p.add(4 * k)), *a);
                    }
                }
                let d = dot.as_mut_ptr().add(i);
                for (k, a) in acc.iter().enumerate() {
                    _mm256_storeu_pd(d.add(4 * k), *a);
                }
                i += STEP;
            }
        }
        dots_portable(t, &y[i..], &mut dot[i..]);
    }

    /// The kernel alone, for comparing it with the portable one.
    #[cfg(test)]
    pub fn kernel(t: &[f64], y: &[f64], dot: &mut [f64]) -> bool {
        if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
            return false;
        }
        // SAFETY: checked just above.
        unsafe { dots(t, y, dot) };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::pearson;

    /// A deterministic wandering series around `level`.
    fn walk(n: usize, level: f64) -> Vec<f64> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut v = level;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let u = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                v *= 1.0 + 0.02 * u;
                v
            })
            .collect()
    }

    #[test]
    fn equals_a_two_pass_correlation_at_every_window() {
        // Lengths that cross block and lane boundaries, at a high price level.
        for (n, m) in [(3000, 60), (1000, 7), (700, 513), (64, 64), (40, 5)] {
            let x = walk(n, 4000.0);
            let a = (n - m) / 3;
            let t = Template::new(&x[a..a + m]).unwrap();
            let r = sliding_corr(&t, &x);
            assert_eq!(r.len(), n - m + 1);
            for (i, got) in r.iter().enumerate() {
                let want = pearson(&x[a..a + m], &x[i..i + m]).unwrap();
                assert!(
                    (got - want).abs() < 1e-12,
                    "n={n} m={m} i={i}: {got} vs {want}"
                );
            }
            assert!((r[a] - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn portable_and_vector_dots_agree() {
        let x = walk(600, 50.0);
        let t = &x[10..70];
        let mut a = vec![0.0; 541];
        let mut b = vec![0.0; 541];
        dots_portable(t, &x, &mut b);
        #[cfg(target_arch = "x86_64")]
        if !avx2::kernel(t, &x, &mut a) {
            return;
        }
        #[cfg(not(target_arch = "x86_64"))]
        return;
        for (p, q) in a.iter().zip(&b) {
            assert!((p - q).abs() <= 1e-9 * q.abs().max(1.0));
        }
    }

    #[test]
    fn flat_windows_and_templates_never_match() {
        assert!(Template::new(&[5.0, 5.0, 5.0]).is_none());
        assert!(Template::new(&[1.0]).is_none());
        assert!(Template::new(&[1.0, f64::NAN]).is_none());
        let t = Template::new(&[1.0, 2.0, 3.0]).unwrap();
        let r = sliding_corr(&t, &[7.0, 7.0, 7.0, 8.0, 9.0, 9.0, 9.0, 9.0]);
        assert!(r[0].is_nan());
        // By hand: [7,8,9] vs [1,2,3] is 1; [7,7,8] and [8,9,9] are sqrt(3)/2.
        assert!((r[1] - 3f64.sqrt() / 2.0).abs() < 1e-15);
        assert!((r[2] - 1.0).abs() < 1e-15);
        assert!((r[3] - 3f64.sqrt() / 2.0).abs() < 1e-15);
        assert!(r[4].is_nan() && r[5].is_nan());
        assert!(sliding_corr(&t, &[1.0, 2.0]).is_empty());
        // A flat stretch far from the block's centre, in the middle of a block.
        let mut x: Vec<f64> = (0..40).map(|k| 100.0 + k as f64 * 0.7).collect();
        x.extend([150.0; 12]);
        x.extend((0..40).map(|k| 150.0 - k as f64 * 0.3));
        let r = sliding_corr(&t, &x);
        for (i, v) in r.iter().enumerate() {
            let flat = (40..=50).contains(&i);
            assert_eq!(v.is_nan(), flat, "window {i}: {v}");
        }
    }
}
