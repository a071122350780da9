//! The Monte Carlo bands equal numpy's on the same draws
//! (`monte_carlo_reference.py`), to 1e-9: a levered SMA crossover on
//! backtesting.py's GOOG bars, its trades drawn with replacement and its
//! bar returns in circular blocks, 2,000 paths each; every draw's final
//! equity and every band (CAGR, maximum drawdown, final equity and the
//! fan's points) compared. The draws themselves come from the seed alone.

use engine::backtest::monte_carlo::{Plan, Resampling, bands, draw, simulate};
use engine::backtest::{Direction, RiskControl, Settings, TradePrice, bar_returns, run};
use engine::indicators::sma;
use engine::rules::{Op, Target, evaluate};
use serde_json::{Value, json};
use std::io::Write;

const PERCENTILES: [f64; 7] = [1.0, 5.0, 25.0, 50.0, 75.0, 95.0, 99.0];

fn close(ours: &[f64], theirs: &Value, what: &str) {
    let theirs: Vec<f64> = theirs
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {theirs}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(ours.len(), theirs.len(), "{what}");
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "{what}[{i}]: {a} vs {b}"
        );
    }
}

fn file_of(bytes: impl Iterator<Item = [u8; 8]>) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    for b in bytes {
        f.write_all(&b).unwrap();
    }
    f.flush().unwrap();
    f
}

#[test]
fn bands_equal_numpys_on_the_same_draws() {
    let bars = tests::reference::bars_from(&tests::reference::run(
        "sma_cross_backtesting.py",
        &json!({"fast": 10, "slow": 20}),
    ));
    let settings = Settings {
        direction: Direction::Long,
        trade_price: TradePrice::NextOpen,
        capital_alloc: 1.5,
        commission: 0.001,
        slippage: 0.0005,
        risk: RiskControl::default(),
        bars_per_year: 252.0,
        start: 0,
    };
    let (f, s) = (sma(&bars.close, 10), sma(&bars.close, 30));
    let entry = evaluate(&f, Op::CrossAbove, &Target::Series(s.clone()));
    let exit = evaluate(&f, Op::CrossBelow, &Target::Series(s));
    let report = run(&bars, &entry, &exit, &settings);
    let trades: Vec<f64> = report
        .trades
        .iter()
        .map(|t| 1.0 + settings.capital_alloc * t.ret)
        .collect();
    let mut returns = Vec::new();
    bar_returns(&bars, &report.trades, &settings, &mut returns);
    let returns: Vec<f64> = returns.iter().map(|r| 1.0 + r).collect();
    let years = (bars.date(bars.len() - 1) - bars.date(0)).num_days() as f64 / 365.25;
    assert!(trades.len() > 30, "{}", trades.len());

    for (name, growth, how) in [
        ("trades", &trades, Resampling::Independent),
        ("returns", &returns, Resampling::Blocks(21)),
    ] {
        let plan = Plan {
            how,
            draws: 2_000,
            seed: 20_261_126,
            years,
            max_points: 100,
        };
        let sim = simulate(growth, &plan, &|| true).expect("not stopped");
        let ours = bands(&sim, &PERCENTILES);
        let mut picks = Vec::new();
        let picked = (0..plan.draws as u64).flat_map(|d| {
            draw(growth.len(), how, plan.seed, d, &mut picks);
            picks.iter().map(|i| *i as u32).collect::<Vec<_>>()
        });
        let mut picks_file = tempfile::NamedTempFile::new().unwrap();
        for i in picked {
            picks_file.write_all(&i.to_le_bytes()).unwrap();
        }
        picks_file.flush().unwrap();
        let growth_file = file_of(growth.iter().map(|g| g.to_le_bytes()));
        let theirs = tests::reference::run(
            "monte_carlo_reference.py",
            &json!({"growth": growth_file.path(), "picks": picks_file.path(),
                "draws": plan.draws, "length": growth.len(), "years": years,
                "points": sim.points, "percentiles": PERCENTILES}),
        );
        let finals: Vec<f64> = sim.outcomes.iter().map(|o| o.final_equity).collect();
        close(
            &finals,
            &theirs["finals"],
            &format!("{name}: each draw's final equity"),
        );
        close(
            &ours.final_equity,
            &theirs["final_equity"],
            &format!("{name}: final equity"),
        );
        close(
            &ours.max_drawdown,
            &theirs["max_drawdown"],
            &format!("{name}: max drawdown"),
        );
        close(&ours.cagr, &theirs["cagr"], &format!("{name}: CAGR"));
        for (j, band) in ours.fan.iter().enumerate() {
            close(
                band,
                &theirs["fan"][j],
                &format!("{name}: fan P{}", PERCENTILES[j]),
            );
        }
        println!(
            "{name}: {} steps, 2,000 draws; CAGR P5/P50/P95 {:.2}/{:.2}/{:.2} %",
            growth.len(),
            ours.cagr[1] * 100.0,
            ours.cagr[3] * 100.0,
            ours.cagr[5] * 100.0
        );
    }
}
