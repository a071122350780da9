//! The Deflated Sharpe Ratio, the Probabilistic Sharpe Ratio, the expected
//! maximum Sharpe ratio and the PBO by CSCV equal an implementation written
//! from the papers' formulas with numpy and scipy
//! (`overfitting_reference.py`), to 1e-9: on a real-size grid (1,024
//! SMA-crossover strategies on backtesting.py's GOOG bars, S = 16, every one
//! of the 12,870 splits), through the batch service's path (chunk objects in
//! a return store, read back and reduced); and on 40 of them with each
//! split's Sharpe ratios taken from the concatenated returns.

use engine::backtest::{Direction, RiskControl, Settings, TradePrice, equity_curve, run};
use engine::indicators::sma;
use engine::overfitting::{
    BlockSums, block_layout, cscv, expected_max_sharpe, probabilistic_sharpe,
};
use engine::rules::{Op, Target, evaluate};
use platform::returns::ReturnStore;
use serde_json::{Value, json};
use services::backtest::batch::statistics::{self, StatisticsParams, chunk_returns};
use std::io::Write;
use std::sync::Arc;

fn close(ours: f64, theirs: &Value, what: &str) {
    let theirs = theirs
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: {theirs}"));
    assert!(
        (ours - theirs).abs() <= 1e-9 * theirs.abs().max(1.0),
        "{what}: {ours} vs {theirs}"
    );
}

/// Per-bar returns (with their bars' times) of fast/slow SMA crossovers.
fn grid() -> (Arc<Vec<i64>>, Vec<Vec<f64>>) {
    let bars = tests::reference::bars_from(&tests::reference::run(
        "sma_cross_backtesting.py",
        &json!({"fast": 10, "slow": 20}),
    ));
    let settings = Settings {
        direction: Direction::Long,
        trade_price: TradePrice::CurrentClose,
        capital_alloc: 1.0,
        commission: 0.0005,
        slippage: 0.0,
        risk: RiskControl::default(),
        bars_per_year: 252.0,
        start: 0,
    };
    let mut series = Vec::new();
    for fast in 2..34 {
        for slow in (10..74).step_by(2) {
            let (f, s) = (sma(&bars.close, fast), sma(&bars.close, slow));
            let entry = evaluate(&f, Op::CrossAbove, &Target::Series(s.clone()));
            let exit = evaluate(&f, Op::CrossBelow, &Target::Series(s));
            let report = run(&bars, &entry, &exit, &settings);
            let equity = equity_curve(&bars, &report.trades, &settings);
            series.push(equity.windows(2).map(|w| w[1] / w[0] - 1.0).collect());
        }
    }
    let times = bars.time[1..]
        .iter()
        .map(|t| t.and_utc().timestamp())
        .collect();
    (Arc::new(times), series)
}

fn reference(series: &[Vec<f64>], blocks: usize, trials: Option<f64>, direct: bool) -> Value {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for s in series {
        for x in s {
            file.write_all(&x.to_le_bytes()).unwrap();
        }
    }
    file.flush().unwrap();
    tests::reference::run(
        "overfitting_reference.py",
        &json!({"matrix": file.path(), "strategies": series.len(), "observations": series[0].len(),
            "blocks": blocks, "trials": trials, "direct": direct}),
    )
}

fn engine_cscv(series: &[Vec<f64>], blocks: usize) -> engine::overfitting::Pbo {
    let (skip, len) = block_layout(series[0].len(), blocks);
    let mut sums = BlockSums::new(series.len(), blocks, len);
    for (k, s) in series.iter().enumerate() {
        sums.set(k, &s[skip..]);
    }
    cscv(&sums, 2).unwrap()
}

fn same_splits(ours: &engine::overfitting::Pbo, theirs: &Value) {
    assert_eq!(
        ours.logits.len(),
        theirs["splits"].as_u64().unwrap() as usize
    );
    for (k, what) in [
        (&ours.in_sample, "in_sample"),
        (&ours.out_of_sample, "out_of_sample"),
        (&ours.logits, "logits"),
    ] {
        for (i, v) in k.iter().enumerate() {
            close(*v, &theirs[what][i], &format!("{what}[{i}]"));
        }
    }
    assert_eq!(ours.pbo, theirs["pbo"].as_f64().unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn dsr_psr_expected_max_and_pbo_equal_the_papers_formulas_on_a_1024_strategy_grid() {
    let (times, series) = grid();
    assert_eq!(series.len(), 1024);
    // Some pairs trade alike: ties must rank as the reference ranks them.
    let theirs = reference(&series, 16, None, false);

    // The paper's worked example, both ways.
    let ex = &theirs["example"];
    let sr0 = expected_max_sharpe(0.5 / 250.0, 100.0).unwrap();
    close(sr0, &ex["expected_max_sharpe"], "example E[max]");
    let dsr = probabilistic_sharpe(2.5 / 250f64.sqrt(), sr0, 1250, -3.0, 10.0).unwrap();
    close(dsr, &ex["dsr"], "example DSR");
    assert!((dsr - 0.9004).abs() < 5e-5 && (sr0 - 0.1132).abs() < 5e-5);

    // The batch service's path: chunks of 250 reduced on their workers and
    // kept as their reductions alone (a grid's strategies share their
    // bars); and the same chunks kept unreduced, so read back and reduced
    // (the path of chunks whose bars differ): equal to the last bit.
    let dir = tempfile::tempdir().unwrap();
    let store = ReturnStore::new(Arc::new(platform::marketdata::LocalDir::new(dir.path())));
    for first in (0..series.len()).step_by(250) {
        let part: Vec<_> = (first..series.len().min(first + 250))
            .map(|k| (k as u32, times.clone(), series[k].clone()))
            .collect();
        let reduced = chunk_returns(part.clone(), 252.0, 16);
        assert!(reduced.reduced.is_some());
        store
            .put("grid", first, reduced.reduction_only())
            .await
            .unwrap();
        let raw = chunk_returns(part, 252.0, 0);
        store.put("raw", first, raw).await.unwrap();
    }
    let params = StatisticsParams::default();
    let layout = services::backtest::batch::Layout {
        total: series.len(),
        chunk: 250,
    };
    let st = statistics::compute(&store, "grid", layout, &params)
        .await
        .unwrap();
    let from_returns = statistics::compute(&store, "raw", layout, &params)
        .await
        .unwrap();
    assert_eq!(st, from_returns);
    assert_eq!((st.strategies, st.observations), (1024, series[0].len()));
    let d = st.deflated_sharpe.as_ref().unwrap();
    let r = &theirs["deflated"];
    assert_eq!(d.best_index as u64, r["best"].as_u64().unwrap());
    close(d.sharpe, &r["sharpe"], "best Sharpe");
    close(d.sharpe_variance, &r["sharpe_variance"], "V[SR]");
    close(d.skewness, &r["skewness"], "skewness");
    close(d.kurtosis, &r["kurtosis"], "kurtosis");
    close(
        d.expected_max_sharpe,
        &r["expected_max_sharpe"],
        "E[max SR]",
    );
    close(d.probabilistic_sharpe_ratio.unwrap(), &r["psr"], "PSR");
    close(d.deflated_sharpe_ratio.unwrap(), &r["dsr"], "DSR");
    let o = st.overfitting.as_ref().unwrap();
    assert_eq!(o.splits, 12_870);
    assert_eq!(o.skipped as u64, theirs["skipped"].as_u64().unwrap());
    assert_eq!(
        o.block_length as u64,
        theirs["block_length"].as_u64().unwrap()
    );
    assert_eq!(o.pbo, theirs["pbo"].as_f64().unwrap());
    close(o.degradation_slope, &theirs["slope"], "slope");
    close(o.degradation_intercept, &theirs["intercept"], "intercept");
    close(o.degradation_r_squared, &theirs["r_squared"], "R²");
    close(o.probability_of_loss, &theirs["prob_loss"], "P[loss]");
    close(o.mean_logit, &theirs["mean_logit"], "mean logit");
    let counts: Vec<u64> = o.logit_histogram.iter().map(|b| b.count as u64).collect();
    assert_eq!(json!(counts), theirs["histogram"]);
    // Every split, from the engine on the same matrix.
    same_splits(&engine_cscv(&series, 16), &theirs);
    eprintln!(
        "1,024 SMA crossovers on GOOG: best #{} Sharpe {:.3}/yr, E[max] {:.3}/yr, DSR {:.4}, PBO {:.4}",
        d.best_index,
        d.sharpe_annualized,
        d.expected_max_sharpe_annualized,
        d.deflated_sharpe_ratio.unwrap(),
        o.pbo
    );

    // A caller's effective N.
    let theirs = reference(&series, 16, Some(100.0), false);
    let params = StatisticsParams {
        trials: Some(100.0),
        ..params
    };
    store.put_note("grid", "unused", "{}".into()).await.unwrap();
    let st = statistics::compute(&store, "grid", layout, &params)
        .await
        .unwrap();
    let d = st.deflated_sharpe.unwrap();
    close(
        d.expected_max_sharpe,
        &theirs["deflated"]["expected_max_sharpe"],
        "E[max], N = 100",
    );
    close(
        d.deflated_sharpe_ratio.unwrap(),
        &theirs["deflated"]["dsr"],
        "DSR, N = 100",
    );

    // Each split's Sharpe ratios from the concatenated returns themselves.
    let few: Vec<Vec<f64>> = series.iter().step_by(25).take(40).cloned().collect();
    same_splits(&engine_cscv(&few, 16), &reference(&few, 16, None, true));
}
