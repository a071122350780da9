//! A portfolio's figures from its equity curve, round trips and a
//! benchmark's closes: the single backtest's metrics, defined the same way
//! (per-bar returns, sample deviation, calendar-year CAGR), and the
//! benchmark-relative ones as empyrical and quantstats define them.

use super::{Outcome, RoundTrip};
use crate::stats::{mean, std_dev};
use chrono::NaiveDate;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metrics {
    /// Percent.
    pub total_return: f64,
    pub cagr: f64,
    pub sharpe: f64,
    pub sortino: f64,
    /// Annualised sample deviation of per-bar returns, percent.
    pub annual_volatility: f64,
    /// Percent (negative or 0).
    pub max_drawdown: f64,
    pub calmar: f64,
    /// Longest stretch, in bars, below a previous peak.
    pub drawdown_period: usize,
    /// Percent of bars with a position open at the close.
    pub time_in_market: f64,
    /// Mean of the positions' value over the account's, percent.
    pub average_exposure: f64,
    /// One-way turnover a year: half the value traded over the mean equity,
    /// per calendar year.
    pub annual_turnover: f64,
    pub total_trades: usize,
    pub win_rate: f64,
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
    /// The benchmark's change over the window, percent.
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
    let pct = |x: f64| x * 100.0;
    Metrics {
        total_return: pct(growth - 1.0),
        cagr: pct(cagr),
        sharpe,
        sortino,
        annual_volatility: pct(sd.unwrap_or(0.0) * annual),
        max_drawdown: pct(max_dd),
        calmar: if max_dd < 0.0 { cagr / -max_dd } else { 0.0 },
        drawdown_period: longest,
        time_in_market: pct(in_market as f64 / eq.len() as f64),
        average_exposure: pct(mean(&exposure).unwrap_or(0.0)),
        annual_turnover: if y > 0.0 && mean_equity > 0.0 {
            pct(traded / 2.0 / mean_equity / y)
        } else {
            0.0
        },
        total_trades: trips.len(),
        win_rate: if rets.is_empty() {
            0.0
        } else {
            pct(wins.len() as f64 / rets.len() as f64)
        },
        average_win: pct(mean(&wins).unwrap_or(0.0)),
        average_loss: pct(mean(&losses).unwrap_or(0.0)),
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
        (Some(i), Some(l)) if l.is_finite() => (l / bench[i] - 1.0) * 100.0,
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
