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

/// The Black-Scholes (risk-neutral) probability that the underlying ends
/// above `level` after `years`: N(d2) at that level. Past expiry or without
/// volatility, 1 or 0 from where the underlying is.
pub fn prob_above(spot: f64, level: f64, years: f64, rate: f64, vol: f64) -> f64 {
    if level <= 0.0 {
        return 1.0;
    }
    if years <= 0.0 || vol <= 0.0 {
        return if spot > level { 1.0 } else { 0.0 };
    }
    let (_, d2) = d1_d2(spot, level, years, rate, vol);
    // N(x) = erfc(-x / sqrt 2) / 2: accurate in the tails, where 1 - erf is not.
    0.5 * libm::erfc(-d2 / std::f64::consts::SQRT_2)
}

/// Shares per listed equity option contract.
pub const CONTRACT: f64 = 100.0;
/// Share of the credit lost to slippage when selling.
pub const SLIPPAGE: f64 = 0.02;
/// Standard deviations of the tail move the expected-value score stresses.
pub const STRESS_SIGMAS: f64 = 1.2;

/// A short put's figures (smart option scanner), per contract where money.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShortPut {
    /// Premium received per share (the last price).
    pub credit: f64,
    /// strike - credit.
    pub break_even: f64,
    /// strike x 100, the cash securing the contract.
    pub margin: f64,
    /// Credit over margin, in percent: 100 x credit x 100 / margin.
    pub return_per: f64,
    /// Probability the underlying ends above the break-even at expiration.
    pub pop: f64,
    /// The underlying after a fall of `STRESS_SIGMAS` standard deviations of
    /// the implied move to expiration: spot x exp(-1.2 x iv x sqrt(years)).
    pub stress_price: f64,
    /// Per contract: (strike - stress price) x 100 - net credit, at least 0.
    pub tail_loss: f64,
    /// Per contract: credit x 100 x (1 - slippage).
    pub net_credit: f64,
    /// Percent of margin: (pop x net credit - (1 - pop) x tail loss) / margin x 100.
    pub ev_score: f64,
    /// ev_score x 252 / DTE: the score per trade scaled to a year of sessions.
    pub cagr: f64,
}

/// A short put's figures: `dte` calendar days to expiration (years = dte /
/// 365, as the chain's greeks), `iv` the contract's implied volatility.
pub fn short_put(spot: f64, strike: f64, last: f64, iv: f64, dte: i64, rate: f64) -> ShortPut {
    let years = dte as f64 / 365.0;
    let credit = last;
    let break_even = strike - credit;
    let margin = strike * CONTRACT;
    let pop = prob_above(spot, break_even, years, rate, iv);
    let net_credit = credit * CONTRACT * (1.0 - SLIPPAGE);
    let stress_price = spot * (-STRESS_SIGMAS * iv * years.sqrt()).exp();
    let tail_loss = ((strike - stress_price) * CONTRACT - net_credit).max(0.0);
    let ev_score = (pop * net_credit - (1.0 - pop) * tail_loss) / margin * 100.0;
    ShortPut {
        credit,
        break_even,
        margin,
        return_per: credit * CONTRACT / margin * 100.0,
        pop,
        stress_price,
        tail_loss,
        net_credit,
        ev_score,
        cagr: if dte > 0 {
            ev_score * 252.0 / dte as f64
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_put_by_hand() {
        // S=100, K=95, last 1.20, iv 30%, 30 days, r 4%.
        let p = short_put(100.0, 95.0, 1.2, 0.3, 30, 0.04);
        let t: f64 = 30.0 / 365.0;
        let be: f64 = 93.8;
        assert_eq!(p.break_even, be);
        // d2 = 0.7394064365438356; scipy's N(d2) = 0.7701698824990969.
        let pop = 0.7701698824990969;
        assert!((p.pop - pop).abs() < 1e-15, "{}", p.pop);
        assert_eq!(p.margin, 9500.0);
        assert!((p.return_per - 1.2 / 95.0 * 100.0).abs() < 1e-12);
        assert!((p.net_credit - 117.6).abs() < 1e-12);
        let stress = 100.0 * (-1.2 * 0.3 * t.sqrt()).exp();
        assert!((p.stress_price - stress).abs() < 1e-12);
        // The stressed underlying (89.68) is below the strike: a tail loss.
        assert!((p.tail_loss - ((95.0 - stress) * 100.0 - 117.6)).abs() < 1e-9);
        let ev = (pop * 117.6 - (1.0 - pop) * p.tail_loss) / 9500.0 * 100.0;
        assert!((p.ev_score - ev).abs() < 1e-12);
        assert!((p.cagr - ev * 252.0 / 30.0).abs() < 1e-12);
        // Far out of the money the stress stays above the strike: no tail loss.
        let far = short_put(100.0, 60.0, 0.05, 0.3, 30, 0.04);
        assert_eq!(far.tail_loss, 0.0);
        assert!(far.ev_score > 0.0 && far.pop > 0.999);
    }

    #[test]
    fn probability_edges() {
        assert_eq!(prob_above(100.0, 0.0, 0.1, 0.04, 0.2), 1.0);
        assert_eq!(prob_above(100.0, 90.0, 0.0, 0.04, 0.2), 1.0);
        assert_eq!(prob_above(80.0, 90.0, 0.1, 0.04, 0.0), 0.0);
        // At the forward-adjusted money the probability is 1/2.
        let t: f64 = 0.5;
        let level = 100.0 * ((0.04 - 0.5 * 0.04) * t).exp();
        assert!((prob_above(100.0, level, t, 0.04, 0.2) - 0.5).abs() < 1e-12);
    }

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
