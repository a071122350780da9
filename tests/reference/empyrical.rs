//! Backtest metrics equal empyrical-reloaded's on the same equity curves:
//! SMA crossovers on backtesting.py's GOOG bars, long and short, with and
//! without costs, fractional and levered allocation, whole and part
//! windows. CAGR and Calmar count calendar years (docs/backtest.md); the
//! reference is asked with the same years.

use chrono::NaiveDate;
use engine::Bars;
use engine::backtest::{Direction, RiskControl, Settings, TradePrice, equity_curve, run};
use engine::indicators::sma;
use engine::rules::{Op, Target, evaluate};
use serde_json::{Value, json};

fn goog() -> Bars {
    let r = tests::reference::run("sma_cross_backtesting.py", &json!({"fast": 10, "slow": 20}));
    let col = |k: &str| -> Vec<f64> {
        r[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let (o, h, l, c, v) = (
        col("open"),
        col("high"),
        col("low"),
        col("close"),
        col("volume"),
    );
    let mut bars = Bars::default();
    for (i, d) in r["dates"].as_array().unwrap().iter().enumerate() {
        let d: NaiveDate = d.as_str().unwrap().parse().unwrap();
        bars.push(
            d.and_hms_opt(0, 0, 0).unwrap(),
            o[i],
            h[i],
            l[i],
            c[i],
            v[i],
        );
    }
    bars
}

#[test]
fn sharpe_sortino_volatility_drawdown_cagr_and_calmar_equal_empyrical() {
    let bars = goog();
    let cases = [
        (10, 20, Direction::Long, 1.0, 0.0, 0.0, 0),
        (5, 30, Direction::Long, 0.5, 0.001, 0.0005, 0),
        (20, 50, Direction::Short, 1.0, 0.0, 0.0, 0),
        (10, 40, Direction::Long, 2.0, 0.0005, 0.0, 100),
        (3, 12, Direction::Short, 0.7, 0.001, 0.001, 250),
    ];
    let mut curves = Vec::new();
    let mut ours = Vec::new();
    for (fast, slow, direction, alloc, commission, slippage, start) in cases {
        let (f, s) = (sma(&bars.close, fast), sma(&bars.close, slow));
        let entry = evaluate(&f, Op::CrossAbove, &Target::Series(s.clone()));
        let exit = evaluate(&f, Op::CrossBelow, &Target::Series(s));
        let settings = Settings {
            direction,
            trade_price: TradePrice::CurrentClose,
            capital_alloc: alloc,
            commission,
            slippage,
            risk: RiskControl::default(),
            bars_per_year: 252.0,
            start,
        };
        let report = run(&bars, &entry, &exit, &settings);
        assert!(
            report.trades.len() > 10,
            "{fast}/{slow}: {} trades",
            report.trades.len()
        );
        let equity = equity_curve(&bars, &report.trades, &settings);
        assert_eq!(equity[0], 1.0, "no position on the window's first bar");
        let years = (bars.date(bars.len() - 1) - bars.date(start)).num_days() as f64 / 365.25;
        curves.push(json!({"equity": equity, "years": years}));
        ours.push(report.metrics);
    }
    let theirs = tests::reference::run(
        "empyrical_metrics.py",
        &json!({"curves": curves, "annualization": 252}),
    );
    for (i, (m, t)) in ours.iter().zip(theirs.as_array().unwrap()).enumerate() {
        let t: &Value = t;
        assert_eq!(
            t["returns"].as_u64().unwrap() as usize,
            curves[i]["equity"].as_array().unwrap().len() - 1
        );
        let pairs = [
            ("Sharpe", m.sharpe, t["sharpe"].as_f64().unwrap()),
            ("Sortino", m.sortino, t["sortino"].as_f64().unwrap()),
            (
                "annual volatility",
                m.annual_volatility,
                t["annual_volatility"].as_f64().unwrap(),
            ),
            (
                "max drawdown %",
                m.max_drawdown,
                100.0 * t["max_drawdown"].as_f64().unwrap(),
            ),
            ("CAGR %", m.cagr, 100.0 * t["cagr"].as_f64().unwrap()),
            ("Calmar", m.calmar, t["calmar"].as_f64().unwrap()),
        ];
        for (name, ours, theirs) in pairs {
            assert!(
                (ours - theirs).abs() <= 1e-12 * theirs.abs().max(1.0),
                "case {i}: {name} {ours} vs empyrical {theirs}"
            );
        }
    }
}
