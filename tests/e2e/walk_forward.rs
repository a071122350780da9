//! A batch's walk-forward over HTTP: settings checked and named when wrong;
//! rolling and anchored windows; strategies on different bars give a note,
//! not a failed batch.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::time::Duration;
use tests::server::{TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

fn strategy(symbol: &str) -> Value {
    json!({"symbol": symbol, "start_date": "2012-01-03", "risk_control": "//21",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
            "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": "20"}}},
        "exit": {"rule_type": "RiskControlOnly"}})
}

async fn walk(s: &TestServer, body: &Value) -> Value {
    let (status, sub) = s.post("/backtest/batch", DEMO, body).await;
    assert_eq!(status, 202, "{sub}");
    let path = format!("/backtest/batch/{}", sub["task_id"].as_str().unwrap());
    assert!(
        eventually(Duration::from_secs(120), || async {
            s.get(&path, DEMO).await.1["status"] == "SUCCESS"
        })
        .await
    );
    let done = s.get(&path, DEMO).await.1;
    done["walk_forward"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn walk_forward_windows_roll_or_anchor_and_mixed_bars_are_noted() {
    let (s, _dir) = TestServer::fresh().await;
    let grid = json!({"entry.condition.rule.period": ["10", "20", "50", "100"], "risk_control": ["//10", "//21"]});
    for (settings, field) in [
        (
            json!({"in_sample": 1, "out_of_sample": 21}),
            "walk_forward.in_sample",
        ),
        (
            json!({"in_sample": 252, "out_of_sample": 0}),
            "walk_forward.out_of_sample",
        ),
        (
            json!({"in_sample": 252, "out_of_sample": 21, "metric": "luck"}),
            "walk_forward",
        ),
        (
            json!({"in_sample": 252, "out_of_sample": 21, "step": 5}),
            "walk_forward",
        ),
        (json!({"out_of_sample": 21}), "walk_forward"),
    ] {
        let body = json!({"strategy": strategy("SPX"), "grid": grid, "walk_forward": settings});
        let (status, answer) = s.post("/backtest/batch", DEMO, &body).await;
        assert_eq!(status, 400, "{settings}: {answer}");
        assert!(answer.to_string().contains(field), "{field}: {answer}");
    }

    let rolling = walk(
        &s,
        &json!({"strategy": strategy("SPX"), "grid": grid,
        "walk_forward": {"in_sample": 504, "out_of_sample": 126, "metric": "calmar"}}),
    )
    .await;
    let anchored = walk(&s, &json!({"strategy": strategy("SPX"), "grid": grid,
        "walk_forward": {"in_sample": 504, "out_of_sample": 126, "metric": "calmar", "anchored": true}})).await;
    let (r, a) = (
        rolling["windows"].as_array().unwrap(),
        anchored["windows"].as_array().unwrap(),
    );
    assert!(r.len() >= 10 && r.len() == a.len(), "{rolling}");
    assert_eq!(rolling["notes"], json!([]));
    // The same out-of-sample windows; anchored in-sample windows all start
    // at the first bar, rolling ones move with them.
    for (x, y) in r.iter().zip(a) {
        assert_eq!(x["out_of_sample_start"], y["out_of_sample_start"]);
        assert_eq!(y["in_sample_start"], a[0]["in_sample_start"]);
    }
    assert_ne!(r[1]["in_sample_start"], r[0]["in_sample_start"]);
    // The first window is the same in both modes.
    assert_eq!(r[0], a[0]);
    // Each pick's grid values are its row's; the equity covers every
    // out-of-sample bar once, in order.
    let periods = ["10", "20", "50", "100"];
    for w in r {
        let k = w["best_index"].as_u64().unwrap() as usize;
        assert_eq!(w["params"]["entry.condition.rule.period"], periods[k / 2]);
    }
    let eq = rolling["equity"].as_array().unwrap();
    assert_eq!(eq[0]["time"], r[0]["out_of_sample_start"]);
    assert_eq!(
        eq.last().unwrap()["time"],
        r.last().unwrap()["out_of_sample_end"]
    );
    assert!(
        eq.windows(2)
            .all(|p| p[0]["time"].as_str() < p[1]["time"].as_str())
    );
    let compounded: f64 = r
        .iter()
        .map(|w| 1.0 + w["out_of_sample_return"].as_f64().unwrap())
        .product();
    let end = eq.last().unwrap()["equity"].as_f64().unwrap();
    assert!(
        (end - compounded).abs() < 1e-9 * compounded,
        "{end} vs {compounded}"
    );
    // The stitched run's return and drawdown are fractions of that equity.
    let stitched = rolling["total_return"].as_f64().unwrap();
    assert!(
        (stitched - (end - 1.0)).abs() < 1e-12,
        "{stitched} vs {end}"
    );
    let (mut peak, mut deepest) = (f64::MIN, 0.0f64);
    for p in eq {
        let e = p["equity"].as_f64().unwrap();
        peak = peak.max(e);
        deepest = deepest.min(e / peak - 1.0);
    }
    assert_eq!(rolling["max_drawdown"].as_f64().unwrap(), deepest);

    // Two symbols: the batch runs, the walk-forward says why it has no windows.
    let mixed = walk(
        &s,
        &json!({"strategies": [strategy("SPX"), strategy("NDX")],
        "walk_forward": {"in_sample": 504, "out_of_sample": 126}}),
    )
    .await;
    assert_eq!(mixed["windows"], json!([]), "{mixed}");
    assert!(
        mixed["notes"][0]
            .as_str()
            .unwrap()
            .contains("different bars"),
        "{mixed}"
    );
    s.stop().await;
}
