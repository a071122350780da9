//! The smart stock scanner over HTTP.

use api::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::json;
use tests::server::TestServer;

#[tokio::test(flavor = "multi_thread")]
async fn predefined_signals_flat_and_by_category() {
    let (s, _dir) = TestServer::fresh().await;
    let (status, body) = s
        .get(
            "/smart-stock-scanner/get-predefined-signals",
            Some((DEMO_EMAIL, DEMO_PASSWORD)),
        )
        .await;
    assert_eq!(
        (status, &body["code"], &body["msg"]),
        (200, &json!(200), &json!("Predefined signals"))
    );
    let signals = body["data"]["signals"].as_array().unwrap();
    assert_eq!(signals.len(), 37);
    let categories = body["data"]["categories"].as_object().unwrap();
    let mut names: Vec<&str> = categories.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "CPM Pattern",
            "Candlestick Pattern",
            "High/Low Signal",
            "Optix Signal",
            "Technical Indicator",
            "Trend Score"
        ]
    );
    let counts: Vec<usize> = [
        "Technical Indicator",
        "Candlestick Pattern",
        "Optix Signal",
        "CPM Pattern",
        "High/Low Signal",
        "Trend Score",
    ]
    .iter()
    .map(|c| categories[*c].as_array().unwrap().len())
    .collect();
    assert_eq!(counts, vec![8, 4, 7, 8, 8, 2]);
    for name in [
        "MA",
        "Hammer",
        "Optix #7",
        "Triple Tap",
        "Symbol All-Time Low",
        "Trend Score Breakdown",
    ] {
        assert!(signals.iter().any(|x| x["name"] == name), "{name}");
    }
    assert!(
        signals
            .iter()
            .all(|x| x["description"].as_str().is_some_and(|d| !d.is_empty()))
    );
    let (status, body) = s
        .get("/smart-stock-scanner/get-predefined-signals", None)
        .await;
    assert_eq!((status, &body["code"]), (401, &json!(401)));
    s.stop().await;
}
