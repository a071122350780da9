//! What a finished portfolio's charts draw (`GET /backtest/portfolio/{id}/chart`
//! and its report page): the equity against the benchmark, the drawdown,
//! the month-end weights of the most held symbols as layers of a stacked
//! area, and each symbol's contribution. Built from the stored answer.

use super::answers::{Contribution, PortfolioResult};
use serde::Serialize;
use std::collections::BTreeMap;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Symbols the weights chart shows one by one; the rest are `others`.
pub const LAYERS: usize = 10;

/// The series of a portfolio's charts, one value per session of its window.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PortfolioChart {
    pub date: Vec<String>,
    pub equity: Vec<f64>,
    /// The benchmark scaled to the initial capital (`null` before its first close).
    pub benchmark: Vec<Option<f64>>,
    /// Below the highest equity so far (the initial capital counting as
    /// one), a fraction, 0 or negative (docs/results.md).
    pub drawdown: Vec<f64>,
    pub weights: WeightLayers,
    /// Each traded symbol's profit, largest first.
    pub contributions: Vec<Contribution>,
}

/// Month-end weights as layers: the `LAYERS` symbols with the largest
/// weight summed over the month ends, largest first, then `others` (the
/// rest together) when there is a rest.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct WeightLayers {
    pub date: Vec<String>,
    pub symbols: Vec<String>,
    /// Per symbol (in `symbols`' order), its weight at each date (0 to 1 of
    /// the account's value).
    pub weight: Vec<Vec<f64>>,
}

/// The chart of a finished portfolio's answer.
pub fn chart(r: &PortfolioResult) -> PortfolioChart {
    let mut peak = r.initial_capital;
    let drawdown = r
        .series
        .equity
        .iter()
        .map(|&e| {
            peak = peak.max(e);
            if peak > 0.0 { e / peak - 1.0 } else { 0.0 }
        })
        .collect();
    PortfolioChart {
        date: r.series.date.clone(),
        equity: r.series.equity.clone(),
        benchmark: r.series.benchmark.clone(),
        drawdown,
        weights: layers(r),
        contributions: r.contributions.clone(),
    }
}

fn layers(r: &PortfolioResult) -> WeightLayers {
    let mut total: BTreeMap<&str, f64> = BTreeMap::new();
    for at in &r.weights {
        for (s, w) in &at.weights {
            *total.entry(s.as_str()).or_default() += w;
        }
    }
    let mut ranked: Vec<(&str, f64)> = total.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let shown: Vec<&str> = ranked.iter().take(LAYERS).map(|(s, _)| *s).collect();
    let rest = ranked.len() > LAYERS;
    let mut weight: Vec<Vec<f64>> = shown
        .iter()
        .map(|s| {
            r.weights
                .iter()
                .map(|at| at.weights.get(*s).copied().unwrap_or(0.0))
                .collect()
        })
        .collect();
    let mut symbols: Vec<String> = shown.iter().map(|s| s.to_string()).collect();
    if rest {
        weight.push(
            r.weights
                .iter()
                .map(|at| {
                    at.weights
                        .iter()
                        .filter(|(s, _)| !shown.contains(&s.as_str()))
                        .map(|(_, w)| w)
                        .sum()
                })
                .collect(),
        );
        symbols.push("others".into());
    }
    WeightLayers {
        date: r.weights.iter().map(|at| at.date.clone()).collect(),
        symbols,
        weight,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backtest::portfolio::answers::{Relative, Series, WeightsAt};

    fn result(weights: Vec<WeightsAt>, equity: Vec<f64>) -> PortfolioResult {
        let n = equity.len();
        PortfolioResult {
            mode: "weights".into(),
            universe: Vec::new(),
            benchmark: "SPX".into(),
            start_date: String::new(),
            end_date: String::new(),
            initial_capital: 100.0,
            final_capital: *equity.last().unwrap(),
            total_return: 0.0,
            cagr: 0.0,
            sharpe: 0.0,
            sortino: 0.0,
            annual_volatility: 0.0,
            max_drawdown: 0.0,
            calmar: 0.0,
            drawdown_period: 0,
            time_in_market: 0.0,
            average_exposure: 0.0,
            annual_turnover: 0.0,
            total_trades: 0,
            winning_trades: 0,
            losing_trades: 0,
            win_rate: 0.0,
            average_win: 0.0,
            average_loss: 0.0,
            relative: Relative {
                alpha: 0.0,
                beta: 0.0,
                tracking_error: 0.0,
                information_ratio: 0.0,
                up_capture: 0.0,
                down_capture: 0.0,
                benchmark_return: 0.0,
            },
            crowded_out: 0,
            series: Series {
                date: (0..n).map(|k| format!("d{k}")).collect(),
                equity,
                cash: vec![0.0; n],
                exposure: vec![0.0; n],
                traded: vec![0.0; n],
                benchmark: vec![None; n],
            },
            trades: Vec::new(),
            orders: Vec::new(),
            contributions: Vec::new(),
            weights,
            defaults_applied: Default::default(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn drawdown_is_from_the_highest_equity_so_far_the_capital_counting() {
        let c = chart(&result(Vec::new(), vec![90.0, 110.0, 99.0, 120.0]));
        let want = [-0.1, 0.0, 99.0 / 110.0 - 1.0, 0.0];
        for (a, b) in c.drawdown.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
    }

    #[test]
    fn the_most_held_symbols_are_layers_and_the_rest_is_one() {
        // 12 symbols: s0 weighs most, s11 least; two month ends.
        let at = |date: &str, scale: f64| WeightsAt {
            date: date.into(),
            weights: (0..12)
                .map(|k| (format!("s{k:02}"), scale * (12 - k) as f64 / 100.0))
                .collect(),
        };
        let c = chart(&result(vec![at("m1", 1.0), at("m2", 0.5)], vec![100.0]));
        let l = &c.weights;
        assert_eq!(l.date, vec!["m1", "m2"]);
        assert_eq!(l.symbols.len(), LAYERS + 1);
        assert_eq!(l.symbols[0], "s00");
        assert_eq!(l.symbols[LAYERS], "others");
        assert_eq!(l.weight[0], vec![0.12, 0.06]);
        // s10 and s11 together: 2% and 1% of the account at m1.
        assert!((l.weight[LAYERS][0] - 0.03).abs() < 1e-12);
        assert!((l.weight[LAYERS][1] - 0.015).abs() < 1e-12);
        // Every month end's layers sum to its held weight.
        for m in 0..2 {
            let sum: f64 = l.weight.iter().map(|w| w[m]).sum();
            let held: f64 = (0..12).map(|k| (12 - k) as f64 / 100.0).sum::<f64>() * [1.0, 0.5][m];
            assert!((sum - held).abs() < 1e-12);
        }
    }
}
