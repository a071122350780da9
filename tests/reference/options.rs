//! The smart option scanner against an independent recomputation (pyarrow
//! and scipy): the same puts listed, and every figure within 1e-9.

use serde_json::{Value, json};
use services::analytics::options::{self, OptionParams, RATE};
use tests::server::market_dir;

#[tokio::test(flavor = "multi_thread")]
async fn option_scanner_equals_scipy_black_scholes() {
    use platform::marketdata::{LocalDir, ParquetMarketData};
    let md = ParquetMarketData::new(std::sync::Arc::new(LocalDir::new(market_dir())));
    let q = OptionParams {
        limit: Some("5000".into()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    let ours = options::options(&md, &q).await.unwrap();
    let data = ours.data.expect("puts listed");
    assert_eq!(
        data.count,
        data.option_data.len(),
        "all of them on one page"
    );
    let want = tests::reference::run(
        "option_scanner.py",
        &json!({
            "table": market_dir().join(platform::marketdata::layout::table(options::CHAINS)),
            "date": data.as_of_date,
            "rate": RATE,
        }),
    );
    let want = want.as_object().unwrap();
    assert!(want.len() > 100, "{} puts", want.len());
    assert_eq!(data.count, want.len(), "the same puts are listed");
    let (mut low, mut high) = (f64::MAX, f64::MIN);
    for item in &data.option_data {
        let ours = serde_json::to_value(item).unwrap();
        let theirs = &want[&item.ContractSymbol];
        for (field, v) in theirs.as_object().unwrap() {
            match v {
                Value::Number(n) => {
                    let (a, b) = (ours[field].as_f64().unwrap(), n.as_f64().unwrap());
                    assert!(
                        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                        "{} {field}: {a} vs {b}",
                        item.ContractSymbol
                    );
                }
                _ => assert_eq!(&ours[field], v, "{} {field}", item.ContractSymbol),
            }
        }
        low = low.min(item.POP_est);
        high = high.max(item.POP_est);
    }
    assert!(
        low < 75.0 && high > 95.0,
        "a spread of probabilities: {low}-{high}"
    );
    // Best first by cagr, as asked by default.
    assert!(data.option_data.windows(2).all(|w| w[0].cagr >= w[1].cagr));
}
