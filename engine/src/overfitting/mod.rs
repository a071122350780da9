//! Whether the best of many backtests is luck: the Deflated Sharpe Ratio
//! (Bailey and López de Prado, "The Deflated Sharpe Ratio", 2014) and the
//! Probability of Backtest Overfitting by combinatorially symmetric
//! cross-validation (Bailey, Borwein, López de Prado and Zhu, "The
//! Probability of Backtest Overfitting", 2015). Sharpe ratios here are per
//! period (not annualised), as the papers state them.

use statrs::distribution::{ContinuousCDF, Normal};

mod cscv;

pub use cscv::{
    BlockSums, Degradation, Pbo, block_layout, cscv, cscv_sampled, sampled_splits, splits,
};

/// The Euler-Mascheroni constant, in the expected maximum of N Sharpe ratios.
pub const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// A return series' sample moments: mean, standard deviation (n - 1),
/// skewness and kurtosis (not excess: 3 for a normal), the last two as
/// the papers use them (central moments over n, unadjusted).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Moments {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    pub skew: f64,
    pub kurtosis: f64,
}

impl Moments {
    /// Two passes: the mean, then the central sums (each summed in four
    /// lanes, so the additions overlap: `crate::lanes`).
    pub fn of(x: &[f64]) -> Moments {
        let n = x.len();
        if n == 0 {
            return Moments::default();
        }
        let mean = crate::lanes::sum(x) / n as f64;
        let (m2, m3, m4) = crate::lanes::central_sums(x, mean);
        let sd = if n > 1 {
            (m2 / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let (m2n, m3n, m4n) = (m2 / n as f64, m3 / n as f64, m4 / n as f64);
        let (skew, kurtosis) = if m2n > 0.0 {
            (m3n / m2n.powf(1.5), m4n / (m2n * m2n))
        } else {
            (0.0, 3.0)
        };
        Moments {
            n,
            mean,
            sd,
            skew,
            kurtosis,
        }
    }

    /// Mean over standard deviation; 0 for a series that never moves.
    pub fn sharpe(&self) -> f64 {
        if self.sd > 0.0 {
            self.mean / self.sd
        } else {
            0.0
        }
    }
}

fn normal() -> Normal {
    Normal::standard()
}

/// The expected maximum Sharpe ratio of `trials` independent strategies
/// whose Sharpe ratios have variance `variance` and no true skill:
/// `sqrt(V) ((1 - γ) Φ⁻¹(1 - 1/N) + γ Φ⁻¹(1 - 1/(N e)))`.
pub fn expected_max_sharpe(variance: f64, trials: f64) -> Option<f64> {
    if trials < 2.0 || variance.is_nan() || variance < 0.0 {
        return None;
    }
    let z = |p: f64| normal().inverse_cdf(p);
    let e = std::f64::consts::E;
    Some(
        variance.sqrt()
            * ((1.0 - EULER_GAMMA) * z(1.0 - 1.0 / trials)
                + EULER_GAMMA * z(1.0 - 1.0 / (trials * e))),
    )
}

/// The probability that the true Sharpe ratio exceeds `benchmark`, given an
/// estimate `sharpe` from `observations` returns of this skewness and
/// kurtosis: `Φ((SR - SR*) sqrt(T - 1) / sqrt(1 - γ3 SR + (γ4 - 1)/4 SR²))`.
/// `None` when the moments make the variance term non-positive.
pub fn probabilistic_sharpe(
    sharpe: f64,
    benchmark: f64,
    observations: usize,
    skew: f64,
    kurtosis: f64,
) -> Option<f64> {
    let spread = 1.0 - skew * sharpe + (kurtosis - 1.0) / 4.0 * sharpe * sharpe;
    if spread.is_nan() || spread <= 0.0 || observations < 2 {
        return None;
    }
    let z = (sharpe - benchmark) * ((observations - 1) as f64).sqrt() / spread.sqrt();
    Some(normal().cdf(z))
}

/// The Deflated Sharpe Ratio of a set of trials' best.
#[derive(Debug, Clone, PartialEq)]
pub struct Deflated {
    /// Which trial has the highest Sharpe ratio (the first of equals).
    pub best: usize,
    pub sharpe: f64,
    pub observations: usize,
    pub skew: f64,
    pub kurtosis: f64,
    /// N in the expected maximum: the trials, or the caller's effective number.
    pub trials: f64,
    /// The sample variance (n - 1) of the trials' Sharpe ratios.
    pub sharpe_variance: f64,
    pub expected_max_sharpe: f64,
    /// The best's Probabilistic Sharpe Ratio against 0.
    pub psr: Option<f64>,
    /// Its Probabilistic Sharpe Ratio against the expected maximum.
    pub dsr: Option<f64>,
}

/// The DSR of the best of `trials`' return moments; `None` under two trials.
pub fn deflated(trials: &[Moments], effective: Option<f64>) -> Option<Deflated> {
    if trials.len() < 2 {
        return None;
    }
    let sharpes: Vec<f64> = trials.iter().map(Moments::sharpe).collect();
    let mut best = 0;
    for (k, &s) in sharpes.iter().enumerate() {
        if s > sharpes[best] {
            best = k;
        }
    }
    let variance = Moments::of(&sharpes).sd.powi(2);
    let n = effective.unwrap_or(trials.len() as f64);
    let sr0 = expected_max_sharpe(variance, n)?;
    let m = &trials[best];
    let sr = sharpes[best];
    Some(Deflated {
        best,
        sharpe: sr,
        observations: m.n,
        skew: m.skew,
        kurtosis: m.kurtosis,
        trials: n,
        sharpe_variance: variance,
        expected_max_sharpe: sr0,
        psr: probabilistic_sharpe(sr, 0.0, m.n, m.skew, m.kurtosis),
        dsr: probabilistic_sharpe(sr, sr0, m.n, m.skew, m.kurtosis),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dsr_paper_s_worked_example() {
        // Section 4: annualised SR 2.5 and variance 0.5 of 100 trials over
        // 1,250 daily returns with skewness -3 and kurtosis 10: the expected
        // maximum is 0.1132 per day and the DSR 0.9004.
        let (sr, v) = (2.5 / 250f64.sqrt(), 0.5 / 250.0);
        let sr0 = expected_max_sharpe(v, 100.0).unwrap();
        assert!((sr0 - 0.1132).abs() < 5e-5, "{sr0}");
        let dsr = probabilistic_sharpe(sr, sr0, 1250, -3.0, 10.0).unwrap();
        assert!((dsr - 0.9004).abs() < 5e-5, "{dsr}");
    }

    #[test]
    fn moments_of_a_known_series() {
        let m = Moments::of(&[1.0, 2.0, 3.0, 4.0, 10.0]);
        assert_eq!(m.mean, 4.0);
        assert!((m.sd - 12.5f64.sqrt()).abs() < 1e-15);
        // Central moments over n: m2 = 10, m3 = 108/5... computed by hand.
        let d = [-3.0f64, -2.0, -1.0, 0.0, 6.0];
        let m2 = d.iter().map(|x| x * x).sum::<f64>() / 5.0;
        let m3 = d.iter().map(|x| x * x * x).sum::<f64>() / 5.0;
        let m4 = d.iter().map(|x| x.powi(4)).sum::<f64>() / 5.0;
        assert!((m.skew - m3 / m2.powf(1.5)).abs() < 1e-15);
        assert!((m.kurtosis - m4 / (m2 * m2)).abs() < 1e-15);
        assert_eq!(Moments::of(&[0.0; 4]).sharpe(), 0.0);
        assert_eq!(block_layout(5_507, 16), (3, 344));
    }
}
