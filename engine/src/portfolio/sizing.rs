//! How much a new position in signal mode gets, and the volatility the
//! volatility-based rules read.

/// A new position's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sizing {
    /// One slot of the account's value: value / max_positions.
    Equal,
    /// This fraction of the cash free when it is bought (vectorbt's
    /// `SizeType.Percent`, backtrader's `PercentSizer`).
    FixedFraction(f64),
    /// A slot scaled by the universe's median volatility over the symbol's,
    /// both over `bars` returns to the signal bar: a calm symbol gets more
    /// than a slot, a wild one less.
    InverseVolatility { bars: usize },
    /// A slot's share of an annual volatility target: (target /
    /// max_positions) / the symbol's annualised volatility over `bars`
    /// returns, at most the whole account.
    VolatilityTarget { bars: usize, annual: f64 },
    /// The Kelly fraction of the symbol's own closed trades in this run,
    /// at most `cap`; a slot until it has `min_trades` of them; nothing
    /// when they show no edge.
    Kelly { cap: f64, min_trades: usize },
}

impl Sizing {
    /// The bars of returns a rule reads (none for the others).
    pub fn volatility_bars(self) -> Option<usize> {
        match self {
            Sizing::InverseVolatility { bars } | Sizing::VolatilityTarget { bars, .. } => {
                Some(bars)
            }
            _ => None,
        }
    }
}

/// Sample standard deviation of the close-to-close returns over `bars`
/// returns ending at each bar (NaN until there are that many, and over a
/// window with a missing close).
/// [`rolling_volatility`] at bar `i` alone, computed as it computes it
/// (NaN unless the `bars` returns to `i` are all finite).
pub fn volatility_at(close: &[f64], bars: usize, i: usize) -> f64 {
    if bars < 2 || i < bars || i >= close.len() {
        return f64::NAN;
    }
    let r = |j: usize| close[j] / close[j - 1] - 1.0;
    let w = i + 1 - bars..=i;
    if w.clone().any(|j| !r(j).is_finite()) {
        return f64::NAN;
    }
    let m = w.clone().map(r).sum::<f64>() / bars as f64;
    let ss: f64 = w.map(|j| (r(j) - m) * (r(j) - m)).sum();
    (ss / (bars - 1) as f64).sqrt()
}

pub fn rolling_volatility(close: &[f64], bars: usize) -> Vec<f64> {
    let n = close.len();
    let mut out = vec![f64::NAN; n];
    if bars < 2 {
        return out;
    }
    let r: Vec<f64> = (0..n)
        .map(|i| {
            if i == 0 {
                f64::NAN
            } else {
                close[i] / close[i - 1] - 1.0
            }
        })
        .collect();
    // Windows of `bars` returns, r[i + 1 - bars ..= i], counted complete
    // as they slide; each complete one is summed twice (mean, then squares)
    // so the figure is exact rather than a running difference of sums.
    let mut good = 0usize;
    for i in 1..n {
        good += usize::from(r[i].is_finite());
        if i > bars {
            good -= usize::from(r[i - bars].is_finite());
        }
        if i >= bars && good == bars {
            let w = &r[i + 1 - bars..=i];
            let m = w.iter().sum::<f64>() / bars as f64;
            let ss: f64 = w.iter().map(|v| (v - m) * (v - m)).sum();
            out[i] = (ss / (bars - 1) as f64).sqrt();
        }
    }
    out
}

/// Kelly fraction W - (1 - W) / R of trade returns (W the share won, R the
/// average win over the average loss): W when nothing was lost, 0 without
/// a win, within [0, cap].
pub fn kelly(returns: &[f64], cap: f64) -> f64 {
    let (mut wins, mut win_sum, mut losses, mut loss_sum) = (0usize, 0.0, 0usize, 0.0);
    for &r in returns {
        if r > 0.0 {
            wins += 1;
            win_sum += r;
        } else if r < 0.0 {
            losses += 1;
            loss_sum -= r;
        }
    }
    if wins == 0 || returns.is_empty() {
        return 0.0;
    }
    let w = wins as f64 / returns.len() as f64;
    let f = if losses == 0 {
        w
    } else {
        let ratio = (win_sum / wins as f64) / (loss_sum / losses as f64);
        w - (1.0 - w) / ratio
    };
    f.clamp(0.0, cap)
}

/// The median of the finite values (NaN without any).
pub fn median(values: &mut Vec<f64>) -> f64 {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let k = values.len();
    if k % 2 == 1 {
        values[k / 2]
    } else {
        (values[k / 2 - 1] + values[k / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rolling_volatility_is_the_sample_deviation_of_the_window_s_returns() {
        let close = [100.0, 101.0, 99.0, 102.0, 102.0, 98.0];
        let v = rolling_volatility(&close, 3);
        assert!(v[..3].iter().all(|x| x.is_nan()));
        for (i, got) in v.iter().enumerate().skip(3) {
            let r: Vec<f64> = (i - 2..=i).map(|j| close[j] / close[j - 1] - 1.0).collect();
            let m = r.iter().sum::<f64>() / 3.0;
            let sd = (r.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt();
            assert!((got - sd).abs() < 1e-15, "{i}");
        }
        let gap = rolling_volatility(&[1.0, 1.1, f64::NAN, 1.2, 1.3, 1.2, 1.1], 2);
        assert!(gap[2].is_nan() && gap[3].is_nan() && gap[4].is_nan());
        assert!(gap[5].is_finite());
    }

    #[test]
    fn the_volatility_at_one_bar_is_the_rolling_one_to_the_bit() {
        let close: Vec<f64> = (0..60)
            .map(|i| {
                if i == 20 {
                    f64::NAN
                } else {
                    100.0 + (i as f64 * 0.7).sin() * 5.0
                }
            })
            .collect();
        for bars in [2, 5, 13] {
            let all = rolling_volatility(&close, bars);
            for (i, want) in all.iter().enumerate() {
                let got = volatility_at(&close, bars, i);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{bars} bars at {i}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn kelly_of_trades_by_hand() {
        // 3 wins of 10% and 1 loss of 5%: W = 0.75, R = 2, f = 0.75 - 0.125.
        assert!((kelly(&[0.1, 0.1, -0.05, 0.1], 1.0) - 0.625).abs() < 1e-12);
        assert_eq!(kelly(&[0.1, 0.1, -0.05, 0.1], 0.25), 0.25);
        assert_eq!(kelly(&[-0.1, -0.2], 0.25), 0.0);
        assert_eq!(kelly(&[0.1, 0.2], 1.0), 1.0);
        // No edge: W = 0.5, R = 0.5, f < 0.
        assert_eq!(kelly(&[0.05, -0.1], 1.0), 0.0);
    }

    #[test]
    fn median_of_finite_values() {
        assert_eq!(median(&mut vec![3.0, f64::NAN, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut vec![f64::NAN]).is_nan());
    }
}
