//! Independent, reproducible random streams: one per (seed, label), so adding a
//! symbol never changes another symbol's numbers.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal, StudentT};
use sha2::{Digest, Sha256};

pub type Rng = ChaCha8Rng;

pub fn stream(seed: u64, label: &str) -> Rng {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update(label.as_bytes());
    ChaCha8Rng::from_seed(h.finalize().into())
}

pub fn normal(rng: &mut Rng) -> f64 {
    StandardNormal.sample(rng)
}

/// Student-t draw scaled to unit variance: fat tails without changing volatility.
pub fn fat_tail(rng: &mut Rng, dof: f64) -> f64 {
    let t: f64 = StudentT::new(dof).expect("dof > 0").sample(rng);
    t / (dof / (dof - 2.0)).sqrt()
}

pub fn uniform(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    use rand::Rng as _;
    rng.random_range(lo..hi)
}

pub fn index(rng: &mut Rng, n: usize) -> usize {
    use rand::Rng as _;
    rng.random_range(0..n)
}

pub fn chance(rng: &mut Rng, p: f64) -> bool {
    use rand::Rng as _;
    rng.random_bool(p.clamp(0.0, 1.0))
}
