//! A strategy's returns reduced for a batch's statistics in one pass after
//! the mean: its moments ([`Moments::of`]) and its block sums
//! ([`BlockSums::add`]), equal to those two bit for bit. Each lane of each
//! sum takes its values in the order those two give them (a slice's last
//! `len % 4` values first, then its quads), so only the number of passes
//! over the returns changes: a million strategies read theirs once less.

use super::{BlockSums, Moments};

/// Blocks a row is kept on the stack for; more take the two calls.
const MAX_BLOCKS: usize = 32;

/// [`Moments::of`] of `x` and [`BlockSums::add`] of `x[skip..]` (which must
/// fill the sums' blocks exactly).
pub fn moments_and_block_sums(x: &[f64], skip: usize, sums: &mut BlockSums) -> Moments {
    let (blocks, len, n) = (sums.blocks, sums.len, x.len());
    if n == 0 || len == 0 || blocks > MAX_BLOCKS || skip + blocks * len != n {
        sums.add(&x[skip.min(n)..]);
        return Moments::of(x);
    }
    let mean = crate::stats::sum(x) / n as f64;
    // The central sums: the last n % 4 values first, then [0, quads) in order.
    let quads = n - n % 4;
    let mut c = [[0.0f64; 4]; 3];
    let central = |c: &mut [[f64; 4]; 3], l: usize, v: f64| {
        let d = v - mean;
        let d2 = d * d;
        c[0][l] += d2;
        c[1][l] += d2 * d;
        c[2][l] += d2 * d2;
    };
    for (l, &v) in x[quads..].iter().enumerate() {
        central(&mut c, l, v);
    }
    for (i, &v) in x[..skip.min(quads)].iter().enumerate() {
        central(&mut c, i % 4, v);
    }
    let (mut row_s, mut row_q) = ([0.0; MAX_BLOCKS], [0.0; MAX_BLOCKS]);
    let rb = len % 4;
    let body = len - rb;
    for b in 0..blocks {
        let start = skip + b * len;
        let block = &x[start..start + len];
        let (mut s, mut q) = ([0.0; 4], [0.0; 4]);
        for (l, &v) in block[body..].iter().enumerate() {
            s[l] += v;
            q[l] += v * v;
        }
        // Whole quads below `quads`, the central lanes turned so that the
        // block's quad lane l is the series' lane (start + l) % 4.
        let whole = body.min(quads.saturating_sub(start) / 4 * 4);
        let phase = start % 4;
        c.iter_mut().for_each(|l| l.rotate_left(phase));
        for quad in block[..whole].chunks_exact(4) {
            for l in 0..4 {
                let v = quad[l];
                s[l] += v;
                q[l] += v * v;
                let d = v - mean;
                let d2 = d * d;
                c[0][l] += d2;
                c[1][l] += d2 * d;
                c[2][l] += d2 * d2;
            }
        }
        c.iter_mut().for_each(|l| l.rotate_right(phase));
        for (j, &v) in block[..body].iter().enumerate().skip(whole) {
            s[j % 4] += v;
            q[j % 4] += v * v;
            if start + j < quads {
                central(&mut c, (start + j) % 4, v);
            }
        }
        for (j, &v) in block.iter().enumerate().skip(body) {
            if start + j < quads {
                central(&mut c, (start + j) % 4, v);
            }
        }
        row_s[b] = (s[0] + s[1]) + (s[2] + s[3]);
        row_q[b] = (q[0] + q[1]) + (q[2] + q[3]);
    }
    sums.push(&row_s[..blocks], &row_q[..blocks]);
    Moments::of_central(n, mean, c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overfitting::block_layout;

    fn bits(m: &Moments) -> [u64; 4] {
        [m.mean, m.sd, m.skew, m.kurtosis].map(f64::to_bits)
    }

    /// Every length from a few returns to a few hundred, every block count
    /// and so every phase of the blocks against the quads: the one pass
    /// gives the two calls' values bit for bit, a NaN return included.
    #[test]
    fn one_pass_equals_the_moments_and_the_block_sums_bit_for_bit() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut noise = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut checked = 0;
        for n in 0..300 {
            let mut x: Vec<f64> = (0..n).map(|_| noise() * 0.04).collect();
            // Flat stretches, as a strategy out of the market has.
            for v in x.iter_mut().step_by(3) {
                *v = 0.0;
            }
            if n == 77 {
                x[40] = f64::NAN;
            }
            for blocks in [2, 4, 6, 8, 10, 16, 32, 40] {
                if n < 2 * blocks {
                    continue;
                }
                let (skip, len) = block_layout(n, blocks);
                let (mut one, mut two) = (
                    BlockSums::new(0, blocks, len),
                    BlockSums::new(0, blocks, len),
                );
                let fused = moments_and_block_sums(&x, skip, &mut one);
                let apart = Moments::of(&x);
                two.add(&x[skip..]);
                assert_eq!(bits(&fused), bits(&apart), "n {n}, {blocks} blocks");
                assert_eq!(fused.n, apart.n);
                let (a, b) = (one.row(0), two.row(0));
                let raw = |r: (&[f64], &[f64])| {
                    r.0.iter()
                        .chain(r.1)
                        .map(|v| v.to_bits())
                        .collect::<Vec<_>>()
                };
                assert_eq!(raw(a), raw(b), "n {n}, {blocks} blocks");
                checked += 1;
            }
        }
        assert!(checked > 1_500, "{checked}");
    }
}
