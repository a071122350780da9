//! A portfolio's figures from its equity curve, round trips and a
//! benchmark's closes: the single backtest's metrics, defined the same way
//! (per-bar returns, sample deviation, calendar-year CAGR), and the
//! benchmark-relative ones as empyrical and quantstats define them.
//!
//! Every return, rate and share is a fraction (0.05 is 5 %); whatever
//! answers them in percent (a batch row) scales them at its edge.

use super::{Outcome, RoundTrip};
use crate::stats::{mean, std_dev};
use chrono::NaiveDate;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metrics {
    /// Fractions.
    pub total_return: f64,
    pub cagr: f64,
    pub sharpe: f64,
    pub sortino: f64,
    /// Annualised sample deviation of per-bar returns, a fraction.
    pub annual_volatility: f64,
    /// A fraction (negative or 0).
    pub max_drawdown: f64,
    pub calmar: f64,
    /// Longest stretch, in bars, below a previous peak.
    pub drawdown_period: usize,
    /// The share of bars with a position open at the close.
    pub time_in_market: f64,
    /// Mean of the positions' value over the account's.
    pub average_exposure: f64,
    /// One-way turnover a year: half the value traded over the mean equity,
    /// per calendar year.
    pub annual_turnover: f64,
    pub total_trades: usize,
    /// Round trips with a profit, and with a loss.
    pub winning_trades: usize,
    pub losing_trades: usize,
    /// The share of round trips with a profit.
    pub win_rate: f64,
    /// Mean return of the winning (losing) round trips.
    pub average_win: f64,
    pub average_loss: f64,
}

/// Against the benchmark, on the bars both have (returns of the portfolio's
/// bars with the benchmark's close on or before each).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Relative {
    /// empyrical's `alpha`: (1 + mean of r - beta b) ^ bars_per_year - 1.
    pub alpha: f64,
    pub beta: f64,
    /// Annualised sample deviation of r - b.
    pub tracking_error: f64,
    /// Mean of r - b over its sample deviation, annualised (quantstats'
    /// `information_ratio` times the root of the bars per year).
    pub information_ratio: f64,
    /// empyrical's `up_capture` and `down_capture`: the annualised return on
    /// the benchmark's up (down) bars over the benchmark's on them.
    pub up_capture: f64,
    pub down_capture: f64,
    /// The benchmark's change over the window, a fraction.
    pub benchmark_return: f64,
}

fn returns(equity: &[f64]) -> Vec<f64> {
    equity.windows(2).map(|w| w[1] / w[0] - 1.0).collect()
}

fn years(dates: &[NaiveDate]) -> f64 {
    match (dates.first(), dates.last()) {
        (Some(a), Some(b)) => (*b - *a).num_days() as f64 / 365.25,
        _ => 0.0,
    }
}

/// `dates` are the window's, one per equity value.
pub fn metrics(out: &Outcome, capital: f64, dates: &[NaiveDate], bars_per_year: f64) -> Metrics {
    let eq = &out.equity;
    let Some(&last) = eq.last() else {
        return Metrics::default();
    };
    let r = returns(eq);
    let annual = bars_per_year.sqrt();
    let y = years(dates);
    let growth = last / capital;
    let cagr = if y > 0.0 && growth > 0.0 {
        growth.powf(1.0 / y) - 1.0
    } else {
        0.0
    };
    let m = mean(&r).unwrap_or(0.0);
    let sd = std_dev(&r);
    let sharpe = match sd {
        Some(sd) if sd > 0.0 => m / sd * annual,
        _ => 0.0,
    };
    let downside = if r.is_empty() {
        0.0
    } else {
        (r.iter().map(|x| x.min(0.0).powi(2)).sum::<f64>() / r.len() as f64).sqrt()
    };
    let sortino = if downside > 0.0 {
        m / downside * annual
    } else {
        0.0
    };
    let (mut peak, mut max_dd, mut run, mut longest) = (capital, 0.0f64, 0usize, 0usize);
    for &e in eq {
        if e >= peak {
            peak = e;
            run = 0;
        } else {
            max_dd = max_dd.min(e / peak - 1.0);
            run += 1;
            longest = longest.max(run);
        }
    }
    let in_market = out.exposure.iter().filter(|&&x| x != 0.0).count();
    let exposure: Vec<f64> = out.exposure.iter().zip(eq).map(|(x, e)| x / e).collect();
    let traded: f64 = out.traded.iter().sum();
    let mean_equity = mean(eq).unwrap_or(0.0);
    let trips: Vec<&RoundTrip> = out.trips.iter().collect();
    let rets: Vec<f64> = trips.iter().map(|t| t.ret()).collect();
    let wins: Vec<f64> = rets.iter().copied().filter(|x| *x > 0.0).collect();
    let losses: Vec<f64> = rets.iter().copied().filter(|x| *x < 0.0).collect();
    Metrics {
        total_return: growth - 1.0,
        cagr,
        sharpe,
        sortino,
        annual_volatility: sd.unwrap_or(0.0) * annual,
        max_drawdown: max_dd,
        calmar: if max_dd < 0.0 { cagr / -max_dd } else { 0.0 },
        drawdown_period: longest,
        time_in_market: in_market as f64 / eq.len() as f64,
        average_exposure: mean(&exposure).unwrap_or(0.0),
        annual_turnover: if y > 0.0 && mean_equity > 0.0 {
            traded / 2.0 / mean_equity / y
        } else {
            0.0
        },
        total_trades: trips.len(),
        winning_trades: wins.len(),
        losing_trades: losses.len(),
        win_rate: if rets.is_empty() {
            0.0
        } else {
            wins.len() as f64 / rets.len() as f64
        },
        average_win: mean(&wins).unwrap_or(0.0),
        average_loss: mean(&losses).unwrap_or(0.0),
    }
}

/// The benchmark's close on or before each date (NaN before its first).
pub fn aligned(bench_dates: &[NaiveDate], bench_close: &[f64], dates: &[NaiveDate]) -> Vec<f64> {
    let mut j = 0;
    dates
        .iter()
        .map(|d| {
            while j < bench_dates.len() && bench_dates[j] <= *d {
                j += 1;
            }
            if j == 0 { f64::NAN } else { bench_close[j - 1] }
        })
        .collect()
}

fn annual_return(r: &[f64], bars_per_year: f64) -> f64 {
    if r.is_empty() {
        return f64::NAN;
    }
    let grown: f64 = r.iter().map(|x| 1.0 + x).product();
    grown.powf(bars_per_year / r.len() as f64) - 1.0
}

/// Benchmark-relative figures of `equity` against `bench` (closes aligned
/// to the same bars); returns where either is missing are left out.
pub fn relative(equity: &[f64], bench: &[f64], bars_per_year: f64) -> Relative {
    let (mut r, mut b) = (Vec::new(), Vec::new());
    for i in 1..equity.len().min(bench.len()) {
        let (x, y) = (
            equity[i] / equity[i - 1] - 1.0,
            bench[i] / bench[i - 1] - 1.0,
        );
        if x.is_finite() && y.is_finite() {
            r.push(x);
            b.push(y);
        }
    }
    let first = bench.iter().position(|x| x.is_finite());
    let benchmark_return = match (first, bench.last()) {
        (Some(i), Some(l)) if l.is_finite() => l / bench[i] - 1.0,
        _ => 0.0,
    };
    if r.len() < 2 {
        return Relative {
            benchmark_return,
            ..Relative::default()
        };
    }
    let mb = mean(&b).unwrap_or(0.0);
    let cov = r.iter().zip(&b).map(|(x, y)| x * (y - mb)).sum::<f64>() / r.len() as f64;
    let var = b.iter().map(|y| (y - mb).powi(2)).sum::<f64>() / b.len() as f64;
    let beta = if var > 0.0 { cov / var } else { 0.0 };
    let alpha_mean = r.iter().zip(&b).map(|(x, y)| x - beta * y).sum::<f64>() / r.len() as f64;
    let active: Vec<f64> = r.iter().zip(&b).map(|(x, y)| x - y).collect();
    let sd = std_dev(&active).unwrap_or(0.0);
    let annual = bars_per_year.sqrt();
    let pick = |up: bool| -> (Vec<f64>, Vec<f64>) {
        r.iter()
            .zip(&b)
            .filter(|(_, y)| if up { **y > 0.0 } else { **y < 0.0 })
            .map(|(x, y)| (*x, *y))
            .unzip()
    };
    let capture = |up: bool| {
        let (x, y) = pick(up);
        let (rx, ry) = (
            annual_return(&x, bars_per_year),
            annual_return(&y, bars_per_year),
        );
        if ry != 0.0 && rx.is_finite() && ry.is_finite() {
            rx / ry
        } else {
            0.0
        }
    };
    Relative {
        alpha: (1.0 + alpha_mean).powf(bars_per_year) - 1.0,
        beta,
        tracking_error: sd * annual,
        information_ratio: if sd > 0.0 {
            mean(&active).unwrap_or(0.0) / sd * annual
        } else {
            0.0
        },
        up_capture: capture(true),
        down_capture: capture(false),
        benchmark_return,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::portfolio::ExitReason;

    fn trip(cost: f64, sold: f64) -> RoundTrip {
        RoundTrip {
            symbol: 0,
            entry_signal_bar: 0,
            entry_bar: 0,
            entry_price: 1.0,
            units: 1.0,
            bought: cost,
            cost,
            sold,
            exit_bar: Some(1),
            exit_price: 1.0,
            reason: ExitReason::Signal,
            fees: 0.0,
            bars_held: 1,
        }
    }

    #[test]
    fn every_return_rate_and_share_is_a_fraction_by_hand() {
        let out = Outcome {
            equity: vec![100.0, 90.0, 121.0],
            cash: vec![50.0, 45.0, 121.0],
            exposure: vec![50.0, 45.0, 0.0],
            traded: vec![50.0, 0.0, 60.0],
            trips: vec![trip(100.0, 110.0), trip(50.0, 45.0), trip(20.0, 20.0)],
            ..Outcome::default()
        };
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        let dates = [d("2020-01-01"), d("2020-06-01"), d("2021-01-01")];
        let m = metrics(&out, 100.0, &dates, 252.0);
        let years = 366.0 / 365.25;
        let close = |a: f64, b: f64| assert!((a - b).abs() <= 1e-12 * b.abs(), "{a} vs {b}");
        close(m.total_return, 0.21);
        close(m.cagr, 1.21f64.powf(1.0 / years) - 1.0);
        close(m.max_drawdown, -0.1);
        close(m.calmar, m.cagr / 0.1);
        close(m.time_in_market, 2.0 / 3.0);
        close(m.average_exposure, (0.5 + 0.5 + 0.0) / 3.0);
        close(m.annual_turnover, 110.0 / 2.0 / (311.0 / 3.0) / years);
        // Per-bar returns -0.1 and 0.3444..: their sample deviation, annualised.
        let r: [f64; 2] = [-0.1, 121.0 / 90.0 - 1.0];
        let mean = (r[0] + r[1]) / 2.0;
        let sd = (((r[0] - mean).powi(2) + (r[1] - mean).powi(2)) / 1.0).sqrt();
        close(m.annual_volatility, sd * 252f64.sqrt());
        // One winner (+10 %), one loser (-10 %), one even.
        assert_eq!(
            (m.total_trades, m.winning_trades, m.losing_trades),
            (3, 1, 1)
        );
        close(m.win_rate, 1.0 / 3.0);
        close(m.average_win, 0.1);
        close(m.average_loss, -0.1);
        // The benchmark's change, a fraction.
        let rel = relative(&out.equity, &[200.0, 190.0, 230.0], 252.0);
        close(rel.benchmark_return, 0.15);
    }
}
