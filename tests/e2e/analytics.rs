//! Analytics endpoints over HTTP: envelopes, defaults, and every client mistake
//! answered with a 4xx (or a 411 in an HTTP 200) whose message names the field.
//! The numbers themselves are checked against pandas in tests/reference.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use tests::server::TestServer;

const USER: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// Asserts the analytics error envelope: HTTP status, `code`, and a message
/// containing `names`.
fn error(status: u16, body: &Value, http: u16, code: u16, names: &str) {
    assert_eq!(status, http, "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert!(body["data"].is_null(), "{body}");
    let msg = body["msg"].as_str().unwrap_or_default();
    assert!(msg.contains(names), "'{msg}' should name {names}");
}

#[tokio::test(flavor = "multi_thread")]
async fn seasonality_answers_and_refuses_clearly() {
    let (s, _dir) = TestServer::fresh().await;

    // Holidays need no ticker; the list is the 16 names.
    let (status, body) = s.get("/seasonality/get-predefined-holidays", USER).await;
    assert_eq!((status, body["code"].as_u64()), (200, Some(200)));
    assert_eq!(body["data"]["holidays"].as_array().unwrap().len(), 16);

    // Lower-case tickers are accepted; every weekday row has the three fields.
    let (status, body) = s
        .get("/seasonality/performance-by-week?ticker=spx", USER)
        .await;
    assert_eq!(status, 200, "{body}");
    let rows = body["data"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[4]["Weekday"], "Friday");
    assert!(
        rows.iter()
            .all(|r| r["Return"].is_f64() && r["Positive"].is_f64())
    );
    // Day of year: trading days 1-252, each with the four statistics.
    let (_, body) = s
        .get("/seasonality/performance-by-day-of-year?ticker=SPX", USER)
        .await;
    let days = body["data"].as_array().unwrap();
    assert_eq!(days.len(), 252);
    assert_eq!(
        (days[0]["Day"].as_u64(), days[251]["Day"].as_u64()),
        (Some(1), Some(252))
    );
    for r in days {
        let (min, avg, max) = (
            r["MIN"].as_f64().unwrap(),
            r["AVG RET"].as_f64().unwrap(),
            r["MAX"].as_f64().unwrap(),
        );
        assert!(min <= avg && avg <= max, "{r}");
    }
    // Defaults follow the latest data date (2026-11-20): 2006-2026, November 20.
    let (_, body) = s
        .get(
            "/seasonality/performance-around-specific-days?ticker=SPX",
            USER,
        )
        .await;
    assert_eq!(body["data"]["target_date"], "11-20");
    assert_eq!(body["data"]["shift"], 5);
    assert_eq!(body["data"]["data"].as_array().unwrap().len(), 11);
    let (_, body) = s
        .get("/seasonality/one-dollar-curve?ticker=SPX&entry_day=5", USER)
        .await;
    let curve = body["data"]["data"].as_array().unwrap();
    assert_eq!(body["data"]["exit_trading_day"], 68);
    // 21 years held 63 sessions each, the first year's window starting in 2006.
    assert_eq!(curve.len(), 21 * 63);
    assert!(curve[0]["Date"].as_str().unwrap().starts_with("2006-01"));
    // Only the requested features, in the service's order.
    let (_, body) = s
        .get(
            "/seasonality?ticker=SPX&features=one-dollar-curve,performance-by-month",
            USER,
        )
        .await;
    let keys: Vec<&String> = body["data"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["performance-by-month", "one-dollar-curve"]);
    assert_eq!(
        body["data"]["performance-by-month"]["data"][0]["MonthName"],
        "January"
    );

    for (path, names) in [
        ("/seasonality/performance-by-week", "'ticker'"),
        ("/seasonality?features=performance-by-week", "'ticker'"),
        (
            "/seasonality/performance-by-week?ticker=SPX&start_year=abc",
            "'start_year'",
        ),
        (
            "/seasonality/performance-by-week?ticker=SPX&start_year=2020&end_year=2010",
            "'start_year'",
        ),
        (
            "/seasonality/performance-around-holiday?ticker=SPX&holiday_name=Boxing%20Day",
            "'holiday_name'",
        ),
        (
            "/seasonality/performance-around-holiday?ticker=SPX&shift=-1",
            "'shift'",
        ),
        (
            "/seasonality/performance-around-specific-days?ticker=SPX&month=4&day=31",
            "'day'",
        ),
        (
            "/seasonality/performance-around-specific-days?ticker=SPX&month=13",
            "'month'",
        ),
        (
            "/seasonality/performance-by-day-of-single-month?ticker=SPX&target_month=Smarch",
            "'target_month'",
        ),
        (
            "/seasonality/performance-by-day-of-single-month?ticker=SPX&category=weekly",
            "'category'",
        ),
        (
            "/seasonality/one-dollar-curve?ticker=SPX&entry_day=253",
            "'entry_day'",
        ),
        (
            "/seasonality/one-dollar-curve?ticker=SPX&entry_day=20&exit_day=20",
            "'exit_day'",
        ),
        (
            "/seasonality/one-dollar-curve?ticker=SPX&holding_days=0",
            "'holding_days'",
        ),
        (
            "/seasonality?ticker=SPX&features=performance-by-week,by-moon",
            "'by-moon'",
        ),
    ] {
        let (status, body) = s.get(path, USER).await;
        error(status, &body, 400, 400, names);
    }
    for (path, names) in [
        ("/seasonality/performance-by-week?ticker=NOPE", "'NOPE'"),
        ("/seasonality?ticker=NOPE", "'NOPE'"),
        (
            "/seasonality/performance-by-week?ticker=SPX&start_year=1900&end_year=1950",
            "1950",
        ),
        (
            "/seasonality/performance-by-moon?ticker=SPX",
            "'/seasonality/performance-by-moon'",
        ),
    ] {
        let (status, body) = s.get(path, USER).await;
        error(status, &body, 404, 404, names);
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn correlation_codes_and_errors() {
    let (s, _dir) = TestServer::fresh().await;
    let base = json!({
        "benchmark": "SPX",
        "stock_comparison": ["IVV", "TLT"],
        "start_date": "2024-01-01",
        "end_date": "2024-06-30",
    });
    let with = |patch: Value| {
        let mut b = base.clone();
        for (k, v) in patch.as_object().unwrap() {
            if v.is_null() {
                b.as_object_mut().unwrap().remove(k);
            } else {
                b[k] = v.clone();
            }
        }
        b
    };
    let (status, body) = s.post("/symbol_corr", USER, &base).await;
    assert_eq!((status, body["code"].as_u64()), (200, Some(211)), "{body}");
    // The default window is 21: the first rolling row is the 21st return.
    let roll = body["data"]["corr_roll"].as_array().unwrap();
    let matrix = body["data"]["corr_matrix"].as_array().unwrap();
    assert_eq!(matrix.len(), 3);
    assert_eq!(matrix[1]["index"], "IVV");
    assert_eq!(matrix[1]["IVV"], 1.0);
    let (_, beta) = s.post("/symbol_beta", USER, &base).await;
    let beta = beta["data"]["beta_roll"].as_array().unwrap();
    assert_eq!(beta.len(), roll.len());
    // Row keys in order: Date, then each symbol (with its price for beta), benchmark price.
    let keys: Vec<&String> = beta[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "Date",
            "IVV",
            "IVV_price",
            "TLT",
            "TLT_price",
            "stock_price"
        ]
    );
    assert_eq!(roll[0]["Date"], "2024-02-01T00:00:00");
    // IVV tracks SPX: a beta near one, a correlation near one.
    assert!(
        (beta[0]["IVV"].as_f64().unwrap() - 1.0).abs() < 0.1,
        "{}",
        beta[0]
    );
    assert!(roll[0]["IVV"].as_f64().unwrap() > 0.95);

    for (path, body, names) in [
        (
            "/symbol_corr",
            with(json!({"benchmark": null})),
            "'benchmark'",
        ),
        (
            "/symbol_corr",
            with(json!({"stock_comparison": "[\"IVV\""})),
            "'stock_comparison'",
        ),
        (
            "/symbol_corr",
            with(json!({"stock_comparison": [1, 2]})),
            "'stock_comparison'",
        ),
        (
            "/symbol_corr",
            with(json!({"stock_comparison": ["SPX"]})),
            "'stock_comparison'",
        ),
        (
            "/symbol_beta",
            with(json!({"roll_window": 1})),
            "'roll_window'",
        ),
        (
            "/symbol_beta",
            with(json!({"stock_comparison": (0..51).map(|i| format!("S{i}")).collect::<Vec<_>>()})),
            "at most 50",
        ),
        (
            "/symbol_beta",
            with(json!({"roll_window": "many"})),
            "'roll_window'",
        ),
        (
            "/symbol_beta",
            with(json!({"start_date": "2024-13-01"})),
            "'start_date'",
        ),
        (
            "/symbol_beta",
            with(json!({"start_date": "2025-01-01"})),
            "'start_date'",
        ),
        (
            "/asset_corr",
            json!({"start_date": "2024-01-01"}),
            "'end_date'",
        ),
        (
            "/pattern_corr",
            json!({"referenceSymbol": "SPX"}),
            "'referenceStartDate'",
        ),
        ("/symbol_corr", json!(["SPX"]), "JSON object"),
    ] {
        let (status, resp) = s.post(path, USER, &body).await;
        error(status, &resp, 400, 400, names);
    }
    let resp = reqwest::Client::new()
        .post(s.url("/symbol_corr"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .header("content-type", "application/json")
        .body("{\"benchmark\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let (status, resp) = s
        .post(
            "/symbol_corr",
            USER,
            &with(json!({"stock_comparison": ["IVV", "NOPE"]})),
        )
        .await;
    error(status, &resp, 404, 404, "'NOPE'");

    // Too little data is a 411 inside an HTTP 200.
    for (path, body, names) in [
        (
            "/symbol_corr",
            with(json!({"end_date": "2024-01-20"})),
            "roll_window",
        ),
        (
            "/symbol_beta",
            with(json!({"roll_window": 200})),
            "roll_window",
        ),
        (
            "/asset_corr",
            json!({"start_date": "2024-01-06", "end_date": "2024-01-07"}),
            "insufficient",
        ),
        (
            "/pattern_corr",
            json!({"referenceSymbol": "SPX", "referenceStartDate": "2024-01-02", "referenceEndDate": "2024-03-28",
                   "comparisonSymbol": "NDX", "comparisonStartDate": "2024-01-06", "comparisonEndDate": "2024-01-08"}),
            "NDX",
        ),
    ] {
        let (status, resp) = s.post(path, USER, &body).await;
        error(status, &resp, 200, 411, names);
    }
    // A GET on a POST endpoint is 405 in the same envelope.
    let (status, resp) = s.get("/symbol_corr", USER).await;
    error(status, &resp, 405, 405, "method");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn analytics_needs_credentials_and_a_plan() {
    let (s, _dir) = TestServer::fresh().await;
    s.add_account("data-only@example.test", "data-password", "data")
        .await;
    s.add_account("analyst@example.test", "analyst-password", "analytics")
        .await;
    let body = json!({"start_date": "2024-01-01", "end_date": "2024-06-30"});
    let (status, resp) = s.get("/seasonality?ticker=SPX", None).await;
    error(status, &resp, 401, 401, "");
    let (status, resp) = s.post("/asset_corr", None, &body).await;
    error(status, &resp, 401, 401, "");
    let (status, resp) = s
        .post(
            "/asset_corr",
            Some(("data-only@example.test", "data-password")),
            &body,
        )
        .await;
    error(status, &resp, 403, 403, "");
    let (status, resp) = s
        .get(
            "/seasonality/performance-by-month?ticker=SPX",
            Some(("analyst@example.test", "analyst-password")),
        )
        .await;
    assert_eq!((status, resp["code"].as_u64()), (200, Some(200)));
    s.stop().await;
}
