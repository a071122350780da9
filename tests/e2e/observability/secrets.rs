//! API keys never leave the request that carries them: a run of the real
//! binary, logging at debug with spans sent to a collector and metrics
//! served, uses keys every way (good, wrong, lacking a scope, test mode,
//! revoked) and nothing it logs, exports or answers after a key's creation
//! holds the key or its secret; the key's prefix is what names it.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use reqwest::Method;
use serde_json::json;
use std::time::Duration;
use tests::keys::{Keys, bearer};
use tests::spawned::Spawned;

#[tokio::test(flavor = "multi_thread")]
async fn keys_never_appear_in_logs_spans_metrics_or_later_answers() {
    let dir = tempfile::tempdir().unwrap();
    let market = tests::server::market_dir();
    std::os::unix::fs::symlink(market, dir.path().join("market")).unwrap();
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    let (url, got) = super::collector().await;
    let s = Spawned::start_with(
        &binary,
        dir.path(),
        &[
            "--workers",
            "1",
            "--no-scan",
            "--metrics-addr",
            "127.0.0.1:0",
            "--test-market-dir",
            market.to_str().unwrap(),
        ],
        "debug",
        &[("MARKETLAB_OTLP_ENDPOINT", &url)],
    );
    let keys = Keys::new(&s.base);
    let live = keys
        .create(json!({"name": "job", "scopes": ["read", "submit"]}))
        .await;
    let test = keys
        .create(json!({"name": "sandbox", "scopes": ["read", "submit"], "mode": "test"}))
        .await;
    let mut secrets = Vec::new();
    for made in [&live, &test] {
        let key = made["key"].as_str().unwrap().to_string();
        let prefix = made["prefix"].as_str().unwrap();
        secrets.push(key[prefix.len() + 1..].to_string());
        secrets.push(key);
    }
    let (live_key, test_key) = (secrets[1].clone(), secrets[3].clone());
    let http = reqwest::Client::new();
    let mut answers: Vec<String> = Vec::new();
    let keep = |r: reqwest::Response| async move {
        let headers = format!("{:?}", r.headers());
        format!("{headers} {}", r.text().await.unwrap())
    };
    for (method, path, key) in [
        (Method::GET, "/backtest/tasks", &live_key),
        (Method::GET, "/keys", &live_key),
        (
            Method::GET,
            "/ws/prices/SPX?start=2024-01-02&end=2024-01-31",
            &test_key,
        ),
        (Method::GET, "/usage?by=key", &test_key),
        (Method::GET, "/no/such/route", &live_key),
    ] {
        answers.push(keep(bearer(&http, method, &s.base, path, key).await).await);
    }
    let r = http
        .post(format!("{}/backtest/start_backtest", s.base))
        .bearer_auth(&test_key)
        .json(&tests::server::optix_strategy())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    answers.push(keep(r).await);
    let forged = format!("{}{}", &live_key[..live_key.len() - 3], "xyz");
    answers.push(keep(bearer(&http, Method::GET, &s.base, "/backtest/tasks", &forged).await).await);
    answers.push(keys.list().await.to_string());
    answers.push(
        keep(
            http.get(format!("{}/usage?by=key", s.base))
                .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
                .send()
                .await
                .unwrap(),
        )
        .await,
    );
    answers.push(keys.revoke(live["id"].as_str().unwrap()).await.to_string());
    answers
        .push(keep(bearer(&http, Method::GET, &s.base, "/backtest/tasks", &live_key).await).await);
    let metrics = reqwest::get(s.metrics.clone().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // The revocation's span is exported within a second or two.
    let exported = tests::server::eventually(Duration::from_secs(10), || async {
        serde_json::to_string(&*got.lock().unwrap())
            .unwrap()
            .contains("/keys/{key_id}")
    })
    .await;
    assert!(exported, "the revocation's span arrives");
    let spans = serde_json::to_string(&*got.lock().unwrap()).unwrap();
    let lines = s.lines();
    assert!(lines.len() > 20, "a debug log of the run");
    for secret in &secrets {
        for (what, text) in [
            ("metrics", metrics.as_str()),
            ("spans", spans.as_str()),
            ("logs", &lines.join("\n")),
            ("answers", &answers.join("\n")),
        ] {
            assert!(!text.contains(secret.as_str()), "a key in the {what}");
        }
    }
    // The prefix is what the logs name a key by.
    let prefix = live["prefix"].as_str().unwrap();
    let named: Vec<&String> = lines.iter().filter(|l| l.contains(prefix)).collect();
    assert!(named.iter().any(|l| l.contains("revoked")), "{named:?}");
}
