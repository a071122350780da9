//! Correlation matrix, rolling correlation and rolling beta equal pandas' to 1e-9.

use e2e::server::market_dir;
use engine::correlation::{matrix, rolling_beta, rolling_corr};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use serde_json::{Value, json};
use std::sync::Arc;

fn close_enough(ours: f64, theirs: &Value, what: &str) {
    match theirs.as_f64() {
        None => assert!(ours.is_nan(), "{what}: pandas has no value, we have {ours}"),
        Some(t) => assert!((ours - t).abs() <= 1e-9, "{what}: {ours} vs pandas {t}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn correlation_and_beta_equal_pandas() {
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(market_dir())));
    let start = chrono::NaiveDate::from_ymd_opt(2006, 1, 1);
    let symbols = ["SPX", "AAPL", "TLT", "GLD", "XLK", "HSI"];
    let mut columns: Vec<Vec<f64>> = Vec::new();
    for s in symbols {
        let b = md
            .bars(s, engine::Frequency::Daily, start, None)
            .await
            .unwrap();
        columns.push(engine::stats::returns(&b.close));
    }
    let n = columns.iter().map(Vec::len).min().unwrap();
    let cols: Vec<&[f64]> = columns.iter().map(|c| &c[c.len() - n..]).collect();
    for window in [21, 63] {
        let named: Vec<Value> = symbols
            .iter()
            .zip(&cols)
            .map(|(s, c)| json!([s, c]))
            .collect();
        let r = e2e::reference::run(
            "pandas_correlation.py",
            &json!({"columns": named, "window": window}),
        );
        let m = matrix(&cols);
        for i in 0..symbols.len() {
            for j in 0..symbols.len() {
                close_enough(
                    m[i][j],
                    &r["matrix"][i][j],
                    &format!("corr {}-{}", symbols[i], symbols[j]),
                );
            }
        }
        for (k, s) in symbols.iter().enumerate().skip(1) {
            let corr = rolling_corr(cols[k], cols[0], window);
            let beta = rolling_beta(cols[k], cols[0], window);
            for i in 0..n {
                close_enough(
                    corr[i],
                    &r["rolling_corr"][s][i],
                    &format!("rolling corr {s} [{i}] w{window}"),
                );
                close_enough(
                    beta[i],
                    &r["rolling_beta"][s][i],
                    &format!("rolling beta {s} [{i}] w{window}"),
                );
            }
        }
    }
}
