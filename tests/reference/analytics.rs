//! The correlation endpoints over HTTP (JSON, URL-encoded and multipart
//! bodies) equal pandas' `corr`, `rolling(w).corr` and `rolling(w).cov / var`
//! (to 1e-12) and numpy's interpolation and `corrcoef` (to 1e-9); plus the comparison
//! helpers the seasonality reference test shares.

use chrono::Datelike;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::MarketData;
use serde_json::{Value, json};
use tests::server::TestServer;

/// A symbol's full daily history as date strings and closes.
pub async fn closes(md: &dyn MarketData, ticker: &str) -> (Vec<String>, Vec<f64>) {
    let bars = md.daily(ticker).await.unwrap();
    (
        bars.time.iter().map(|t| t.date().to_string()).collect(),
        bars.close.clone(),
    )
}

/// Equal shapes, equal strings and integers, numbers within 1e-9.
pub fn same(ours: &Value, theirs: &Value, path: &str) {
    same_within(ours, theirs, path, 1e-9)
}

/// [`same`] with numbers within `tol` (relative to values beyond 1).
pub fn same_within(ours: &Value, theirs: &Value, path: &str, tol: f64) {
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!(
                (a - b).abs() <= tol * b.abs().max(1.0),
                "{path}: {a} vs pandas {b}"
            );
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(
                a.len(),
                b.len(),
                "{path}: {} rows vs pandas {}",
                a.len(),
                b.len()
            );
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same_within(x, y, &format!("{path}[{i}]"), tol);
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            let (ka, kb): (Vec<_>, Vec<_>) = (a.keys().collect(), b.keys().collect());
            assert_eq!(ka, kb, "{path}: fields (in order)");
            for (k, x) in a {
                same_within(x, &b[k], &format!("{path}.{k}"), tol);
            }
        }
        _ => assert_eq!(ours, theirs, "{path}"),
    }
}

/// The first `n` stocks of the sample set listed before 2000.
pub async fn stocks(md: &dyn MarketData, n: usize) -> Vec<String> {
    md.symbols()
        .await
        .unwrap()
        .iter()
        .filter(|s| s.asset_class == "stock" && s.first_date.year() < 2000)
        .take(n)
        .map(|s| s.symbol.clone())
        .collect()
}

/// POSTs `fields` as JSON, as a URL-encoded form, or as a multipart form
/// (arrays as JSON text in both forms); returns the body after checking the
/// success envelope.
async fn post(server: &TestServer, path: &str, fields: &Value, encoding: &str) -> Value {
    let client = reqwest::Client::new();
    let req = client
        .post(server.url(path))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let pairs: Vec<(String, String)> = fields
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), text(v)))
        .collect();
    let req = match encoding {
        "json" => req.json(fields),
        "urlencoded" => req.form(&pairs),
        _ => {
            let boundary = "marketlab-test-boundary";
            let mut body = String::new();
            for (k, v) in &pairs {
                body.push_str(&format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
                ));
            }
            body.push_str(&format!("--{boundary}--\r\n"));
            req.header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body)
        }
    };
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200, "{path} ({encoding})");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["code"], 211, "{path} ({encoding}): {body}");
    assert!(body.get("msg").is_none(), "{path}: minimal envelope");
    body["data"].clone()
}

async fn reference(
    server: &TestServer,
    symbols: &[String],
    start: &str,
    end: &str,
    window: usize,
    pattern: Value,
) -> Value {
    let mut series = Vec::new();
    for s in symbols {
        let (d, c) = closes(server.state.market.as_ref(), s).await;
        series.push(json!([s, d, c]));
    }
    tests::reference::run(
        "pandas_correlation.py",
        &json!({"series": series, "start": start, "end": end, "window": window, "pattern": pattern}),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn correlation_endpoints_equal_pandas() {
    let (server, _dir) = TestServer::fresh().await;
    let md = server.state.market.clone();
    let mut comparison = stocks(md.as_ref(), 2).await;
    comparison.extend(["TLT", "GLD", "XLK", "HSI"].map(String::from));
    let mut symbols = vec!["SPX".to_string()];
    symbols.extend(comparison.iter().cloned());
    for (window, encoding, start, end) in [
        (21, "json", "2006-01-01", "2026-11-20"),
        (63, "urlencoded", "1999-06-15", "2004-12-31"),
        (5, "multipart", "2020-02-01", "2020-05-01"),
    ] {
        let fields = json!({
            "benchmark": "SPX",
            "stock_comparison": comparison,
            "start_date": start,
            "end_date": end,
            "roll_window": window,
        });
        let want = reference(&server, &symbols, start, end, window, Value::Null).await;
        let what = format!("window {window}, {encoding}");
        let ours = post(&server, "/symbol_corr", &fields, encoding).await;
        same_within(
            &ours["corr_matrix"],
            &want["corr_matrix"],
            &format!("corr_matrix {what}"),
            1e-12,
        );
        same_within(
            &ours["corr_roll"],
            &want["corr_roll"],
            &format!("corr_roll {what}"),
            1e-12,
        );
        let ours = post(&server, "/symbol_beta", &fields, encoding).await;
        same_within(
            &ours["beta_roll"],
            &want["beta_roll"],
            &format!("beta_roll {what}"),
            1e-12,
        );
    }

    let assets: Vec<String> = services::analytics::correlation::ASSETS
        .map(String::from)
        .to_vec();
    let (start, end) = ("2010-01-01", "2020-12-31");
    let want = reference(&server, &assets, start, end, 2, Value::Null).await;
    let ours = post(
        &server,
        "/asset_corr",
        &json!({"start_date": start, "end_date": end}),
        "json",
    )
    .await;
    same(&ours["corr_info"], &want["corr_matrix"], "asset corr_info");
    assert_eq!(ours["start_date"], want["start_date"]);
    assert_eq!(ours["end_date"], want["end_date"]);
    assert_eq!(ours["corr_info"].as_array().unwrap().len(), 18);

    // Windows of different lengths, a near copy, and an unrelated stretch.
    for (reference_window, comparison_window) in [
        (
            ("SPX", "2024-01-02", "2024-03-28"),
            ("NDX", "2020-01-02", "2020-06-30"),
        ),
        (
            ("SPX", "2019-01-02", "2019-12-31"),
            ("IVV", "2019-01-02", "2019-06-28"),
        ),
        (
            ("TLT", "2008-09-01", "2008-12-31"),
            ("GLD", "2011-01-03", "2011-01-31"),
        ),
        (
            ("SPX", "2019-01-02", "2019-12-31"),
            ("IVV", "2019-01-02", "2019-12-31"),
        ),
    ] {
        let (r, c) = (reference_window, comparison_window);
        let symbols = [r.0.to_string(), c.0.to_string()];
        let want = reference(
            &server,
            &symbols,
            "1990-01-01",
            "2030-01-01",
            2,
            json!([[r.0, r.1, r.2], [c.0, c.1, c.2]]),
        )
        .await;
        let fields = json!({
            "referenceSymbol": r.0, "referenceStartDate": r.1, "referenceEndDate": r.2,
            "comparisonSymbol": c.0, "comparisonStartDate": c.1, "comparisonEndDate": c.2,
        });
        let ours = post(&server, "/pattern_corr", &fields, "urlencoded").await;
        same(
            &ours["pattern_corr"],
            &want["pattern_corr"],
            &format!("pattern {r:?} {c:?}"),
        );
        let score = ours["pattern_corr"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&score));
    }
    server.stop().await;
}
