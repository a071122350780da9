//! The bars where a rule fires, one bit per bar. Rules fire on few bars, so
//! the simulation jumps from one firing to the next instead of visiting every
//! bar, and a grid of strategies keeps each of its signals in n/64 words.

use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fired {
    words: Vec<u64>,
    len: usize,
}

impl Fired {
    /// Fires nowhere.
    pub fn none(len: usize) -> Self {
        Fired {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    pub fn from_bools(b: &[bool]) -> Self {
        let mut f = Fired::none(b.len());
        for (w, chunk) in f.words.iter_mut().zip(b.chunks(64)) {
            *w = chunk
                .iter()
                .enumerate()
                .fold(0, |w, (j, &x)| w | (u64::from(x) << j));
        }
        f
    }

    pub fn to_bools(&self) -> Vec<bool> {
        (0..self.len).map(|i| self.get(i)).collect()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// How many bars fire.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The first firing bar at or after `i`.
    pub fn next_from(&self, i: usize) -> Option<usize> {
        if i >= self.len {
            return None;
        }
        let (mut k, bit) = (i / 64, i % 64);
        let mut w = self.words[k] & (u64::MAX << bit);
        loop {
            if w != 0 {
                return Some(k * 64 + w.trailing_zeros() as usize);
            }
            k += 1;
            w = *self.words.get(k)?;
        }
    }

    /// The same firings `k` bars later (those pushed past the end are lost).
    pub fn delayed(&self, k: usize) -> Fired {
        if k == 0 {
            return self.clone();
        }
        let mut out = Fired::none(self.len);
        let (words, bits) = (k / 64, k % 64);
        for i in (words..out.words.len()).rev() {
            let lo = self.words[i - words];
            let carry = if bits > 0 && i > words {
                self.words[i - words - 1] >> (64 - bits)
            } else {
                0
            };
            out.words[i] = if bits > 0 { lo << bits | carry } else { lo };
        }
        out.clear_tail();
        out
    }

    /// Bits past `len` in the last word stay zero so `next_from` never finds them.
    fn clear_tail(&mut self) {
        let r = self.len % 64;
        if r > 0
            && let Some(w) = self.words.last_mut()
        {
            *w &= (1u64 << r) - 1;
        }
    }

    /// Where `x` compared with `y` (same length) holds: `Greater` for
    /// `x > y`, `Less` for `x < y`. NaN on either side never holds.
    pub fn compare(x: &[f64], y: &[f64], want: Ordering) -> Fired {
        assert_eq!(x.len(), y.len(), "compared series have one length");
        let mut f = Fired::none(x.len());
        for (w, (xs, ys)) in f.words.iter_mut().zip(x.chunks(64).zip(y.chunks(64))) {
            *w = compare_word(xs, ys, want);
        }
        f
    }

    /// Where `x` crosses `y`: upward (`Greater`) fires on bar i when
    /// `x[i-1] <= y[i-1]` and `x[i] > y[i]`; downward (`Less`) mirrors it.
    /// NaN on either side of either bar never fires.
    pub fn cross(x: &[f64], y: &[f64], want: Ordering) -> Fired {
        assert_eq!(x.len(), y.len(), "compared series have one length");
        let mut f = Fired::none(x.len());
        let mut carry = 0u64;
        for (w, (xs, ys)) in f.words.iter_mut().zip(x.chunks(64).zip(y.chunks(64))) {
            let now = compare_word(xs, ys, want);
            // Was at or on the other side: not strictly `want`, both known.
            let before = !now & known_word(xs, ys);
            *w = now & (before << 1 | carry);
            carry = before >> 63;
        }
        f
    }
}

/// Bit j: `x[j]` against `y[j]` is `want` (NaN never is).
fn compare_word(x: &[f64], y: &[f64], want: Ordering) -> u64 {
    let mut w = 0u64;
    match want {
        Ordering::Greater => {
            for (j, (a, b)) in x.iter().zip(y).enumerate() {
                w |= u64::from(a > b) << j;
            }
        }
        Ordering::Less => {
            for (j, (a, b)) in x.iter().zip(y).enumerate() {
                w |= u64::from(a < b) << j;
            }
        }
        Ordering::Equal => {
            for (j, (a, b)) in x.iter().zip(y).enumerate() {
                w |= u64::from(a == b) << j;
            }
        }
    }
    w
}

/// Bit j: neither `x[j]` nor `y[j]` is NaN.
fn known_word(x: &[f64], y: &[f64]) -> u64 {
    let mut w = 0u64;
    for (j, (a, b)) in x.iter().zip(y).enumerate() {
        w |= u64::from(!a.is_nan() && !b.is_nan()) << j;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator: values on a coarse grid so ties and
    /// NaN both occur.
    fn series(seed: u64, n: usize) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match (s >> 33) % 11 {
                    0 => f64::NAN,
                    k => k as f64,
                }
            })
            .collect()
    }

    #[test]
    fn bits_round_trip_and_walk() {
        let b: Vec<bool> = (0..200).map(|i| i % 7 == 3 || i == 199).collect();
        let f = Fired::from_bools(&b);
        assert_eq!(f.to_bools(), b);
        assert_eq!(f.count(), b.iter().filter(|x| **x).count());
        assert_eq!(f.next_from(0), Some(3));
        assert_eq!(f.next_from(4), Some(10));
        assert_eq!(f.next_from(193), Some(199));
        assert_eq!(f.next_from(200), None);
        assert_eq!(Fired::none(130).next_from(0), None);
        for k in [0, 1, 5, 63, 64, 65, 130, 250] {
            let want: Vec<bool> = (0..200).map(|i| i >= k && b[i - k]).collect();
            assert_eq!(f.delayed(k).to_bools(), want, "delay {k}");
        }
    }

    #[test]
    fn comparisons_and_crossings_match_the_bar_by_bar_rule() {
        for seed in 0..20 {
            let n = 1 + (seed as usize * 37) % 300;
            let (x, y) = (series(seed, n), series(seed + 100, n));
            let ok = |i: usize| !x[i].is_nan() && !y[i].is_nan();
            let gt: Vec<bool> = (0..n).map(|i| x[i] > y[i]).collect();
            let lt: Vec<bool> = (0..n).map(|i| x[i] < y[i]).collect();
            let up: Vec<bool> = (0..n)
                .map(|i| i > 0 && ok(i - 1) && x[i - 1] <= y[i - 1] && x[i] > y[i])
                .collect();
            let down: Vec<bool> = (0..n)
                .map(|i| i > 0 && ok(i - 1) && x[i - 1] >= y[i - 1] && x[i] < y[i])
                .collect();
            assert_eq!(Fired::compare(&x, &y, Ordering::Greater).to_bools(), gt);
            assert_eq!(Fired::compare(&x, &y, Ordering::Less).to_bools(), lt);
            assert_eq!(Fired::cross(&x, &y, Ordering::Greater).to_bools(), up);
            assert_eq!(Fired::cross(&x, &y, Ordering::Less).to_bools(), down);
        }
    }
}
