//! The Probability of Backtest Overfitting by combinatorially symmetric
//! cross-validation (Bailey, Borwein, López de Prado and Zhu, 2015): every
//! way to take half of S blocks of returns as in-sample, the in-sample
//! best's rank out of sample.

use crate::lanes::sum_and_squares;

/// How `observations` returns split into `blocks` equal blocks: the oldest
/// `skip` returns are left out so every block has `len`.
pub fn block_layout(observations: usize, blocks: usize) -> (usize, usize) {
    let len = observations / blocks.max(1);
    (observations - len * blocks.max(1), len)
}

/// Per strategy and block, the sum and the sum of squares of its returns:
/// all that the Sharpe ratio of any union of blocks needs.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSums {
    pub strategies: usize,
    pub blocks: usize,
    /// Returns per block.
    pub len: usize,
    /// `[strategy * blocks + block]`.
    sum: Vec<f64>,
    sumsq: Vec<f64>,
}

impl BlockSums {
    pub fn new(strategies: usize, blocks: usize, len: usize) -> Self {
        BlockSums {
            strategies,
            blocks,
            len,
            sum: vec![0.0; strategies * blocks],
            sumsq: vec![0.0; strategies * blocks],
        }
    }

    /// Strategy `k`'s returns over the sample, `blocks * len` of them.
    pub fn set(&mut self, k: usize, sample: &[f64]) {
        debug_assert_eq!(sample.len(), self.blocks * self.len);
        for (b, block) in sample.chunks_exact(self.len.max(1)).enumerate() {
            let at = k * self.blocks + b;
            (self.sum[at], self.sumsq[at]) = sum_and_squares(block);
        }
    }
}

impl BlockSums {
    /// Strategy `k`'s block sums and sums of squares.
    pub fn row(&self, k: usize) -> (&[f64], &[f64]) {
        let at = k * self.blocks..(k + 1) * self.blocks;
        (&self.sum[at.clone()], &self.sumsq[at])
    }

    /// Adds a strategy from its returns over the sample (as [`Self::set`]).
    pub fn add(&mut self, sample: &[f64]) {
        self.strategies += 1;
        self.sum.resize(self.strategies * self.blocks, 0.0);
        self.sumsq.resize(self.strategies * self.blocks, 0.0);
        self.set(self.strategies - 1, sample);
    }

    /// Adds a strategy from its block sums and sums of squares (as kept).
    pub fn push(&mut self, sum: &[f64], sumsq: &[f64]) {
        debug_assert!(sum.len() == self.blocks && sumsq.len() == self.blocks);
        self.strategies += 1;
        self.sum.extend_from_slice(sum);
        self.sumsq.extend_from_slice(sumsq);
    }

    /// Room for `more` strategies: a batch's parts appended as they are
    /// read fill one allocation instead of being held and copied again.
    pub fn reserve(&mut self, more: usize) {
        self.sum.reserve_exact(more * self.blocks);
        self.sumsq.reserve_exact(more * self.blocks);
    }

    /// A part's strategies after these (a part of the same block layout).
    pub fn append(&mut self, part: &BlockSums) {
        debug_assert_eq!((part.blocks, part.len), (self.blocks, self.len));
        self.strategies += part.strategies;
        self.sum.extend_from_slice(&part.sum);
        self.sumsq.extend_from_slice(&part.sumsq);
    }
}

/// A least-squares line through (in-sample, out-of-sample) Sharpe pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Degradation {
    pub slope: f64,
    pub intercept: f64,
    pub r_squared: f64,
}

/// The outcome of CSCV.
#[derive(Debug, Clone, PartialEq)]
pub struct Pbo {
    /// The share of splits whose logit is at most 0.
    pub pbo: f64,
    pub blocks: usize,
    pub block_len: usize,
    /// Every split there is (S choose S/2); more than the logits when a
    /// sample of them was scored ([`cscv_sampled`]).
    pub splits_total: usize,
    /// Per split scored, in the order of the in-sample block combinations
    /// (lexicographic): the in-sample best's Sharpe ratio in and out of
    /// sample and the logit of its out-of-sample relative rank.
    pub in_sample: Vec<f64>,
    pub out_of_sample: Vec<f64>,
    pub logits: Vec<f64>,
    /// Out-of-sample Sharpe regressed on in-sample Sharpe over the splits.
    pub degradation: Degradation,
    /// The share of splits whose in-sample best loses out of sample (Sharpe < 0).
    pub prob_loss: f64,
}

/// Sharpe ratio from a sum, a sum of squares and a count (n - 1 variance).
#[inline]
fn sharpe_of(s: f64, q: f64, n: f64) -> f64 {
    let mean = s / n;
    let var = (q - s * mean) / (n - 1.0);
    if var > 0.0 { mean / var.sqrt() } else { 0.0 }
}

/// The in-sample block sets of CSCV, as masks, in the lexicographic order
/// of the combinations of `blocks` taken `blocks / 2` at a time.
pub fn splits(blocks: usize) -> Vec<u32> {
    let h = blocks / 2;
    let mut out = Vec::new();
    let mut pick: Vec<usize> = (0..h).collect();
    loop {
        out.push(pick.iter().fold(0u32, |m, &b| m | 1 << b));
        // Next combination: the rightmost index that can still move.
        let Some(i) = (0..h).rev().find(|&i| pick[i] < blocks - h + i) else {
            return out;
        };
        pick[i] += 1;
        for j in i + 1..h {
            pick[j] = pick[j - 1] + 1;
        }
    }
}

/// `count` of the splits of `blocks` (at least two, even; all when as many
/// or more): half of them drawn from those with block 0 in sample by a
/// fixed-seed shuffle, and each one's complement, so the sample keeps
/// CSCV's symmetry (every split's out-of-sample half is another's
/// in-sample half) and a batch gives the same sample every time. In
/// lexicographic order, as [`splits`].
pub fn sampled_splits(blocks: usize, count: usize) -> Vec<u32> {
    let all = splits(blocks);
    if count >= all.len() || blocks < 2 {
        return all;
    }
    let full = (1u32 << blocks) - 1;
    // The combinations holding block 0 come first and are half of them.
    let mut firsts: Vec<u32> = all.iter().copied().filter(|m| m & 1 == 1).collect();
    let pairs = (count / 2).max(1).min(firsts.len());
    let mut state = 0x5EED_C5C5_u64;
    for i in 0..pairs {
        // splitmix64: a reproducible draw, not a secret one.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let j = i + (z % (firsts.len() - i) as u64) as usize;
        firsts.swap(i, j);
    }
    let mut chosen: Vec<u32> = firsts[..pairs]
        .iter()
        .flat_map(|&m| [m, !m & full])
        .collect();
    let rank: std::collections::HashMap<u32, usize> =
        all.iter().enumerate().map(|(k, &m)| (m, k)).collect();
    chosen.sort_by_key(|m| rank[m]);
    chosen
}

/// Strategies taken at a time: their subset sums stay in cache.
const TILE: usize = 512;
/// Strategies scored side by side (the vector lanes of two SSE2 registers and more).
const LANES: usize = 8;

/// Subset sums of a tile of strategies, for the lower and the upper half
/// of the blocks: `[mask * tile + k]`.
struct TileSums {
    tile: usize,
    lo_s: Vec<f64>,
    lo_q: Vec<f64>,
    hi_s: Vec<f64>,
    hi_q: Vec<f64>,
    /// The half's blocks, a row per block.
    blocks: Vec<f64>,
}

impl TileSums {
    /// Room for a tile of `TILE` strategies of `blocks` blocks; filled by
    /// [`Self::fill`]. One per thread, filled tile after tile: a buffer
    /// made per tile (a million strategies make 2,000 tiles of 4 MB, twice)
    /// spent more time having its fresh pages zeroed than being summed.
    fn with_room(blocks: usize) -> Self {
        let m = 1 << (blocks / 2);
        TileSums {
            tile: 0,
            lo_s: vec![0.0; m * TILE],
            lo_q: vec![0.0; m * TILE],
            hi_s: vec![0.0; m * TILE],
            hi_q: vec![0.0; m * TILE],
            blocks: vec![0.0; blocks / 2 * TILE],
        }
    }

    /// The subset sums of the `tile` strategies from `first` (at most `TILE`).
    fn fill(&mut self, b: &BlockSums, first: usize, tile: usize) {
        assert!(tile <= TILE, "a tile of at most {TILE}");
        let h = b.blocks / 2;
        let m = 1 << h;
        self.tile = tile;
        // Row by row (a mask's sums for every strategy of the tile): a mask's
        // row is its row without its lowest block plus that block, so its
        // blocks are added highest first, as `sums_direct` adds them. The
        // half's blocks are laid out a row per block first, so each mask's
        // row is two contiguous rows added.
        let blocks = &mut self.blocks;
        for (src, half, dst) in [
            (&b.sum, 0, &mut self.lo_s),
            (&b.sumsq, 0, &mut self.lo_q),
            (&b.sum, h, &mut self.hi_s),
            (&b.sumsq, h, &mut self.hi_q),
        ] {
            for k in 0..tile {
                let at = (first + k) * b.blocks + half;
                for (blk, v) in src[at..at + h].iter().enumerate() {
                    blocks[blk * tile + k] = *v;
                }
            }
            // The empty set's row: nothing summed.
            dst[..tile].fill(0.0);
            for mask in 1usize..m {
                let blk = mask.trailing_zeros() as usize;
                let block = &blocks[blk * tile..][..tile];
                let (done, rest) = dst.split_at_mut(mask * tile);
                let from = &done[(mask & (mask - 1)) * tile..][..tile];
                for ((out, a), c) in rest[..tile].iter_mut().zip(from).zip(block) {
                    *out = a + c;
                }
            }
        }
    }

    /// The sums over the blocks of `lo` (lower half) and `hi` (upper half).
    fn rows(&self, lo: usize, hi: usize) -> [&[f64]; 4] {
        let t = self.tile;
        [
            &self.lo_s[lo * t..][..t],
            &self.lo_q[lo * t..][..t],
            &self.hi_s[hi * t..][..t],
            &self.hi_q[hi * t..][..t],
        ]
    }

    /// The tile's strategy with the highest Sharpe ratio over the blocks of
    /// `lo` and `hi` (the first of equals), and its score. Kept in `LANES`
    /// running maxima, so the loop vectorises.
    fn best(&self, lo: usize, hi: usize, n: f64) -> (f64, usize) {
        let [ls, lq, hs, hq] = self.rows(lo, hi);
        let mut top = [f64::NEG_INFINITY; LANES];
        // Indices as numbers, so a lane's value and index blend alike.
        let mut at = [0.0f64; LANES];
        let full = self.tile / LANES * LANES;
        for c in (0..full).step_by(LANES) {
            let (a, b) = (&ls[c..c + LANES], &lq[c..c + LANES]);
            let (x, y) = (&hs[c..c + LANES], &hq[c..c + LANES]);
            for l in 0..LANES {
                let v = score(a[l] + x[l], b[l] + y[l], n);
                let up = v > top[l];
                top[l] = if up { v } else { top[l] };
                at[l] = if up { (c + l) as f64 } else { at[l] };
            }
        }
        let mut best = (f64::NEG_INFINITY, usize::MAX);
        for l in 0..LANES {
            let (v, k) = (top[l], at[l] as usize);
            if v > best.0 || (v == best.0 && k < best.1) {
                best = (v, k);
            }
        }
        for k in full..self.tile {
            let v = score(ls[k] + hs[k], lq[k] + hq[k], n);
            if v > best.0 {
                best = (v, k);
            }
        }
        best
    }

    /// How many of the tile's strategies score below `target`, and how many equal it.
    fn below(&self, lo: usize, hi: usize, n: f64, target: f64) -> (usize, usize) {
        let [ls, lq, hs, hq] = self.rows(lo, hi);
        let mut less = [0u64; LANES];
        let mut equal = [0u64; LANES];
        let full = self.tile / LANES * LANES;
        for c in (0..full).step_by(LANES) {
            let (a, b) = (&ls[c..c + LANES], &lq[c..c + LANES]);
            let (x, y) = (&hs[c..c + LANES], &hq[c..c + LANES]);
            for l in 0..LANES {
                let v = score(a[l] + x[l], b[l] + y[l], n);
                less[l] += u64::from(v < target);
                equal[l] += u64::from(v == target);
            }
        }
        let (mut less, mut equal) = (
            less.iter().sum::<u64>() as usize,
            equal.iter().sum::<u64>() as usize,
        );
        for k in full..self.tile {
            let v = score(ls[k] + hs[k], lq[k] + hq[k], n);
            less += usize::from(v < target);
            equal += usize::from(v == target);
        }
        (less, equal)
    }
}

/// A score that orders strategies as their Sharpe ratios do, without the
/// square root: sign(SR) SR² n / (n - 1) = s|s| / (n q - s²); 0 when flat.
#[inline]
fn score(s: f64, q: f64, n: f64) -> f64 {
    let d = n * q - s * s;
    if d > 0.0 { s * s.abs() / d } else { 0.0 }
}

/// One strategy's sums over a split's half, summed as the tiles sum them.
fn sums_direct(b: &BlockSums, k: usize, lo: usize, hi: usize) -> (f64, f64) {
    let h = b.blocks / 2;
    let at = k * b.blocks;
    // As the tiles add a mask's blocks: the highest first.
    let one = |src: &[f64], half: usize, mask: usize| {
        (0..h)
            .rev()
            .filter(|blk| mask & (1 << blk) != 0)
            .fold(0.0, |acc, blk| acc + src[at + half + blk])
    };
    (
        one(&b.sum, 0, lo) + one(&b.sum, h, hi),
        one(&b.sumsq, 0, lo) + one(&b.sumsq, h, hi),
    )
}

/// Runs `f` on `threads` contiguous parts of `0..n`, in parallel on the
/// current rayon pool; the parts' answers in order.
fn parted<T: Send>(
    n: usize,
    threads: usize,
    f: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    use rayon::prelude::*;
    let parts = threads.clamp(1, n.max(1));
    let step = n.div_ceil(parts);
    (0..parts)
        .into_par_iter()
        .map(|p| f(p * step..((p + 1) * step).min(n)))
        .collect()
}

/// CSCV over every way to pick half of the blocks as in-sample; `None` under
/// two strategies, an odd or zero number of blocks, more than 16 blocks, or
/// blocks of fewer than two returns.
pub fn cscv(b: &BlockSums, threads: usize) -> Option<Pbo> {
    cscv_sampled(b, threads, usize::MAX)
}

/// [`cscv`] over at most `max_splits` of the splits ([`sampled_splits`]):
/// its cost is the strategies times the splits, so a batch of a million
/// strategies scores a sample of them.
pub fn cscv_sampled(b: &BlockSums, threads: usize, max_splits: usize) -> Option<Pbo> {
    let s = b.blocks;
    if b.strategies < 2 || s == 0 || s % 2 == 1 || s > 16 || b.len < 2 {
        return None;
    }
    let h = s / 2;
    let half = (1usize << h) - 1;
    let splits_total = splits(s).len();
    let masks = sampled_splits(s, max_splits);
    let n = (h * b.len) as f64;
    let halves = |mask: u32| {
        let m = mask as usize;
        let oos = !m & ((1 << s) - 1);
        ((m & half, m >> h), (oos & half, oos >> h))
    };
    let tiles: Vec<(usize, usize)> = (0..b.strategies)
        .step_by(TILE)
        .map(|f| (f, TILE.min(b.strategies - f)))
        .collect();
    // Each thread takes a part of the splits over every tile, or, when the
    // tiles are many and the splits few (a sampled million), a part of
    // the tiles over every split: each thread builds the subset sums of
    // every tile it sees, so the larger side is the one divided.
    let by_tiles = tiles.len() >= 4 * threads.max(1) && tiles.len() > masks.len();
    // Pass 1: each split's in-sample best (the first of equals).
    let best_of = |tiles: &[(usize, usize)], range: std::ops::Range<usize>| {
        let mut best = vec![(f64::NEG_INFINITY, 0usize); range.len()];
        let mut sums = TileSums::with_room(s);
        for &(first, tile) in tiles {
            sums.fill(b, first, tile);
            for (slot, &mask) in best.iter_mut().zip(&masks[range.clone()]) {
                let ((lo, hi), _) = halves(mask);
                let (v, k) = sums.best(lo, hi, n);
                if v > slot.0 {
                    *slot = (v, first + k);
                }
            }
        }
        best
    };
    let best: Vec<(f64, usize)> = if by_tiles {
        // Parts in strategy order, each kept only when strictly better: the
        // first of equals wins, as in one pass.
        parted(tiles.len(), threads, |part| {
            best_of(&tiles[part], 0..masks.len())
        })
        .into_iter()
        .fold(
            vec![(f64::NEG_INFINITY, 0); masks.len()],
            |mut acc, part| {
                for (a, p) in acc.iter_mut().zip(part) {
                    if p.0 > a.0 {
                        *a = p;
                    }
                }
                acc
            },
        )
    } else {
        parted(masks.len(), threads, |range| best_of(&tiles, range)).concat()
    };
    // Its Sharpe ratio in and out of sample, and its score out of sample.
    let (in_sample, (targets, out_of_sample)): (Vec<f64>, (Vec<f64>, Vec<f64>)) = masks
        .iter()
        .zip(&best)
        .map(|(&mask, &(_, k))| {
            let ((lo, hi), (olo, ohi)) = halves(mask);
            let (s, q) = sums_direct(b, k, lo, hi);
            let (os, oq) = sums_direct(b, k, olo, ohi);
            (sharpe_of(s, q, n), (score(os, oq, n), sharpe_of(os, oq, n)))
        })
        .unzip();
    // Pass 2: where it ranks out of sample (ties averaged).
    let count = |tiles: &[(usize, usize)], range: std::ops::Range<usize>| {
        let mut counts = vec![(0usize, 0usize); range.len()];
        let mut sums = TileSums::with_room(s);
        for &(first, tile) in tiles {
            sums.fill(b, first, tile);
            for ((slot, &mask), &target) in counts
                .iter_mut()
                .zip(&masks[range.clone()])
                .zip(&targets[range.clone()])
            {
                let (_, (lo, hi)) = halves(mask);
                let (less, equal) = sums.below(lo, hi, n, target);
                slot.0 += less;
                slot.1 += equal;
            }
        }
        counts
    };
    let counts: Vec<(usize, usize)> = if by_tiles {
        parted(tiles.len(), threads, |part| {
            count(&tiles[part], 0..masks.len())
        })
        .into_iter()
        .fold(vec![(0, 0); masks.len()], |mut acc, part| {
            for (a, p) in acc.iter_mut().zip(part) {
                (a.0, a.1) = (a.0 + p.0, a.1 + p.1);
            }
            acc
        })
    } else {
        parted(masks.len(), threads, |range| count(&tiles, range)).concat()
    };
    let total = (b.strategies + 1) as f64;
    let logits: Vec<f64> = counts
        .iter()
        .map(|&(less, equal)| {
            let rank = less as f64 + (equal as f64 + 1.0) / 2.0;
            let w = rank / total;
            (w / (1.0 - w)).ln()
        })
        .collect();
    let splits = masks.len() as f64;
    Some(Pbo {
        pbo: logits.iter().filter(|&&l| l <= 0.0).count() as f64 / splits,
        blocks: s,
        block_len: b.len,
        splits_total,
        degradation: regression(&in_sample, &out_of_sample),
        prob_loss: out_of_sample.iter().filter(|&&v| v < 0.0).count() as f64 / splits,
        in_sample,
        out_of_sample,
        logits,
    })
}

/// Ordinary least squares of `y` on `x`.
fn regression(x: &[f64], y: &[f64]) -> Degradation {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    Degradation {
        slope,
        intercept: my - slope * mx,
        r_squared: if sxx > 0.0 && syy > 0.0 {
            sxy * sxy / (sxx * syy)
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests;
