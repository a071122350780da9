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

    /// The firings before bar `end`, as long as `end` (a window's signals).
    pub fn truncated(&self, end: usize) -> Fired {
        let end = end.min(self.len);
        let mut out = Fired {
            words: self.words[..end.div_ceil(64)].to_vec(),
            len: end,
        };
        out.clear_tail();
        out
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

    /// Where `x > y` (`Greater`) or `x < y` (`Less`); NaN never holds.
    pub fn compare(x: &[f64], y: &[f64], want: Ordering) -> Fired {
        Sides::of(x, y).compare(want)
    }

    /// Where `x` crosses `y`: upward (`Greater`) fires on bar i when
    /// `x[i-1] <= y[i-1]` and `x[i] > y[i]`; downward (`Less`) mirrors it.
    /// NaN on either side of either bar never fires.
    pub fn cross(x: &[f64], y: &[f64], want: Ordering) -> Fired {
        Sides::of(x, y).cross(want)
    }
}

/// Which side of `y` each bar of `x` is on, 64 bars a word: above, below,
/// and whether both are known (not NaN). A crossover's entry and exit rules
/// read the same sides, so a grid computes them once per pair of series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sides {
    above: Vec<u64>,
    below: Vec<u64>,
    known: Vec<u64>,
    len: usize,
}

impl Sides {
    pub fn of(x: &[f64], y: &[f64]) -> Sides {
        Sides::of_from(x, y, 0)
    }

    /// [`Sides::of`] where only the bars from `from` on are read: those
    /// before are neither above, below nor known, so nothing fires there.
    /// A backtest's window is often half its bars (the rest warm its
    /// averages up), and these sides are most of a grid's engine time.
    /// Whole words from the one holding bar `from - 1`, which a crossing
    /// at `from` reads.
    pub fn of_from(x: &[f64], y: &[f64], from: usize) -> Sides {
        assert_eq!(x.len(), y.len(), "compared series have one length");
        let skip = from.saturating_sub(1).min(x.len()) / 64;
        let mut s = Sides::with_capacity(x.len());
        for _ in 0..skip {
            s.push(0, 0, 0);
        }
        let (x, y) = (&x[skip * 64..], &y[skip * 64..]);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present.
            unsafe { avx2::extend(&mut s, x, y) };
            return s;
        }
        s.extend_portable(x, y);
        s
    }

    fn with_capacity(len: usize) -> Sides {
        let words = len.div_ceil(64);
        Sides {
            above: Vec::with_capacity(words),
            below: Vec::with_capacity(words),
            known: Vec::with_capacity(words),
            len,
        }
    }

    fn push(&mut self, above: u64, below: u64, known: u64) {
        self.above.push(above);
        self.below.push(below);
        self.known.push(known);
    }

    #[cfg(test)]
    fn portable(x: &[f64], y: &[f64]) -> Sides {
        let mut s = Sides::with_capacity(x.len());
        s.extend_portable(x, y);
        s
    }

    /// Appends the sides of `x` and `y`'s bars, 64 a word.
    fn extend_portable(&mut self, x: &[f64], y: &[f64]) {
        // Byte flags first (the compiler vectorises these loops), packed
        // eight at a time into bits.
        let (mut gt, mut lt, mut ok) = ([0u8; 64], [0u8; 64], [0u8; 64]);
        for (xs, ys) in x.chunks(64).zip(y.chunks(64)) {
            let m = xs.len();
            for j in 0..m {
                let (a, b) = (xs[j], ys[j]);
                gt[j] = u8::from(a > b);
                lt[j] = u8::from(a < b);
                ok[j] = u8::from(!a.is_nan() && !b.is_nan());
            }
            for f in [&mut gt, &mut lt, &mut ok] {
                f[m..].fill(0);
            }
            self.push(pack(&gt), pack(&lt), pack(&ok));
        }
    }

    fn words(&self, want: Ordering) -> &[u64] {
        match want {
            Ordering::Greater => &self.above,
            _ => &self.below,
        }
    }

    /// Where `x > y` (`Greater`) or `x < y` (`Less`).
    pub fn compare(&self, want: Ordering) -> Fired {
        Fired {
            words: self.words(want).to_vec(),
            len: self.len,
        }
    }

    /// Where `x` crosses `y` upward (`Greater`) or downward (`Less`).
    pub fn cross(&self, want: Ordering) -> Fired {
        let now = self.words(want);
        let mut words = Vec::with_capacity(now.len());
        let mut carry = 0u64;
        for (w, k) in now.iter().zip(&self.known) {
            // Before: known and not strictly on the wanted side.
            let before = !w & k;
            words.push(w & (before << 1 | carry));
            carry = before >> 63;
        }
        Fired {
            words,
            len: self.len,
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Sides;
    use std::arch::x86_64::*;

    /// Four bars a compare, their signs gathered straight into bits.
    #[target_feature(enable = "avx2")]
    pub unsafe fn extend(s: &mut Sides, x: &[f64], y: &[f64]) {
        let full = x.len() / 64 * 64;
        for base in (0..full).step_by(64) {
            let (mut above, mut below, mut known) = (0u64, 0u64, 0u64);
            for k in 0..16 {
                // SAFETY: base + 4k + 3 < full <= x.len() = y.len().
                let (a, b) = unsafe {
                    (
                        _mm256_loadu_pd(x.as_ptr().add(base + 4 * k)),
                        _mm256_loadu_pd(y.as_ptr().add(base + 4 * k)),
                    )
                };
                let bits = |m: __m256d| (_mm256_movemask_pd(m) as u64) << (4 * k);
                above |= bits(_mm256_cmp_pd::<_CMP_GT_OQ>(a, b));
                below |= bits(_mm256_cmp_pd::<_CMP_LT_OQ>(a, b));
                known |= bits(_mm256_cmp_pd::<_CMP_ORD_Q>(a, b));
            }
            s.push(above, below, known);
        }
        if full < x.len() {
            s.extend_portable(&x[full..], &y[full..]);
        }
    }
}

/// 64 byte flags (0 or 1) as the bits of a word, flag j at bit j.
fn pack(flags: &[u8; 64]) -> u64 {
    let mut w = 0u64;
    for (k, eight) in flags.chunks_exact(8).enumerate() {
        let v = u64::from_le_bytes(eight.try_into().expect("eight bytes"));
        // Each byte's low bit moves to bit 56 + k of the product, with no
        // carries between them (the shifts 56 + 8i - 7j never collide).
        w |= (v.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
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
        for end in [0, 3, 4, 64, 130, 199, 200, 300] {
            let cut = f.truncated(end);
            assert_eq!(cut.to_bools(), b[..end.min(200)].to_vec(), "cut at {end}");
            // No firing at or past the end is left in the last word.
            assert_eq!(
                cut.count(),
                b[..end.min(200)].iter().filter(|x| **x).count()
            );
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
            assert_eq!(Sides::portable(&x, &y), Sides::of(&x, &y), "both paths");
            assert_eq!(Fired::compare(&x, &y, Ordering::Greater).to_bools(), gt);
            assert_eq!(Fired::compare(&x, &y, Ordering::Less).to_bools(), lt);
            assert_eq!(Fired::cross(&x, &y, Ordering::Greater).to_bools(), up);
            assert_eq!(Fired::cross(&x, &y, Ordering::Less).to_bools(), down);
        }
    }

    #[test]
    fn sides_from_a_bar_fire_as_the_whole_sides_from_there_and_nowhere_before() {
        let n = 300;
        let (x, y) = (series(3, n), series(103, n));
        let whole = Sides::of(&x, &y);
        for from in [0, 1, 2, 63, 64, 65, 66, 128, 129, 200, 299, 300, 400] {
            let part = Sides::of_from(&x, &y, from);
            for want in [Ordering::Greater, Ordering::Less] {
                for (got, all) in [
                    (part.compare(want), whole.compare(want)),
                    (part.cross(want), whole.cross(want)),
                ] {
                    assert_eq!(got.len(), n);
                    let (got, all) = (got.to_bools(), all.to_bools());
                    assert_eq!(got[from.min(n)..], all[from.min(n)..], "from {from}");
                    // Before the word holding bar from - 1 nothing fires.
                    let skipped = from.saturating_sub(1).min(n) / 64 * 64;
                    assert!(got[..skipped].iter().all(|f| !f), "from {from}");
                }
            }
        }
    }
}
