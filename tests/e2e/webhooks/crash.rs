//! A delivery survives kill -9: the server is killed between a failed
//! attempt and its retry; the next start sends the retry, same `webhook-id`.

use super::receiver::{Answer, Receiver};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use tests::spawned::Spawned;

/// The `marketlab` binary serving `dir`, one worker, loopback webhooks
/// retried every 2 s.
fn serve(binary: &Path, dir: &Path) -> Spawned {
    Spawned::start(
        binary,
        dir,
        &[
            "--workers",
            "1",
            "--no-scan",
            "--webhooks-allow-loopback",
            "--webhook-retry-seconds",
            "2,2,2",
        ],
        "warn",
    )
}

async fn call(base: &str, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let mut req = reqwest::Client::new()
        .request(method, format!("{base}{path}"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    assert!(r.status().is_success(), "{path}: {}", r.status());
    r.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delivery_pending_when_the_server_is_killed_is_sent_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(tests::server::market_dir(), dir.path().join("market")).unwrap();
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    let rx = Receiver::start(vec![Answer::Status(500)], None).await;

    let first = serve(&binary, dir.path());
    let e = call(
        &first.base,
        reqwest::Method::POST,
        "/webhooks",
        Some(json!({"url": rx.url("/h"), "events": ["task.finished"]})),
    )
    .await;
    let id = e["id"].as_str().unwrap().to_string();
    call(
        &first.base,
        reqwest::Method::POST,
        "/backtest/start_backtest",
        Some(tests::server::optix_strategy()),
    )
    .await;
    let got = rx.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 1, "the first attempt");
    // Once the server has recorded the failed attempt (the retry now waits
    // its 2 s), it is killed (SIGKILL, and reaped): the retry exists only as
    // a row in the database.
    let started = std::time::Instant::now();
    loop {
        let log = call(
            &first.base,
            reqwest::Method::GET,
            &format!("/webhooks/{id}/deliveries"),
            None,
        )
        .await;
        if log["deliveries"][0]["attempts"]
            .as_array()
            .is_some_and(|a| a.len() == 1)
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the failed attempt was never recorded: {log}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(first);
    assert_eq!(rx.got().len(), 1, "nothing is sent while no server runs");

    let second = serve(&binary, dir.path());
    let got = rx.wait_for(2, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 2, "the retry went out after the restart");
    assert_eq!(got[1].header("webhook-id"), got[0].header("webhook-id"));
    assert_eq!(got[1].body, got[0].body);
    // The receiver answers before the server records the attempt: read
    // the log until it has.
    let started = std::time::Instant::now();
    let log = loop {
        let log = call(
            &second.base,
            reqwest::Method::GET,
            &format!("/webhooks/{id}/deliveries"),
            None,
        )
        .await;
        if log["deliveries"][0]["status"] != "pending"
            || started.elapsed() > Duration::from_secs(30)
        {
            break log;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let d = &log["deliveries"][0];
    assert_eq!(d["status"], "delivered", "{log}");
    let statuses: Vec<Value> = d["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].clone())
        .collect();
    assert_eq!(statuses, [json!(500), json!(200)]);
    // Delivered: nothing of it is left to send.
    assert_eq!(log["deliveries"].as_array().map(Vec::len), Some(1), "{log}");
    assert_eq!(rx.got().len(), 2, "delivered once more, not again");
}
