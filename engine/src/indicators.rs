//! Technical indicators, computed the way TA-Lib computes them (same seeding,
//! smoothing and warm-up), so values agree with TA-Lib to rounding. Outputs are
//! as long as the input, with NaN during warm-up.

/// TA-Lib treats magnitudes below 1e-8 as zero in ratios.
fn is_zero(v: f64) -> bool {
    -0.000_000_01 < v && v < 0.000_000_01
}

fn nan(n: usize) -> Vec<f64> {
    vec![f64::NAN; n]
}

/// A running sum that carries the rounding error of each step (Neumaier), so
/// a long sliding window keeps its exact sum to far below the last bit, and
/// its mean comes out correctly rounded: two averages then never compare
/// the wrong way round, however close (a plain running sum can misorder
/// them by its accumulated noise).
#[derive(Debug, Default, Clone, Copy)]
struct RunningSum {
    sum: f64,
    carry: f64,
}

impl RunningSum {
    #[inline(always)]
    fn add(&mut self, v: f64) {
        let t = self.sum + v;
        self.carry += if self.sum.abs() >= v.abs() {
            (self.sum - t) + v
        } else {
            (v - t) + self.sum
        };
        self.sum = t;
    }

    /// The sum divided by `n`, rounded once: the quotient of the leading
    /// part, corrected by the exact remainder (by FMA) and the carry.
    #[inline(always)]
    fn mean(&self, n: f64, inv_n: f64) -> f64 {
        let q = self.sum / n;
        let rest = (-q).mul_add(n, self.sum) + self.carry;
        q + rest * inv_n
    }
}

/// Simple moving average over a compensated running sum: the exact mean of
/// each window, correctly rounded (TA-Lib's values to its rounding).
pub fn sma(x: &[f64], period: usize) -> Vec<f64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: FMA is present.
        return unsafe { sma_fma(x, period) };
    }
    sma_here(x, period)
}

/// The same code with the remainder's fused multiply-add as one instruction
/// (elsewhere it is the C library's, equally exact, but a call).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn sma_fma(x: &[f64], period: usize) -> Vec<f64> {
    sma_here(x, period)
}

#[inline(always)]
fn sma_here(x: &[f64], period: usize) -> Vec<f64> {
    let mut out = nan(x.len());
    if period == 0 || x.len() < period {
        return out;
    }
    let (n, inv_n) = (period as f64, 1.0 / period as f64);
    let mut total = RunningSum::default();
    for &v in &x[..period - 1] {
        total.add(v);
    }
    for i in period - 1..x.len() {
        total.add(x[i]);
        out[i] = total.mean(n, inv_n);
        total.add(-x[i + 1 - period]);
    }
    out
}

/// Exponential moving average seeded with the simple average of the first
/// `period` values; k = 2 / (period + 1).
pub fn ema(x: &[f64], period: usize) -> Vec<f64> {
    ema_seeded_at(x, period, period.saturating_sub(1))
}

/// EMA whose first value sits at index `first`, seeded with the mean of the
/// `period` values ending there (TA-Lib aligns MACD's two averages this way).
fn ema_seeded_at(x: &[f64], period: usize, first: usize) -> Vec<f64> {
    let mut out = nan(x.len());
    if period == 0 || first + 1 < period || first >= x.len() {
        return out;
    }
    let k = 2.0 / (period as f64 + 1.0);
    let mut prev = x[first + 1 - period..=first].iter().sum::<f64>() / period as f64;
    out[first] = prev;
    for i in first + 1..x.len() {
        prev = (x[i] - prev) * k + prev;
        out[i] = prev;
    }
    out
}

/// Relative strength index with Wilder's smoothing.
pub fn rsi(x: &[f64], period: usize) -> Vec<f64> {
    let mut out = nan(x.len());
    if period == 0 || x.len() <= period {
        return out;
    }
    let n = period as f64;
    // A bar's move as (gain, loss), both at least 0.
    let moved = |i: usize| {
        let d = x[i] - x[i - 1];
        if d < 0.0 { (0.0, -d) } else { (d, 0.0) }
    };
    let (mut gain, mut loss) = (0.0, 0.0);
    for i in 1..=period {
        let (g, l) = moved(i);
        gain += g;
        loss += l;
    }
    gain /= n;
    loss /= n;
    let value = |g: f64, l: f64| {
        if is_zero(g + l) {
            0.0
        } else {
            100.0 * (g / (g + l))
        }
    };
    out[period] = value(gain, loss);
    for (i, o) in out.iter_mut().enumerate().skip(period + 1) {
        let (g, l) = moved(i);
        gain = (gain * (n - 1.0) + g) / n;
        loss = (loss * (n - 1.0) + l) / n;
        *o = value(gain, loss);
    }
    out
}

/// MACD line, signal line and histogram. All three start where the signal
/// does (index slow + signal - 2), as in TA-Lib.
pub fn macd(x: &[f64], fast: usize, slow: usize, signal: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (fast, slow) = if slow < fast {
        (slow, fast)
    } else {
        (fast, slow)
    };
    let len = x.len();
    let (mut line, mut sig, mut hist) = (nan(len), nan(len), nan(len));
    if fast == 0 || signal == 0 || len < slow + signal - 1 {
        return (line, sig, hist);
    }
    let first = slow - 1;
    let f = ema_seeded_at(x, fast, first);
    let s = ema_seeded_at(x, slow, first);
    let raw: Vec<f64> = (0..len).map(|i| f[i] - s[i]).collect();
    let sig_all = ema_seeded_at(&raw[first..], signal, signal - 1);
    let start = first + signal - 1;
    for i in start..len {
        line[i] = raw[i];
        sig[i] = sig_all[i - first];
        hist[i] = line[i] - sig[i];
    }
    (line, sig, hist)
}

/// Bollinger bands around a simple average with population standard deviation.
pub fn bbands(
    x: &[f64],
    period: usize,
    dev_up: f64,
    dev_down: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let len = x.len();
    let middle = sma(x, period);
    let (mut upper, mut lower) = (nan(len), nan(len));
    if period == 0 || len < period {
        return (upper, middle, lower);
    }
    let mut total2: f64 = x[..period - 1].iter().map(|v| v * v).sum();
    for i in period - 1..len {
        total2 += x[i] * x[i];
        let mean2 = total2 / period as f64;
        total2 -= x[i + 1 - period] * x[i + 1 - period];
        let var = mean2 - middle[i] * middle[i];
        let sd = if var > 0.0 { var.sqrt() } else { 0.0 };
        upper[i] = middle[i] + sd * dev_up;
        lower[i] = middle[i] - sd * dev_down;
    }
    (upper, middle, lower)
}

/// Highest high and lowest low over the `period` bars ending at each index.
fn window_extremes(high: &[f64], low: &[f64], period: usize, i: usize) -> (f64, f64) {
    let from = i + 1 - period;
    let hh = high[from..=i].iter().cloned().fold(f64::MIN, f64::max);
    let ll = low[from..=i].iter().cloned().fold(f64::MAX, f64::min);
    (hh, ll)
}

/// Slow stochastic: %K smoothed by an SMA of `slow_k`, %D an SMA of `slow_d` of %K.
pub fn stoch(
    high: &[f64],
    low: &[f64],
    close: &[f64],
    fast_k: usize,
    slow_k: usize,
    slow_d: usize,
) -> (Vec<f64>, Vec<f64>) {
    let len = close.len();
    let (mut k_out, mut d_out) = (nan(len), nan(len));
    if fast_k == 0 || slow_k == 0 || slow_d == 0 || len < fast_k + slow_k + slow_d - 2 {
        return (k_out, d_out);
    }
    let raw: Vec<f64> = (fast_k - 1..len)
        .map(|i| {
            let (hh, ll) = window_extremes(high, low, fast_k, i);
            let diff = (hh - ll) / 100.0;
            if diff != 0.0 {
                (close[i] - ll) / diff
            } else {
                0.0
            }
        })
        .collect();
    let k = sma(&raw, slow_k);
    let d = sma(&k[slow_k - 1..], slow_d);
    let start = fast_k - 1 + slow_k - 1 + slow_d - 1;
    for i in start..len {
        k_out[i] = k[i - (fast_k - 1)];
        d_out[i] = d[i - (fast_k - 1) - (slow_k - 1)];
    }
    (k_out, d_out)
}

/// True range of bar `i` (needs `i >= 1`).
fn true_range(high: &[f64], low: &[f64], close: &[f64], i: usize) -> f64 {
    let (h, l, yc) = (high[i], low[i], close[i - 1]);
    (h - l).max((yc - h).abs()).max((yc - l).abs())
}

/// Average true range with Wilder's smoothing, seeded by the mean of the first
/// `period` true ranges.
pub fn atr(high: &[f64], low: &[f64], close: &[f64], period: usize) -> Vec<f64> {
    let len = close.len();
    let mut out = nan(len);
    if period == 0 || len <= period {
        return out;
    }
    let n = period as f64;
    let mut prev = (1..=period)
        .map(|i| true_range(high, low, close, i))
        .sum::<f64>()
        / n;
    out[period] = prev;
    for (i, o) in out.iter_mut().enumerate().skip(period + 1) {
        prev = (prev * (n - 1.0) + true_range(high, low, close, i)) / n;
        *o = prev;
    }
    out
}

/// Average directional index (Wilder), first value at index 2 * period - 1.
pub fn adx(high: &[f64], low: &[f64], close: &[f64], period: usize) -> Vec<f64> {
    let len = close.len();
    let mut out = nan(len);
    if period == 0 || len < 2 * period {
        return out;
    }
    let n = period as f64;
    let (mut plus_dm, mut minus_dm, mut tr) = (0.0, 0.0, 0.0);
    let dm = |i: usize| {
        let up = high[i] - high[i - 1];
        let down = low[i - 1] - low[i];
        if down > 0.0 && up < down {
            (0.0, down)
        } else if up > 0.0 && up > down {
            (up, 0.0)
        } else {
            (0.0, 0.0)
        }
    };
    for i in 1..period {
        let (p, m) = dm(i);
        plus_dm += p;
        minus_dm += m;
        tr += true_range(high, low, close, i);
    }
    let step = |i: usize, plus_dm: &mut f64, minus_dm: &mut f64, tr: &mut f64| -> Option<f64> {
        let (p, m) = dm(i);
        *plus_dm = *plus_dm - *plus_dm / n + p;
        *minus_dm = *minus_dm - *minus_dm / n + m;
        *tr = *tr - *tr / n + true_range(high, low, close, i);
        if is_zero(*tr) {
            return None;
        }
        let minus_di = 100.0 * (*minus_dm / *tr);
        let plus_di = 100.0 * (*plus_dm / *tr);
        let sum = minus_di + plus_di;
        (!is_zero(sum)).then(|| 100.0 * ((minus_di - plus_di).abs() / sum))
    };
    let mut sum_dx = 0.0;
    for i in period..2 * period {
        if let Some(dx) = step(i, &mut plus_dm, &mut minus_dm, &mut tr) {
            sum_dx += dx;
        }
    }
    let mut prev = sum_dx / n;
    out[2 * period - 1] = prev;
    for (i, o) in out.iter_mut().enumerate().skip(2 * period) {
        if let Some(dx) = step(i, &mut plus_dm, &mut minus_dm, &mut tr) {
            prev = (prev * (n - 1.0) + dx) / n;
        }
        *o = prev;
    }
    out
}

/// `len` values, NaN until the first full window of `period` bars, then
/// `at(i)` for the window ending at bar `i`.
fn per_window(len: usize, period: usize, mut at: impl FnMut(usize) -> f64) -> Vec<f64> {
    let mut out = nan(len);
    if period == 0 || len < period {
        return out;
    }
    for (i, o) in out.iter_mut().enumerate().skip(period - 1) {
        *o = at(i);
    }
    out
}

/// Commodity channel index on the typical price (H + L + C) / 3.
pub fn cci(high: &[f64], low: &[f64], close: &[f64], period: usize) -> Vec<f64> {
    let tp: Vec<f64> = (0..close.len())
        .map(|i| (high[i] + low[i] + close[i]) / 3.0)
        .collect();
    per_window(close.len(), period, |i| {
        let w = &tp[i + 1 - period..=i];
        let avg = w.iter().sum::<f64>() / period as f64;
        let dev: f64 = w.iter().map(|v| (v - avg).abs()).sum();
        let diff = tp[i] - avg;
        if diff != 0.0 && dev != 0.0 {
            diff / (0.015 * (dev / period as f64))
        } else {
            0.0
        }
    })
}

/// Williams %R, -100 (close at the low) to 0 (close at the high).
pub fn willr(high: &[f64], low: &[f64], close: &[f64], period: usize) -> Vec<f64> {
    per_window(close.len(), period, |i| {
        let (hh, ll) = window_extremes(high, low, period, i);
        let diff = (hh - ll) / -100.0;
        if diff != 0.0 {
            (hh - close[i]) / diff
        } else {
            0.0
        }
    })
}

/// Rate of change in percent over `period` bars.
pub fn roc(x: &[f64], period: usize) -> Vec<f64> {
    let mut out = nan(x.len());
    for i in period..x.len() {
        let base = x[i - period];
        out[i] = if base != 0.0 {
            (x[i] / base - 1.0) * 100.0
        } else {
            0.0
        };
    }
    out
}

/// Money flow index: volume-weighted RSI of the typical price.
pub fn mfi(high: &[f64], low: &[f64], close: &[f64], volume: &[f64], period: usize) -> Vec<f64> {
    let len = close.len();
    let mut out = nan(len);
    if period == 0 || len <= period {
        return out;
    }
    let tp = |i: usize| (high[i] + low[i] + close[i]) / 3.0;
    // A typical price unchanged up to rounding ((h + l + c) / 3 can differ in
    // the last bit for equal sums) is neither inflow nor outflow, as in TA-Lib.
    let flow = |i: usize| {
        let (now, change) = (tp(i), tp(i) - tp(i - 1));
        let money = now * volume[i];
        if is_zero(change) {
            (0.0, 0.0)
        } else if change < 0.0 {
            (0.0, money)
        } else {
            (money, 0.0)
        }
    };
    let (mut pos, mut neg) = (0.0, 0.0);
    for i in 1..=period {
        let (p, m) = flow(i);
        pos += p;
        neg += m;
    }
    let value = |p: f64, m: f64| {
        if p + m < 1.0 {
            0.0
        } else {
            100.0 * (p / (p + m))
        }
    };
    out[period] = value(pos, neg);
    for (i, o) in out.iter_mut().enumerate().skip(period + 1) {
        let (op, om) = flow(i - period);
        let (p, m) = flow(i);
        pos = pos - op + p;
        neg = neg - om + m;
        *o = value(pos, neg);
    }
    out
}

/// On-balance volume, starting from the first bar's volume.
pub fn obv(close: &[f64], volume: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(close.len());
    let mut acc = match volume.first() {
        Some(v) => *v,
        None => return out,
    };
    out.push(acc);
    for i in 1..close.len() {
        if close[i] > close[i - 1] {
            acc += volume[i];
        } else if close[i] < close[i - 1] {
            acc -= volume[i];
        }
        out.push(acc);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x.is_nan() && y.is_nan()) || (x - y).abs() < 1e-12)
    }

    #[test]
    fn sma_and_ema_by_hand() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert!(close(&sma(&x, 3), &[f64::NAN, f64::NAN, 2.0, 3.0, 4.0]));
        // Seed 2.0 at index 2, then k = 0.5.
        assert!(close(&ema(&x, 3), &[f64::NAN, f64::NAN, 2.0, 3.0, 4.0]));
        let y = [2.0, 4.0, 6.0, 8.0, 4.0];
        assert!(close(&ema(&y, 3), &[f64::NAN, f64::NAN, 4.0, 6.0, 5.0]));
    }

    #[test]
    fn rsi_by_hand() {
        // Changes +1, +1, -1 over period 3: gain 2/3, loss 1/3 -> 66.67; then +2.
        let x = [10.0, 11.0, 12.0, 11.0, 13.0];
        let r = rsi(&x, 3);
        assert!((r[3] - 200.0 / 3.0).abs() < 1e-12);
        let (g, l) = ((2.0 / 3.0 * 2.0 + 2.0) / 3.0, (1.0 / 3.0 * 2.0) / 3.0);
        assert!((r[4] - 100.0 * g / (g + l)).abs() < 1e-12);
        assert!(r[2].is_nan());
    }

    #[test]
    fn obv_and_roc_by_hand() {
        assert_eq!(
            obv(&[1.0, 2.0, 2.0, 1.0], &[10.0, 20.0, 30.0, 40.0]),
            vec![10.0, 30.0, 30.0, -10.0]
        );
        let r = roc(&[100.0, 110.0, 121.0], 1);
        assert!((r[1] - 10.0).abs() < 1e-12 && (r[2] - 10.0).abs() < 1e-12);
    }

    #[test]
    fn sma_is_the_exact_window_mean_correctly_rounded() {
        // Prices in [512, 1024) with every mantissa bit used: k / 2^43 with
        // k in [2^52, 2^53). A window's exact sum is an integer over 2^43,
        // so each mean can be checked exactly in integers.
        let mut seed = 7u64;
        let k: Vec<i128> = (0..20_000)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (1i128 << 52) + (seed >> 12) as i128
            })
            .collect();
        let x: Vec<f64> = k.iter().map(|k| *k as f64 / (1u64 << 43) as f64).collect();
        for period in [7usize, 50, 200] {
            let s = sma(&x, period);
            let mut window: i128 = k[..period - 1].iter().sum();
            for i in period - 1..x.len() {
                window += k[i];
                // s[i] = m * 2^e exactly; the mean is window / (period * 2^43).
                // Correctly rounded: |window - m * period * 2^(e+43)| <= half
                // an ulp, in integers (e + 43 >= -1 for means in [512, 1024)).
                let (m, e) = (
                    s[i] / s[i].abs().log2().floor().exp2() * (1u64 << 52) as f64,
                    s[i].abs().log2().floor() as i32 - 52,
                );
                let (m, shift) = (m as i128, e + 43);
                let (lhs, rhs) = if shift >= 0 {
                    (
                        (window - m * period as i128 * (1i128 << shift)).abs() * 2,
                        period as i128 * (1i128 << shift),
                    )
                } else {
                    ((window * 2 - m * period as i128).abs() * 2, period as i128)
                };
                assert!(
                    lhs <= rhs,
                    "period {period}, bar {i}: {} not the rounded mean",
                    s[i]
                );
                window -= k[i + 1 - period];
            }
        }
    }
}
