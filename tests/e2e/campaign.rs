//! The hardening campaign's findings, each as a regression test over HTTP:
//! webhook destinations it registered (public literals in the document,
//! addresses that reach this machine or its network through an embedding),
//! fields it sent that were dropped, a filter and bodies that were taken,
//! and a value quoted back whole.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use tests::server::{Options, TestServer};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

async fn server() -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.scan.at_start = false;
    // As deployed: no loopback receivers.
    opts.webhooks.allow_loopback = false;
    (TestServer::start(opts).await, dir)
}

/// Every URL in a JSON value's strings.
fn urls(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            for word in s.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '"') {
                if word.starts_with("http://") || word.starts_with("https://") {
                    out.push(word.trim_end_matches(['.', ',', ';']).to_string());
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| urls(x, out)),
        Value::Object(o) => o.values().for_each(|x| urls(x, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_document_names_no_address_that_leaves_the_machine() {
    let (s, _dir) = server().await;
    let (status, doc) = s.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let mut found = Vec::new();
    urls(&doc, &mut found);
    assert!(!found.is_empty(), "the document has example URLs");
    for u in found {
        let rest = u.split_once("://").map_or("", |(_, r)| r);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host = match authority.strip_prefix('[') {
            Some(v6) => format!("[{}]", v6.split(']').next().unwrap_or_default()),
            None => authority.split(':').next().unwrap_or_default().to_string(),
        };
        let local = host == "localhost" || host == "127.0.0.1" || host == "[::1]";
        assert!(
            host.ends_with(".example") || host == "example" || local,
            "{u}: examples use the reserved .example domain"
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn webhook_destinations_the_campaign_registered_are_refused_naming_url() {
    let (s, _dir) = server().await;
    for url in [
        "https://[2002:7f00:1::1]/",
        "https://[2002:a9fe:a9fe::1]/",
        "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
        "https://[64:ff9b:1::a00:1]/",
        "https://[64:ff9b:1::a9fe:a9fe]/",
        "https://[::ffff:0:7f00:1]/",
        "https://192.88.99.1/",
        "https://[2001:2::1]/",
        "https://[3fff::1]/",
        "https://8.8.8.8:0/",
        "https://8.8.8.8/hook\u{0}",
        "https://8.8.8.8/ho\nok",
    ] {
        let (status, body) = s.post("/webhooks", DEMO, &json!({ "url": url })).await;
        assert_eq!(status, 400, "{url:?}: {body}");
        assert!(body.to_string().contains("'url'"), "{url:?}: {body}");
    }
    let (_, listed) = s.get("/webhooks", DEMO).await;
    assert_eq!(listed["endpoints"], json!([]), "nothing stored: {listed}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_fields_filters_and_bodies_the_campaign_sent_are_refused() {
    let (s, _dir) = server().await;
    let http = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        http.post(s.url(path))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .json(&body)
            .send()
    };
    let range = json!({"start_date": "2020-01-02", "end_date": "2020-12-31", "colour": 1});
    let symbols = json!({"benchmark": "SPX", "stock_comparison": ["IVV"], "start_date": "2020-01-02",
        "end_date": "2020-12-31", "window": 21});
    for (path, body, field) in [
        ("/asset_corr", range, "colour"),
        ("/symbol_corr", symbols.clone(), "window"),
        ("/symbol_beta", symbols, "window"),
    ] {
        let r = post(path, body).await.unwrap();
        assert_eq!(r.status().as_u16(), 400, "{path}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["code"], 400, "{path}: {v}");
        assert!(
            v["msg"].as_str().unwrap().contains(&format!("'{field}'")),
            "{path}: {v}"
        );
    }
    let (status, v) = s.get("/backtest/batches?status=bogus", DEMO).await;
    assert_eq!(status, 400, "{v}");
    assert!(v["detail"].as_str().unwrap().contains("'status'"), "{v}");
    assert_eq!(s.get("/backtest/batches?status=SUCCESS", DEMO).await.0, 200);
    for (body, field) in [
        (json!([]), "'body'"),
        (json!({"signals": null}), "'signals'"),
        (json!({"tickers": null}), "'tickers'"),
    ] {
        let (status, v) = s.post("/smart-stock-scanner/alerts", DEMO, &body).await;
        assert_eq!(status, 400, "{body}: {v}");
        assert!(v.to_string().contains(field), "{body}: {v}");
    }
    let (_, alerts) = s.get("/smart-stock-scanner/alerts", DEMO).await;
    assert_eq!(alerts["data"]["alerts"], json!([]), "none stored: {alerts}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_five_megabyte_value_is_quoted_back_in_at_most_200_characters() {
    let (s, _dir) = server().await;
    let huge = "9x".repeat(2_500_000);
    let body = json!({"symbol": "SPX", "capital": huge,
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"}, "rule": {"type_name": ">", "comparison_value": "1"}}},
        "exit": {"rule_type": "RiskControlOnly"}});
    let r = reqwest::Client::new()
        .post(s.url("/backtest/start_backtest"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let text = r.text().await.unwrap();
    assert!(
        text.len() < 1_000,
        "{} bytes: {}",
        text.len(),
        &text[..300.min(text.len())]
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    let detail = v["detail"].as_str().unwrap();
    assert!(detail.contains("'capital'"), "{detail}");
    assert!(detail.contains("more characters"), "{detail}");
    s.stop().await;
}
