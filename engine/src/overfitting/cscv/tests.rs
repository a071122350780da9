//! CSCV's splits, tile sums and scores against direct computation.

use super::*;
use crate::overfitting::{Deflated, Moments, deflated};

/// Normal draws from splitmix64 and Box-Muller: enough for sanity cases.
struct Noise(u64);
impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-300), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn grid(strategies: usize, t: usize, edge: Option<f64>, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Noise(seed);
    (0..strategies)
        .map(|k| {
            let drift = if k == strategies / 2 {
                edge.unwrap_or(0.0)
            } else {
                0.0
            };
            (0..t).map(|_| drift + 0.01 * rng.normal()).collect()
        })
        .collect()
}

fn statistics(series: &[Vec<f64>], blocks: usize) -> (Deflated, Pbo) {
    let moments: Vec<Moments> = series.iter().map(|s| Moments::of(s)).collect();
    let (skip, len) = block_layout(series[0].len(), blocks);
    let mut sums = BlockSums::new(series.len(), blocks, len);
    for (k, s) in series.iter().enumerate() {
        sums.set(k, &s[skip..]);
    }
    (deflated(&moments, None).unwrap(), cscv(&sums, 2).unwrap())
}

#[test]
fn splits_are_every_half_once_in_order() {
    let s = splits(16);
    assert_eq!(s.len(), 12_870);
    assert!(s.iter().all(|m| m.count_ones() == 8));
    let mut sorted = s.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), s.len());
    assert_eq!(s[0], 0b1111_1111);
    assert_eq!(s[1], 0b1_0111_1111);
    assert_eq!(
        splits(4),
        vec![0b0011, 0b0101, 0b1001, 0b0110, 0b1010, 0b1100]
    );
}

#[test]
fn tile_sums_equal_direct_sums_and_ranks_average_ties() {
    // Two identical strategies tie everywhere; three are noise.
    let mut series = grid(3, 320, None, 7);
    series.push(series[1].clone());
    let (_, pbo) = statistics(&series, 8);
    for (p, mask) in splits(8).iter().enumerate() {
        let is: Vec<f64> = (0..4)
            .map(|k| {
                let r: Vec<f64> = (0..8)
                    .filter(|b| mask & (1 << b) != 0)
                    .flat_map(|b| series[k][b * 40..(b + 1) * 40].to_vec())
                    .collect();
                Moments::of(&r).sharpe()
            })
            .collect();
        let top = is.iter().cloned().fold(f64::MIN, f64::max);
        assert!((pbo.in_sample[p] - top).abs() < 1e-12, "{p}");
    }
    // Logits come from ranks k / 5 (ties averaged: x.5 possible).
    for l in &pbo.logits {
        let w = 1.0 / (1.0 + (-l).exp());
        let r = w * 5.0;
        assert!((r * 2.0 - (r * 2.0).round()).abs() < 1e-9, "{r}");
    }
}

#[test]
fn a_tile_filled_after_a_full_one_equals_its_blocks_summed() {
    let series = grid(TILE + 37, 64, Some(0.001), 5);
    let (skip, len) = block_layout(64, 16);
    let mut sums = BlockSums::new(series.len(), 16, len);
    for (k, s) in series.iter().enumerate() {
        sums.set(k, &s[skip..]);
    }
    let mut tile = TileSums::with_room(16);
    tile.fill(&sums, 0, TILE);
    tile.fill(&sums, TILE, 37);
    // Highest block first, as the rows are built.
    let by_hand = |k: usize, half: usize, mask: usize, of: &[f64]| {
        (0..8)
            .rev()
            .filter(|b| mask & (1 << b) != 0)
            .fold(0.0, |acc, b| acc + of[k * 16 + half + b])
    };
    for (lo, hi) in [(0, 0), (1, 128), (0b1011_0110, 0b0100_1001), (255, 255)] {
        let [ls, lq, hs, hq] = tile.rows(lo, hi);
        assert_eq!(ls.len(), 37);
        for k in 0..37 {
            let at = TILE + k;
            assert_eq!(ls[k], by_hand(at, 0, lo, &sums.sum), "{lo:#b} {k}");
            assert_eq!(lq[k], by_hand(at, 0, lo, &sums.sumsq), "{lo:#b} {k}");
            assert_eq!(hs[k], by_hand(at, 8, hi, &sums.sum), "{hi:#b} {k}");
            assert_eq!(hq[k], by_hand(at, 8, hi, &sums.sumsq), "{hi:#b} {k}");
        }
    }
}

#[test]
fn noise_overfits_about_half_the_time_and_an_edge_does_not() {
    let (dsr, pbo) = statistics(&grid(200, 2_000, None, 11), 16);
    assert!((0.3..0.7).contains(&pbo.pbo), "noise PBO {}", pbo.pbo);
    assert!(dsr.dsr.unwrap() < 0.95, "noise DSR {:?}", dsr.dsr);
    assert_eq!(pbo.logits.len(), 12_870);
    let (dsr, pbo) = statistics(&grid(200, 2_000, Some(0.002), 11), 16);
    assert!(pbo.pbo < 0.05, "edge PBO {}", pbo.pbo);
    assert_eq!(dsr.best, 100);
    assert!(dsr.dsr.unwrap() > 0.95, "edge DSR {:?}", dsr.dsr);
    assert!(pbo.prob_loss < 0.01);
}

#[test]
fn a_sample_of_splits_is_fixed_symmetric_and_in_order() {
    let all = splits(16);
    let some = sampled_splits(16, 256);
    assert_eq!(some.len(), 256);
    assert_eq!(some, sampled_splits(16, 256), "the same every time");
    let full = (1u32 << 16) - 1;
    assert!(
        some.iter().all(|m| some.contains(&(!m & full))),
        "complements"
    );
    let positions: Vec<usize> = some
        .iter()
        .map(|m| all.iter().position(|a| a == m).unwrap())
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "in order, once each"
    );
    assert_eq!(sampled_splits(16, 20_000), all);
    assert_eq!(sampled_splits(4, 2).len(), 2);
}

#[test]
fn a_sampled_cscv_scores_its_splits_as_the_full_one_does_whichever_way_it_is_parted() {
    // 40 tiles of strategies and 24 splits: parted by tiles; the full
    // CSCV (12,870 splits) is parted by splits.
    let series = grid(40 * TILE, 64, Some(0.001), 3);
    let (skip, len) = block_layout(64, 16);
    let mut sums = BlockSums::new(series.len(), 16, len);
    for (k, s) in series.iter().enumerate() {
        sums.set(k, &s[skip..]);
    }
    let full = cscv(&sums, 2).unwrap();
    let sampled = cscv_sampled(&sums, 2, 24).unwrap();
    assert_eq!((sampled.logits.len(), sampled.splits_total), (24, 12_870));
    assert_eq!(full.splits_total, 12_870);
    let all = splits(16);
    for (p, m) in sampled_splits(16, 24).iter().enumerate() {
        let q = all.iter().position(|a| a == m).unwrap();
        assert_eq!(sampled.logits[p], full.logits[q], "split {m:#b}");
        assert_eq!(sampled.in_sample[p], full.in_sample[q]);
        assert_eq!(sampled.out_of_sample[p], full.out_of_sample[q]);
    }
    let below = sampled.logits.iter().filter(|&&l| l <= 0.0).count();
    assert_eq!(sampled.pbo, below as f64 / 24.0);
}
