//! Sums taken in four lanes (value `k` of a series into lane `k % 4`, the
//! last `len % 4` values first), as the batch statistics take them for
//! every strategy of a grid.
//!
//! The compiler leaves these loops scalar, four chains side by side. Where
//! the processor has AVX2 the four lanes are one register instead: the same
//! operations on the same values in the same order, so the same bits, in a
//! quarter of the instructions. Release builds target the baseline, so the
//! choice is made at run time and one binary runs anywhere.

/// Sum of the values, as [`crate::stats::sum`] takes it.
pub fn sum(x: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        return unsafe { avx2::sum_and_squares::<false>(x).0 };
    }
    crate::stats::sum(x)
}

/// Sum of the values and of their squares.
pub fn sum_and_squares(x: &[f64]) -> (f64, f64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        return unsafe { avx2::sum_and_squares::<true>(x) };
    }
    scalar::sum_and_squares(x)
}

/// Sums of the second, third and fourth powers of the deviations from `mean`.
pub fn central_sums(x: &[f64], mean: f64) -> (f64, f64, f64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        return unsafe { avx2::central_sums(x, mean) };
    }
    scalar::central_sums(x, mean)
}

/// Each value's ratio to the one before, less 1 (a bar's return on the
/// last), appended to `out`: four divisions at a time where there is AVX2.
pub fn ratios(x: &[f64], out: &mut Vec<f64>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        return unsafe { avx2::ratios(x, out) };
    }
    scalar::ratios(x, out)
}

/// The four lanes added as one value.
fn fold(c: [f64; 4]) -> f64 {
    (c[0] + c[1]) + (c[2] + c[3])
}

mod scalar {
    use super::fold;

    /// The first `len % 4` values into their lanes.
    pub fn rest_sums(rest: &[f64]) -> ([f64; 4], [f64; 4]) {
        let (mut s, mut q) = ([0.0; 4], [0.0; 4]);
        for (l, v) in rest.iter().enumerate() {
            s[l] += v;
            q[l] += v * v;
        }
        (s, q)
    }

    pub fn sum_and_squares(x: &[f64]) -> (f64, f64) {
        let (quads, rest) = x.as_chunks::<4>();
        let (mut s, mut q) = rest_sums(rest);
        for c in quads {
            for l in 0..4 {
                s[l] += c[l];
                q[l] += c[l] * c[l];
            }
        }
        (fold(s), fold(q))
    }

    pub fn ratios(x: &[f64], out: &mut Vec<f64>) {
        out.extend(x.windows(2).map(|w| w[1] / w[0] - 1.0));
    }

    pub fn rest_central(rest: &[f64], mean: f64) -> [[f64; 4]; 3] {
        let mut c = [[0.0; 4]; 3];
        for (l, &v) in rest.iter().enumerate() {
            let d = v - mean;
            let d2 = d * d;
            c[0][l] += d2;
            c[1][l] += d2 * d;
            c[2][l] += d2 * d2;
        }
        c
    }

    pub fn central_sums(x: &[f64], mean: f64) -> (f64, f64, f64) {
        let (quads, rest) = x.as_chunks::<4>();
        let [mut c2, mut c3, mut c4] = rest_central(rest, mean);
        for q in quads {
            for l in 0..4 {
                let d = q[l] - mean;
                let d2 = d * d;
                c2[l] += d2;
                c3[l] += d2 * d;
                c4[l] += d2 * d2;
            }
        }
        (fold(c2), fold(c3), fold(c4))
    }
}

// The remainders go through the scalar code (a lane past them must stay 0),
// then the lanes are loaded into one register each.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{fold, scalar};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2")]
    fn lanes(v: __m256d) -> [f64; 4] {
        let mut out = [0.0; 4];
        // SAFETY: four f64s are written into four.
        unsafe { _mm256_storeu_pd(out.as_mut_ptr(), v) };
        out
    }

    #[target_feature(enable = "avx2")]
    fn load(l: &[f64; 4]) -> __m256d {
        // SAFETY: four f64s are read from four.
        unsafe { _mm256_loadu_pd(l.as_ptr()) }
    }

    /// The squares' sum only `SQUARES` (0 otherwise).
    #[target_feature(enable = "avx2")]
    pub fn sum_and_squares<const SQUARES: bool>(x: &[f64]) -> (f64, f64) {
        let (quads, rest) = x.as_chunks::<4>();
        let (s, q) = scalar::rest_sums(rest);
        let (mut s, mut q) = (load(&s), load(&q));
        for c in quads {
            let v = load(c);
            s = _mm256_add_pd(s, v);
            if SQUARES {
                q = _mm256_add_pd(q, _mm256_mul_pd(v, v));
            }
        }
        (fold(lanes(s)), if SQUARES { fold(lanes(q)) } else { 0.0 })
    }

    #[target_feature(enable = "avx2")]
    pub fn ratios(x: &[f64], out: &mut Vec<f64>) {
        let n = x.len().saturating_sub(1);
        out.reserve(n);
        let full = n / 4 * 4;
        let one = _mm256_set1_pd(1.0);
        let at = out.len();
        let dst = out.spare_capacity_mut().as_mut_ptr().cast::<f64>();
        for i in (0..full).step_by(4) {
            // SAFETY: i + 4 <= n < x.len() and i + 4 <= n <= the spare capacity.
            unsafe {
                let (a, b) = (
                    _mm256_loadu_pd(x.as_ptr().add(i)),
                    _mm256_loadu_pd(x.as_ptr().add(i + 1)),
                );
                _mm256_storeu_pd(dst.add(i), _mm256_sub_pd(_mm256_div_pd(b, a), one));
            }
        }
        // SAFETY: the first `full` spare values were written above.
        unsafe { out.set_len(at + full) };
        scalar::ratios(&x[full..], out);
    }

    #[target_feature(enable = "avx2")]
    pub fn central_sums(x: &[f64], mean: f64) -> (f64, f64, f64) {
        let (quads, rest) = x.as_chunks::<4>();
        let [c2, c3, c4] = scalar::rest_central(rest, mean);
        let (mut c2, mut c3, mut c4) = (load(&c2), load(&c3), load(&c4));
        let m = _mm256_set1_pd(mean);
        for q in quads {
            let d = _mm256_sub_pd(load(q), m);
            let d2 = _mm256_mul_pd(d, d);
            c2 = _mm256_add_pd(c2, d2);
            c3 = _mm256_add_pd(c3, _mm256_mul_pd(d2, d));
            c4 = _mm256_add_pd(c4, _mm256_mul_pd(d2, d2));
        }
        (fold(lanes(c2)), fold(lanes(c3)), fold(lanes(c4)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Series of every length up to 41 and a long one, with values whose
    /// sums depend on the order they are taken in, zeros, signed zeros,
    /// infinities and NaN.
    fn series() -> Vec<Vec<f64>> {
        let value = |k: usize| match k % 11 {
            0 => 0.0,
            1 => -0.0,
            2 => 1e12 * (k as f64).sin(),
            _ => ((k * 7919) % 1000) as f64 * 1e-3 - 0.5,
        };
        let mut all: Vec<Vec<f64>> = (0..42).map(|n| (0..n).map(value).collect()).collect();
        all.push((0..5027).map(value).collect());
        let mut odd = all[41].clone();
        odd[17] = f64::INFINITY;
        all.push(odd);
        let mut nan = all[40].clone();
        nan[3] = f64::NAN;
        all.push(nan);
        all
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn the_wide_lanes_give_the_scalar_lanes_bits() {
        for x in series() {
            let (s, q) = sum_and_squares(&x);
            let (s0, q0) = scalar::sum_and_squares(&x);
            assert!(same(s, s0) && same(q, q0), "{} values", x.len());
            assert!(same(sum(&x), crate::stats::sum(&x)), "{} values", x.len());
            assert!(same(s0, crate::stats::sum(&x)), "{} values", x.len());
            let mean = s0 / x.len().max(1) as f64;
            let (a, b, c) = central_sums(&x, mean);
            let (a0, b0, c0) = scalar::central_sums(&x, mean);
            assert!(
                same(a, a0) && same(b, b0) && same(c, c0),
                "{} values",
                x.len()
            );
        }
    }

    #[test]
    fn the_wide_ratios_are_the_scalar_ratios() {
        for x in series() {
            let (mut wide, mut plain) = (vec![7.0], vec![7.0]);
            ratios(&x, &mut wide);
            scalar::ratios(&x, &mut plain);
            assert_eq!(wide.len(), x.len().saturating_sub(1) + 1);
            assert!(
                wide.iter().zip(&plain).all(|(a, b)| same(*a, *b)),
                "{} values",
                x.len()
            );
        }
    }

    #[test]
    fn value_k_goes_to_lane_k_mod_4_the_remainder_first() {
        // With 1e16 in the sums, the order decides what survives. The last
        // 7 % 4 = 3 values go in first (lanes 0, 1, 2), then the quad.
        let x = [3.0, -1e16, 5.0, 6.0, 1.0, 2.0, 1e16];
        let lanes = [1.0 + 3.0, 2.0 + -1e16, 1e16 + 5.0, 0.0 + 6.0];
        let want = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        assert_eq!(sum_and_squares(&x).0, want);
        assert_eq!(scalar::sum_and_squares(&x).0, want);
    }
}
