//! Price simulation: a regime-switching GARCH(1,1) market with Student-t shocks,
//! factor returns on top, and per-asset bars built from their returns.

use super::rng::{self, Rng};
use super::universe::{AssetSpec, Factor, factor_vol, follows_market_vol};
use chrono::{NaiveDate, NaiveTime};
use engine::Bars;
use std::collections::HashMap;

const DAYS: f64 = 252.0;
/// GARCH persistence: shocks decay with a half-life of about a month.
const ALPHA: f64 = 0.08;
const BETA: f64 = 0.90;
/// Long-run annual market volatility used to express vol as a scale.
const LONG_RUN_VOL: f64 = 0.17;

/// Regimes of the market: drift and volatility level differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regime {
    Bull,
    Bear,
}

impl Regime {
    fn drift(self) -> f64 {
        match self {
            Regime::Bull => 0.13 / DAYS,
            Regime::Bear => -0.22 / DAYS,
        }
    }
    fn variance(self) -> f64 {
        match self {
            Regime::Bull => 0.15f64.powi(2) / DAYS,
            Regime::Bear => 0.32f64.powi(2) / DAYS,
        }
    }
    /// Daily probability of switching to the other regime (mean stays of
    /// about three years in bull markets and nine months in bear markets).
    fn switch_probability(self) -> f64 {
        match self {
            Regime::Bull => 1.0 / 750.0,
            Regime::Bear => 1.0 / 190.0,
        }
    }
}

pub struct FactorPaths {
    pub market: Vec<f64>,
    /// Conditional market volatility relative to its long-run level.
    pub scale: Vec<f64>,
    pub others: HashMap<Factor, Vec<f64>>,
}

impl FactorPaths {
    pub fn simulate(seed: u64, n: usize, factors: &[Factor]) -> FactorPaths {
        let mut rng = rng::stream(seed, "market");
        let (mut market, mut scale) = (vec![0.0; n], vec![1.0; n]);
        let mut state = Regime::Bull;
        let mut h = state.variance();
        let mut last_shock = 0.0;
        for t in 0..n {
            if rng::chance(&mut rng, state.switch_probability()) {
                state = match state {
                    Regime::Bull => Regime::Bear,
                    Regime::Bear => Regime::Bull,
                };
            }
            let omega = state.variance() * (1.0 - ALPHA - BETA);
            h = omega + ALPHA * last_shock * last_shock + BETA * h;
            let shock = h.sqrt() * rng::fat_tail(&mut rng, 5.0);
            market[t] = state.drift() + shock;
            scale[t] = h.sqrt() / (LONG_RUN_VOL / DAYS.sqrt());
            last_shock = shock;
        }
        let mut others = HashMap::new();
        for f in factors {
            let mut frng = rng::stream(seed, &format!("factor-{f:?}"));
            let daily = factor_vol(*f) / DAYS.sqrt();
            let path = (0..n)
                .map(|t| {
                    let s = if follows_market_vol(*f) {
                        scale[t]
                    } else {
                        1.0
                    };
                    daily * s * rng::fat_tail(&mut frng, 6.0)
                })
                .collect();
            others.insert(*f, path);
        }
        FactorPaths {
            market,
            scale,
            others,
        }
    }
}

/// Log returns of one asset over all sessions.
pub fn asset_returns(rng: &mut Rng, spec: &AssetSpec, f: &FactorPaths) -> Vec<f64> {
    let idio_daily = spec.idio_vol / DAYS.sqrt();
    (0..f.market.len())
        .map(|t| {
            let mut r = spec.alpha / DAYS + spec.beta * f.market[t];
            for (factor, load) in &spec.loadings {
                r += load * f.others[factor][t];
            }
            if idio_daily > 0.0 {
                r += idio_daily * f.scale[t].sqrt() * rng::fat_tail(rng, 4.0);
            }
            r.clamp(-0.45, 0.45)
        })
        .collect()
}

/// Daily bars from log returns: overnight gaps, a high-low range that widens
/// with volatility, and volume that rises on large moves.
pub fn daily_bars(
    rng: &mut Rng,
    spec: &AssetSpec,
    returns: &[f64],
    dates: &[NaiveDate],
    f: &FactorPaths,
) -> Bars {
    let first = spec.first_session.min(dates.len());
    let mut bars = Bars::with_capacity(dates.len() - first);
    let mut prev = spec.start_price;
    let base_sigma =
        (spec.beta.powi(2) * (LONG_RUN_VOL.powi(2)) + spec.idio_vol.powi(2)).sqrt() / DAYS.sqrt();
    for t in first..dates.len() {
        let sigma = (base_sigma * f.scale[t].sqrt()).max(0.002);
        let r = returns[t];
        let close = round_price(prev * r.exp());
        let gap = r * rng::uniform(rng, 0.0, 0.35) + 0.15 * sigma * rng::normal(rng);
        let open = round_price(prev * gap.exp());
        let high = round_price(open.max(close) * (0.45 * sigma * rng::normal(rng).abs()).exp());
        let low = round_price(open.min(close) * (-0.45 * sigma * rng::normal(rng).abs()).exp());
        let surprise = (r.abs() / sigma).min(6.0);
        let volume = if spec.volume > 0.0 {
            (spec.volume * (0.35 * rng::normal(rng) + 0.25 * surprise - 0.2).exp()).round()
        } else {
            0.0
        };
        let time = dates[t].and_hms_opt(0, 0, 0).expect("midnight");
        bars.push(
            time,
            open,
            high.max(open).max(close),
            low.min(open).min(close),
            close,
            volume,
        );
        prev = close;
    }
    bars
}

/// Four decimals: enough for any listed price, and exact in the stored files.
pub(super) fn round_price(p: f64) -> f64 {
    (p.max(0.0001) * 10_000.0).round() / 10_000.0
}

/// Bars per regular session: 09:30 to 16:00 in 30-minute steps, labelled by start time.
pub const INTRADAY_BARS_PER_DAY: usize = 13;

/// 30-minute bars for the last `days` sessions, consistent with the daily bars:
/// the first opens at the daily open, the last closes at the daily close, and
/// their highs and lows reach exactly the daily high and low.
pub fn intraday_bars(rng: &mut Rng, daily: &Bars, days: usize) -> Bars {
    let from = daily.len().saturating_sub(days);
    let mut out = Bars::with_capacity((daily.len() - from) * INTRADAY_BARS_PER_DAY);
    let open_time = NaiveTime::from_hms_opt(9, 30, 0).expect("valid time");
    for d in from..daily.len() {
        let (o, h, l, c, v) = (
            daily.open[d],
            daily.high[d],
            daily.low[d],
            daily.close[d],
            daily.volume[d],
        );
        let k = INTRADAY_BARS_PER_DAY;
        // Brownian bridge in log price from open to close, kept inside [low, high].
        let mut walk = vec![0.0; k + 1];
        for i in 1..=k {
            walk[i] = walk[i - 1] + rng::normal(rng);
        }
        let span = ((h / l).ln() / 4.0).max(1e-6);
        let mut pts: Vec<f64> = (0..=k)
            .map(|i| {
                let bridge = walk[i] - walk[k] * i as f64 / k as f64;
                let base = o.ln() + (c.ln() - o.ln()) * i as f64 / k as f64;
                (base + span * bridge).exp().clamp(l, h)
            })
            .collect();
        pts[0] = o;
        pts[k] = c;
        let mut bars: Vec<[f64; 4]> = (0..k)
            .map(|i| {
                let (bo, bc) = (pts[i], pts[i + 1]);
                let wiggle = span * 0.3 * rng::normal(rng).abs();
                let bh = (bo.max(bc) * wiggle.exp()).min(h);
                let bl = (bo.min(bc) * (-wiggle).exp()).max(l);
                [bo, bh, bl, bc]
            })
            .collect();
        let hi = (0..k)
            .max_by(|a, b| bars[*a][1].total_cmp(&bars[*b][1]))
            .unwrap_or(0);
        let lo = (0..k)
            .min_by(|a, b| bars[*a][2].total_cmp(&bars[*b][2]))
            .unwrap_or(0);
        bars[hi][1] = h;
        bars[lo][2] = l;
        // U-shaped volume across the day.
        let weights: Vec<f64> = (0..k)
            .map(|i| 1.0 + 1.5 * ((i as f64 - 6.0) / 6.0).powi(2))
            .collect();
        let total: f64 = weights.iter().sum();
        let date = daily.date(d);
        for (i, b) in bars.iter().enumerate() {
            let time = date.and_time(open_time) + chrono::TimeDelta::minutes(30 * i as i64);
            let r = round_price;
            out.push(
                time,
                r(b[0]),
                r(b[1]),
                r(b[2]),
                r(b[3]),
                (v * weights[i] / total).round(),
            );
        }
    }
    out
}
