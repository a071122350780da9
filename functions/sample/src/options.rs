//! Option chains on the latest day: Black-Scholes prices from a skewed implied
//! volatility surface anchored at each underlying's realised volatility.

use super::rng::{self, Rng};
use super::schema;
use super::table::TableBuilder;
use crate::row;
use arrow_array::RecordBatch;
use chrono::{Datelike, Duration, NaiveDate, Weekday};
use engine::Bars;
use engine::calendar::{is_session, nth_weekday};
use engine::options::{OptionKind, black_scholes};

pub const RISK_FREE_RATE: f64 = 0.04;

pub fn builder() -> TableBuilder {
    TableBuilder::new(schema::OPTION_CHAINS)
}

/// The session on or before `d` (expirations move back from holidays).
fn session_on_or_before(mut d: NaiveDate) -> NaiveDate {
    while !is_session(d) {
        d -= Duration::days(1);
    }
    d
}

/// The next four weekly expirations and the next four monthly (third Friday) ones.
pub fn expirations(as_of: NaiveDate) -> Vec<NaiveDate> {
    let mut out = Vec::new();
    let mut d = as_of + Duration::days(1);
    while out.len() < 4 {
        if d.weekday() == Weekday::Fri {
            out.push(session_on_or_before(d));
        }
        d += Duration::days(1);
    }
    let (mut y, mut m) = (as_of.year(), as_of.month());
    let mut monthly = 0;
    while monthly < 4 {
        let third = session_on_or_before(nth_weekday(y, m, Weekday::Fri, 3));
        if third > as_of {
            out.push(third);
            monthly += 1;
        }
        (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    }
    out.sort();
    out.dedup();
    out
}

fn strike_step(spot: f64) -> f64 {
    match spot {
        s if s < 25.0 => 0.5,
        s if s < 100.0 => 1.0,
        s if s < 250.0 => 2.5,
        s if s < 500.0 => 5.0,
        _ => 10.0,
    }
}

fn r2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Annualised volatility of the last 63 daily log returns.
fn realised_vol(bars: &Bars) -> f64 {
    let n = bars.len();
    let from = n.saturating_sub(64);
    let r = engine::stats::log_returns(&bars.close[from..]);
    engine::stats::std_dev(&r).unwrap_or(0.2) * 252f64.sqrt()
}

pub fn add_chain(table: &mut TableBuilder, seed: u64, symbol: &str, bars: &Bars) {
    if bars.len() < 70 {
        return;
    }
    let mut rng: Rng = rng::stream(seed, &format!("options-{symbol}"));
    let as_of = bars.date(bars.len() - 1);
    let spot = bars.close[bars.len() - 1];
    let base_vol = (realised_vol(bars) * rng::uniform(&mut rng, 1.0, 1.3)).clamp(0.08, 1.5);
    let step = strike_step(spot);
    let center = (spot / step).round() * step;
    let popularity = rng::uniform(&mut rng, 0.3, 3.0);
    for exp in expirations(as_of) {
        let dte = (exp - as_of).num_days();
        let years = dte as f64 / 365.0;
        let span = (spot * base_vol * years.sqrt() * 2.5)
            .max(3.0 * step)
            .min(spot * 0.5);
        let count = ((span / step).ceil() as i64).min(20);
        for k in -count..=count {
            let strike = center + k as f64 * step;
            if strike <= 0.0 {
                continue;
            }
            let moneyness = (strike / spot).ln();
            // Put skew: lower strikes carry higher implied volatility.
            let iv = (base_vol
                * (1.0 - 0.9 * moneyness + 1.5 * moneyness * moneyness)
                * (1.0 + 0.05 / (1.0 + 10.0 * years)))
                .clamp(0.05, 3.0);
            for (kind, tag, name) in [
                (OptionKind::Put, 'P', "put"),
                (OptionKind::Call, 'C', "call"),
            ] {
                let g = black_scholes(kind, spot, strike, years, RISK_FREE_RATE, iv);
                let mid = g.price.max(0.01);
                let half = (mid * 0.03).max(0.01) / 2.0 + 0.005;
                let (bid, ask) = (r2((mid - half).max(0.0)), r2(mid + half));
                let last = r2((mid + half * 0.6 * rng::normal(&mut rng)).max(0.01));
                let near = (-(moneyness / 0.1).powi(2)).exp();
                let volume = (popularity * 3000.0 * near * (0.5 + rng::uniform(&mut rng, 0.0, 1.0))
                    / (1.0 + years * 4.0))
                    .round() as i64;
                let oi = (volume as f64 * rng::uniform(&mut rng, 2.0, 12.0)).round() as i64;
                let contract = format!(
                    "{symbol}{}{tag}{:08}",
                    exp.format("%y%m%d"),
                    (strike * 1000.0).round() as i64
                );
                table.push(row![
                    symbol,
                    spot,
                    as_of,
                    exp,
                    name,
                    strike,
                    bid,
                    ask,
                    last,
                    volume,
                    oi,
                    (iv * 10000.0).round() / 10000.0,
                    (g.delta * 10000.0).round() / 10000.0,
                    (g.gamma * 1e6).round() / 1e6,
                    (g.theta / 365.0 * 10000.0).round() / 10000.0,
                    (g.vega / 100.0 * 10000.0).round() / 10000.0,
                    contract,
                ]);
            }
        }
    }
}

/// Distinct underlyings of a chain table.
pub fn underlyings(b: &RecordBatch) -> usize {
    use arrow_array::cast::AsArray;
    let Some(c) = b
        .column_by_name("underlying")
        .and_then(|c| c.as_string_opt::<i32>())
    else {
        return 0;
    };
    c.iter()
        .flatten()
        .collect::<std::collections::HashSet<_>>()
        .len()
}

pub fn finish(table: TableBuilder) -> RecordBatch {
    table.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expirations_move_back_from_holidays() {
        // Third Friday of April 2022 was Good Friday: the expiration is Thursday.
        let e = expirations(NaiveDate::from_ymd_opt(2022, 3, 28).unwrap());
        assert!(
            e.contains(&NaiveDate::from_ymd_opt(2022, 4, 14).unwrap()),
            "{e:?}"
        );
        assert!(!e.contains(&NaiveDate::from_ymd_opt(2022, 4, 15).unwrap()));
        assert!(e.windows(2).all(|w| w[0] < w[1]));
    }
}
