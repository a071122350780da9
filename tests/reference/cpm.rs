//! The pattern matcher over HTTP equals stumpy's MASS: for Customize scans
//! on two symbols and two template lengths, every window's `Corr` equals
//! 100 x (1 - d^2 / 2m) from `stumpy.mass` on the same closes to 1e-9, and
//! the match lists (best first, with and without overlap exclusion) are
//! identical.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use tests::server::TestServer;

async fn scan(server: &TestServer, body: &Value) -> Value {
    let resp = reqwest::Client::new()
        .post(server.url("/cpm/scan"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn customize_scans_equal_stumpy_mass() {
    let (server, _dir) = TestServer::fresh().await;
    let md = server.state.market.clone();
    let stock = super::analytics::stocks(md.as_ref(), 1).await.remove(0);
    // (what, the scan's body, the reference case)
    let mut cases = Vec::new();
    for symbol in ["SPX", stock.as_str()] {
        let (dates, closes) = super::analytics::closes(md.as_ref(), symbol).await;
        // A month and a quarter of sessions as templates.
        for (start, end) in [("2015-03-02", "2015-03-27"), ("2021-05-03", "2021-07-30")] {
            let a = dates.iter().position(|d| d.as_str() >= start).unwrap();
            let b = dates.iter().rposition(|d| d.as_str() <= end).unwrap();
            for (min_corr, exclude_overlap) in [(0, false), (60, true), (80, true)] {
                cases.push((
                    format!(
                        "{symbol} {start}..{end} corr_per {min_corr} exclude {exclude_overlap}"
                    ),
                    json!({"symbol": symbol, "corr_per": min_corr, "time_in_market": 10,
                           "start_date": start, "end_date": end, "lookback_period": "All",
                           "exclude_overlap": exclude_overlap as i64}),
                    json!({"closes": closes, "dates": dates, "template": [a, b],
                           "min_corr": min_corr, "exclude_overlap": exclude_overlap}),
                    b - a + 1,
                ));
            }
        }
    }
    let want = tests::reference::run(
        "stumpy_mass.py",
        &json!({"cases": cases.iter().map(|c| c.2.clone()).collect::<Vec<_>>()}),
    );
    let mut compared = 0;
    for ((what, body, case, bars), want) in cases.iter().zip(want.as_array().unwrap()) {
        let ours = scan(&server, body).await;
        let want = want.as_array().unwrap();
        if want.is_empty() {
            assert_eq!(ours["code"], 407, "{what}: {ours}");
            continue;
        }
        assert_eq!(ours["code"], 200, "{what}");
        let got = ours["data"]["patterns"].as_array().unwrap();
        assert_eq!(ours["data"]["count"], got.len());
        assert_eq!(got.len(), want.len(), "{what}: matches");
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(
                (&g["StartDate"], &g["EndDate"]),
                (&w["StartDate"], &w["EndDate"]),
                "{what}: match {k}"
            );
            let (x, y) = (g["Corr"].as_f64().unwrap(), w["Corr"].as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-9,
                "{what}: match {k}: {x} vs stumpy {y}"
            );
            assert_eq!(g["BarsNum"], *bars);
            compared += 1;
        }
        if case["min_corr"] == 0 {
            // Every window that is not negatively correlated: most of the
            // profile but for the template's own bars.
            let sessions = case["dates"].as_array().unwrap().len();
            assert!(got.len() > sessions / 4, "{what}: {}", got.len());
        }
    }
    assert!(compared > 10_000, "{compared} windows compared");
    server.stop().await;
}
