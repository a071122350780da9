//! Screens against pandas: moving averages, month averages, hedger
//! z-scores, dividend performance and the ideas' selection, on the sample data.

use serde_json::{Value, json};
use services::analytics::screens::{self, ScreenParams};
use tests::server::market_dir;

fn same(ours: &Value, theirs: &Value, what: &str) {
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "{what}: {a} vs {b}"
            );
        }
        _ => assert_eq!(ours, theirs, "{what}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn screens_equal_pandas() {
    use platform::marketdata::{LocalDir, ParquetMarketData};
    let md = ParquetMarketData::new(std::sync::Arc::new(LocalDir::new(market_dir())));
    // A session with ideas on both sides in the sample set.
    let date = "2026-11-12";
    let want = tests::reference::run("screens.py", &json!({"dir": market_dir(), "date": date}));
    let mut compared = 0;
    for (key, theirs) in want.as_object().unwrap() {
        let q = ScreenParams {
            key: Some(key.clone()),
            date: Some(date.into()),
        }
        .validate()
        .unwrap();
        let ours = serde_json::to_value(screens::screen(&md, &q).await.unwrap().data).unwrap();
        let (ours, theirs) = (ours.as_array().unwrap(), theirs.as_array().unwrap());
        assert_eq!(ours.len(), theirs.len(), "{key}: {ours:?} vs {theirs:?}");
        assert!(!theirs.is_empty(), "{key} lists something");
        for (a, b) in ours.iter().zip(theirs) {
            for (k, v) in b.as_object().unwrap() {
                same(&a[k], v, &format!("{key} {} {k}", b["symbol"]));
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "{compared}");
}
