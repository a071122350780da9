//! Black-Scholes prices and greeks for European options (no dividends).

use statrs::distribution::{Continuous, ContinuousCDF, Normal};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    Call,
    Put,
}

/// Price and sensitivities. Vega is per 1.00 of volatility, theta per year.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Greeks {
    pub price: f64,
    pub delta: f64,
    pub gamma: f64,
    pub vega: f64,
    pub theta: f64,
}

fn std_normal() -> Normal {
    Normal::new(0.0, 1.0).expect("standard normal")
}

/// `d1` and `d2` of the Black-Scholes formula.
pub fn d1_d2(spot: f64, strike: f64, years: f64, rate: f64, vol: f64) -> (f64, f64) {
    let sd = vol * years.sqrt();
    let d1 = ((spot / strike).ln() + (rate + 0.5 * vol * vol) * years) / sd;
    (d1, d1 - sd)
}

/// Black-Scholes price and greeks; at or past expiry the intrinsic value.
pub fn black_scholes(
    kind: OptionKind,
    spot: f64,
    strike: f64,
    years: f64,
    rate: f64,
    vol: f64,
) -> Greeks {
    if years <= 0.0 || vol <= 0.0 {
        let intrinsic = match kind {
            OptionKind::Call => (spot - strike).max(0.0),
            OptionKind::Put => (strike - spot).max(0.0),
        };
        let delta = match kind {
            OptionKind::Call if spot > strike => 1.0,
            OptionKind::Put if spot < strike => -1.0,
            _ => 0.0,
        };
        return Greeks {
            price: intrinsic,
            delta,
            gamma: 0.0,
            vega: 0.0,
            theta: 0.0,
        };
    }
    let n = std_normal();
    let (d1, d2) = d1_d2(spot, strike, years, rate, vol);
    let disc = (-rate * years).exp();
    let pdf = n.pdf(d1);
    let gamma = pdf / (spot * vol * years.sqrt());
    let vega = spot * pdf * years.sqrt();
    let decay = -spot * pdf * vol / (2.0 * years.sqrt());
    match kind {
        OptionKind::Call => Greeks {
            price: spot * n.cdf(d1) - strike * disc * n.cdf(d2),
            delta: n.cdf(d1),
            gamma,
            vega,
            theta: decay - rate * strike * disc * n.cdf(d2),
        },
        OptionKind::Put => Greeks {
            price: strike * disc * n.cdf(-d2) - spot * n.cdf(-d1),
            delta: n.cdf(d1) - 1.0,
            gamma,
            vega,
            theta: decay + rate * strike * disc * n.cdf(-d2),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_values() {
        // Hull's standard example: S=K=100, T=1, r=5%, vol=20%.
        let c = black_scholes(OptionKind::Call, 100.0, 100.0, 1.0, 0.05, 0.2);
        let p = black_scholes(OptionKind::Put, 100.0, 100.0, 1.0, 0.05, 0.2);
        assert!((c.price - 10.450583572185565).abs() < 1e-9, "{}", c.price);
        assert!((p.price - 5.573526022256971).abs() < 1e-9, "{}", p.price);
        assert!((c.delta - 0.6368306511756191).abs() < 1e-12);
        assert!((p.delta + 0.3631693488243809).abs() < 1e-12);
        // Put-call parity.
        assert!((c.price - p.price - (100.0 - 100.0 * (-0.05f64).exp())).abs() < 1e-12);
        assert!((c.gamma - 0.018762017345846895).abs() < 1e-12);
        assert!((c.vega - 37.52403469169379).abs() < 1e-9);
    }

    #[test]
    fn expired_is_intrinsic() {
        let p = black_scholes(OptionKind::Put, 90.0, 100.0, 0.0, 0.05, 0.2);
        assert_eq!((p.price, p.delta), (10.0, -1.0));
    }
}
