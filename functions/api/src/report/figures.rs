//! The metrics a result page lists, in one order for every result kind,
//! each labelled and counted as the results glossary says
//! (`services::glossary`, docs/results.md): a page reads each at the field
//! its kind answers it under and shows it in the glossary's unit (a
//! fraction as a percent), whether the JSON is the spec's (percent, `MAX
//! RISK` a positive fall) or own (fractions). `report-common.js`'s
//! `figures` draws them.

use serde::Serialize;
use services::glossary::{self, Kind, Shown};

/// Every page's metrics, in the pages' order; a kind shows those it
/// answers (a single backtest has no turnover, a portfolio no buy and
/// hold of one symbol).
pub const FIGURES: [&str; 27] = [
    "total_return",
    "cagr",
    "sharpe",
    "sortino",
    "annual_volatility",
    "max_drawdown",
    "calmar",
    "drawdown_period",
    "time_in_market",
    "average_exposure",
    "average_position",
    "annual_turnover",
    "total_trades",
    "winning_trades",
    "losing_trades",
    "win_rate",
    "average_win",
    "average_loss",
    "average_trade_return",
    "median_trade_return",
    "trade_return_std",
    "z_score",
    "crowded_out",
    "skipped_trades",
    "buy_hold_return",
    "initial_capital",
    "final_capital",
];

/// The figures against the benchmark, a table of their own.
pub const AGAINST: [&str; 7] = [
    "alpha",
    "beta",
    "tracking_error",
    "information_ratio",
    "up_capture",
    "down_capture",
    "benchmark_return",
];

/// What a page's data carries for its two tables: `metrics` and
/// `relative` (each `{name, label, unit, field, scale}`).
#[derive(Debug, Serialize)]
pub struct Figures {
    pub metrics: Vec<Shown>,
    pub relative: Vec<Shown>,
}

/// The metrics `kind`'s page shows, in the pages' order.
pub fn figures(kind: Kind) -> Figures {
    Figures {
        metrics: glossary::shown(kind, &FIGURES),
        relative: glossary::shown(kind, &AGAINST),
    }
}

/// Metric `name` as a value of its own (a walk-forward window's `score`,
/// in the glossary's unit): its label and unit, read at `field`.
pub fn metric(name: &str, field: &'static str) -> Option<Shown> {
    glossary::metric_entry(name).map(|e| Shown {
        name: e.name,
        label: e.label,
        unit: e.unit.as_str(),
        field,
        scale: 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &[Shown]) -> Vec<&str> {
        s.iter().map(|m| m.name).collect()
    }

    #[test]
    fn every_name_is_the_glossary_s_and_listed_once() {
        let all: Vec<&str> = FIGURES.iter().chain(&AGAINST).copied().collect();
        for n in &all {
            assert!(glossary::metric_entry(n).is_some(), "{n}");
        }
        let distinct: std::collections::BTreeSet<&&str> = all.iter().collect();
        assert_eq!(distinct.len(), all.len());
    }

    /// Each kind's page lists what its JSON answers, in the one order; the
    /// portfolio page's list is the one it had.
    #[test]
    fn each_kind_shows_what_it_answers_in_one_order() {
        let p = figures(Kind::Portfolio);
        assert_eq!(
            names(&p.metrics),
            [
                "total_return",
                "cagr",
                "sharpe",
                "sortino",
                "annual_volatility",
                "max_drawdown",
                "calmar",
                "drawdown_period",
                "time_in_market",
                "average_exposure",
                "annual_turnover",
                "total_trades",
                "winning_trades",
                "losing_trades",
                "win_rate",
                "average_win",
                "average_loss",
                "crowded_out",
                "initial_capital",
                "final_capital",
            ]
        );
        assert_eq!(names(&p.relative), AGAINST);
        let b = figures(Kind::Backtest);
        assert_eq!(
            names(&b.metrics),
            [
                "total_return",
                "cagr",
                "sharpe",
                "sortino",
                "annual_volatility",
                "max_drawdown",
                "calmar",
                "drawdown_period",
                "time_in_market",
                "total_trades",
                "winning_trades",
                "losing_trades",
                "win_rate",
                "average_win",
                "average_loss",
                "buy_hold_return",
                "initial_capital",
                "final_capital",
            ]
        );
        assert_eq!(names(&b.relative), ["benchmark_return"]);
        assert_eq!(
            (b.metrics[0].label, b.metrics[0].field, b.metrics[0].scale),
            ("Total Return", "Total Return (%)", 100.0)
        );
        let s = figures(Kind::ScannerBacktest);
        assert_eq!(
            names(&s.metrics),
            [
                "total_return",
                "max_drawdown",
                "time_in_market",
                "average_position",
                "total_trades",
                "winning_trades",
                "losing_trades",
                "win_rate",
                "average_win",
                "average_loss",
                "average_trade_return",
                "median_trade_return",
                "trade_return_std",
                "z_score",
                "skipped_trades",
            ]
        );
        assert_eq!(names(&s.relative), ["benchmark_return"]);
        let dd = &s.metrics[1];
        assert_eq!(
            (dd.label, dd.field, dd.scale),
            ("Max Drawdown", "MAX RISK", -100.0)
        );
        let w = figures(Kind::WalkForward);
        assert_eq!(
            names(&w.metrics),
            ["total_return", "cagr", "sharpe", "max_drawdown"]
        );
        assert!(w.relative.is_empty());
        let row = figures(Kind::BatchRow);
        assert!(row.relative.is_empty());
        assert_eq!(row.metrics.len(), 14);
        assert!(row.metrics.iter().all(|m| m.field != m.name));
    }

    #[test]
    fn a_score_is_its_metric_in_the_glossary_s_unit() {
        let r = metric("total_return", "score").unwrap();
        assert_eq!(
            (r.label, r.unit, r.field, r.scale),
            ("Total Return", "fraction", "score", 1.0)
        );
        assert_eq!(metric("sharpe", "score").unwrap().unit, "ratio");
        assert!(metric("luck", "score").is_none());
    }
}
