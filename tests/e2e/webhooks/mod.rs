//! Webhooks end to end: endpoints registered over HTTP, events from real
//! tasks, deliveries to a receiver on 127.0.0.1 verified by the Standard
//! Webhooks reference library, retries, a receiver that never answers,
//! disabling, isolation between tenants, refused destinations, and the
//! scanner's alerts.

mod aws;
mod crash;
mod events;
mod receiver;

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use receiver::{Answer, Received, Receiver};
use serde_json::{Value, json};
use std::time::Duration;
use tests::server::{Options, TestServer, eventually, optix_strategy};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));
const OTHER: (&str, &str) = ("other@example.com", "other-password-1");

/// A server of its own whose start does not scan (a scan would tell the
/// endpoints that take every event).
async fn server() -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.scan.at_start = false;
    let s = TestServer::start(opts).await;
    (s, dir)
}

async fn subscribe(s: &TestServer, body: Value) -> Value {
    let (status, e) = s.post("/webhooks", DEMO, &body).await;
    assert_eq!(status, 201, "{e}");
    e
}

/// Endpoint `id`'s delivery log (as `user`) once none of its deliveries
/// waits for an attempt: every event recorded for it so far, sent for the
/// last time. What a receiver got then is all it will get for them.
async fn settled_log(s: &TestServer, id: &str, user: (&str, &str)) -> Vec<Value> {
    let started = std::time::Instant::now();
    loop {
        let (status, log) = s
            .get(&format!("/webhooks/{id}/deliveries"), Some(user))
            .await;
        assert_eq!(status, 200, "{log}");
        let deliveries = log["deliveries"].as_array().cloned().unwrap_or_default();
        if deliveries.iter().all(|d| d["status"] != "pending") {
            return deliveries;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "deliveries still pending: {log}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn backtest(s: &TestServer) -> String {
    let (status, r) = s
        .post("/backtest/start_backtest", DEMO, &optix_strategy())
        .await;
    assert_eq!(status, 202, "{r}");
    r["task_id"].as_str().unwrap().to_string()
}

async fn send(
    s: &TestServer,
    method: reqwest::Method,
    path: &str,
    user: (&str, &str),
) -> (u16, Value) {
    let r = reqwest::Client::new()
        .request(method, s.url(path))
        .basic_auth(user.0, Some(user.1))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// What the reference library concludes of each (secret, delivery) case.
fn verify(cases: Vec<(String, &Received, Option<String>, Option<i64>)>) -> Vec<Value> {
    let cases: Vec<Value> = cases
        .into_iter()
        .map(|(secret, r, body, shift)| {
            let mut headers = json!(r.headers);
            if let Some(shift) = shift {
                let ts: i64 = r.header("webhook-timestamp").parse().unwrap();
                headers["webhook-timestamp"] = json!((ts + shift).to_string());
            }
            json!({"secret": secret, "headers": headers, "body": body.unwrap_or_else(|| r.body.clone())})
        })
        .collect();
    let out = tests::reference::run("verify_webhooks.py", &json!({ "cases": cases }));
    out.as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn deliveries_verify_with_the_reference_library_and_rotation_keeps_the_old_secret_for_a_while()
 {
    let (s, _dir) = server().await;
    let rx = Receiver::ok().await;
    let e = subscribe(&s, json!({"url": rx.url("/hook")})).await;
    let (id, secret) = (
        e["id"].as_str().unwrap(),
        e["secret"].as_str().unwrap().to_string(),
    );
    assert!(secret.starts_with("whsec_"), "{e}");
    assert_eq!(
        e["events"].as_array().unwrap().len(),
        4,
        "url alone: every event"
    );
    // The secret is shown once: neither the list nor the endpoint carries it.
    let (_, listed) = s.get("/webhooks", DEMO).await;
    assert!(!listed.to_string().contains(&secret[6..]), "{listed}");
    assert!(
        s.get(&format!("/webhooks/{id}"), DEMO)
            .await
            .1
            .get("secret")
            .is_none()
    );

    let task = backtest(&s).await;
    let got = rx.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 1);
    let d = &got[0];
    assert_eq!(d.path, "/hook");
    assert_eq!(d.header("content-type"), "application/json");
    let now = chrono::Utc::now().timestamp();
    let ts: i64 = d.header("webhook-timestamp").parse().unwrap();
    assert!((now - ts).abs() < 30, "timestamp {ts} vs now {now}");
    let payload = d.json();
    assert_eq!(payload["type"], "task.finished");
    assert_eq!(payload["data"]["task_id"], json!(task));
    assert_eq!(payload["data"]["status"], "SUCCESS");
    assert_eq!(
        payload["data"]["links"]["status"],
        json!(format!("/backtest/status/{task}"))
    );
    let status = s.succeeded(&format!("/backtest/status/{task}"), DEMO).await;
    for key in [
        "Total Trades",
        "Win Rate",
        "CAGR",
        "Sharpe Ratio",
        "Max Drawdown",
    ] {
        assert_eq!(
            payload["data"]["metrics"][key], status["result"][key],
            "{key}"
        );
    }
    assert!(
        d.body.len() < 2048,
        "a small payload: {} bytes",
        d.body.len()
    );

    let tampered = d.body.replacen("SUCCESS", "FAILURE", 1);
    let wrong = "whsec_".to_string() + &"A".repeat(43) + "=";
    let checks = verify(vec![
        (secret.clone(), d, None, None),
        (secret.clone(), d, Some(tampered), None),
        (secret.clone(), d, None, Some(-600)),
        (wrong, d, None, None),
    ]);
    assert_eq!(checks[0]["ok"], true, "{checks:?}");
    assert_eq!(checks[0]["type"], "task.finished");
    assert_eq!(checks[1]["ok"], false, "tampered body: {checks:?}");
    assert_eq!(checks[2]["ok"], false, "old timestamp: {checks:?}");
    assert!(
        checks[2]["error"].as_str().unwrap().contains("too old"),
        "{checks:?}"
    );
    assert_eq!(checks[3]["ok"], false, "another secret: {checks:?}");

    // Rotation: the new secret signs, the old one beside it for an hour.
    let (status, rotated) = s
        .post(
            &format!("/webhooks/{id}/rotate"),
            DEMO,
            &json!({"keep_previous_hours": 1}),
        )
        .await;
    assert_eq!(status, 200, "{rotated}");
    let newer = rotated["secret"].as_str().unwrap().to_string();
    assert_ne!(newer, secret);
    assert!(
        rotated["previous_secret_valid_until"].is_string(),
        "{rotated}"
    );
    backtest(&s).await;
    let got = rx.wait_for(2, Duration::from_secs(30)).await;
    let second = &got[1];
    assert_eq!(second.header("webhook-signature").split(' ').count(), 2);
    let checks = verify(vec![
        (newer.clone(), second, None, None),
        (secret.clone(), second, None, None),
    ]);
    assert!(
        checks.iter().all(|c| c["ok"] == true),
        "both secrets verify: {checks:?}"
    );
    // Rotated again with no overlap: only the newest verifies.
    let (_, rotated) = s
        .post(
            &format!("/webhooks/{id}/rotate"),
            DEMO,
            &json!({"keep_previous_hours": 0}),
        )
        .await;
    let newest = rotated["secret"].as_str().unwrap().to_string();
    backtest(&s).await;
    let got = rx.wait_for(3, Duration::from_secs(30)).await;
    let third = &got[2];
    let checks = verify(vec![
        (newest, third, None, None),
        (newer, third, None, None),
    ]);
    assert_eq!(
        (checks[0]["ok"].clone(), checks[1]["ok"].clone()),
        (json!(true), json!(false)),
        "{checks:?}"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_receiver_failing_twice_gets_the_same_webhook_id_three_times_and_the_log_shows_each_attempt()
 {
    let (s, _dir) = server().await;
    let rx = Receiver::start(vec![Answer::Status(500), Answer::Status(503)], None).await;
    let e = subscribe(
        &s,
        json!({"url": rx.url("/h"), "events": ["task.finished"]}),
    )
    .await;
    let id = e["id"].as_str().unwrap();
    backtest(&s).await;
    let got = rx.wait_for(3, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 3);
    assert!(
        got.iter()
            .all(|r| r.header("webhook-id") == got[0].header("webhook-id"))
    );
    assert!(
        got.iter().all(|r| r.body == got[0].body),
        "the same body on every attempt"
    );
    assert!(got[0].header("webhook-id").starts_with("msg_"));
    // The schedule's 0.2 s and 0.4 s between attempts.
    let gaps: Vec<f64> = got
        .windows(2)
        .map(|w| (w[1].at - w[0].at).as_secs_f64())
        .collect();
    assert!(gaps[0] >= 0.18 && gaps[1] >= 0.38, "{gaps:?}");
    let delivered = eventually(Duration::from_secs(30), || async {
        s.get(&format!("/webhooks/{id}/deliveries"), DEMO).await.1["deliveries"][0]["status"]
            == "delivered"
    })
    .await;
    let (_, log) = s.get(&format!("/webhooks/{id}/deliveries"), DEMO).await;
    assert!(delivered, "{log}");
    let d = &log["deliveries"][0];
    assert_eq!(d["id"], json!(got[0].header("webhook-id")));
    assert_eq!(d["tries"], 3);
    let statuses: Vec<Value> = d["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].clone())
        .collect();
    assert_eq!(statuses, [json!(500), json!(503), json!(200)]);
    assert_eq!(d["payload"], got[0].json());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_receiver_that_never_answers_holds_no_worker_and_others_still_get_theirs() {
    let (s, _dir) = server().await;
    let silent = Receiver::start(Vec::new(), Some(Answer::Never)).await;
    let fine = Receiver::ok().await;
    let hung = subscribe(&s, json!({"url": silent.url("/never")})).await;
    subscribe(&s, json!({"url": fine.url("/ok")})).await;
    let started = std::time::Instant::now();
    let tasks = [backtest(&s).await, backtest(&s).await, backtest(&s).await];
    for t in &tasks {
        s.succeeded(&format!("/backtest/status/{t}"), DEMO).await;
    }
    let got = fine.wait_for(3, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 3);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "tasks and the other endpoint's deliveries went on: {:?}",
        started.elapsed()
    );
    // The silent one's attempts end at the answer timeout (2 s here), logged.
    let id = hung["id"].as_str().unwrap();
    let timed_out = eventually(Duration::from_secs(15), || async {
        let (_, log) = s.get(&format!("/webhooks/{id}/deliveries"), DEMO).await;
        log["deliveries"].as_array().is_some_and(|ds| {
            ds.len() == 3
                && ds.iter().all(|d| {
                    d["attempts"][0]["error"]
                        .as_str()
                        .is_some_and(|e| e.contains("no answer within"))
                })
        })
    })
    .await;
    assert!(
        timed_out,
        "{}",
        s.get(&format!("/webhooks/{id}/deliveries"), DEMO).await.1
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_tenants_stalled_receivers_do_not_delay_a_third_tenant_s_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.scan.at_start = false;
    // The slots of the hardening campaign, and stalls that outlast the test.
    opts.webhooks.parallel = 16;
    opts.webhooks.timeouts.answer = Duration::from_secs(60);
    let s = TestServer::start(opts).await;
    let stalled = Receiver::start(Vec::new(), Some(Answer::Never)).await;
    let tenants = [
        ("stall-a@example.com", "stall-a-password"),
        ("stall-b@example.com", "stall-b-password"),
    ];
    for (email, password) in tenants {
        s.add_account(email, password, "pro").await;
        for k in 0..10 {
            let body =
                json!({"url": stalled.url(&format!("/{email}/{k}")), "events": ["task.finished"]});
            let (status, e) = s.post("/webhooks", Some((email, password)), &body).await;
            assert_eq!(status, 201, "{e}");
        }
        let (status, r) = s
            .post(
                "/backtest/start_backtest",
                Some((email, password)),
                &optix_strategy(),
            )
            .await;
        assert_eq!(status, 202, "{r}");
    }
    // Both tenants hold every send their share allows, none answered.
    let share = 2 * deliveries::PER_ACCOUNT;
    let held = stalled.wait_for(share, Duration::from_secs(30)).await;
    assert_eq!(held.len(), share, "each stalled tenant holds its share");
    let fine = Receiver::ok().await;
    subscribe(
        &s,
        json!({"url": fine.url("/c"), "events": ["task.finished"]}),
    )
    .await;
    let t = backtest(&s).await;
    let (_, status) = s.get(&format!("/backtest/status/{t}?wait=20"), DEMO).await;
    assert_eq!(status["status"], "SUCCESS", "{status}");
    let finished = std::time::Instant::now();
    let got = fine.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 1, "the third tenant's delivery arrived");
    let delay = got[0].at.saturating_duration_since(finished);
    assert!(
        delay < Duration::from_secs(1),
        "delivered {delay:?} after the task finished"
    );
    assert_eq!(
        stalled.got().len(),
        share,
        "the stalled tenants got no slot beyond their share"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_failing_its_whole_schedule_is_disabled_with_the_reason_then_enabled_and_redelivered()
 {
    let (s, _dir) = server().await;
    let rx = Receiver::start(Vec::new(), Some(Answer::Status(500))).await;
    let e = subscribe(&s, json!({"url": rx.url("/h")})).await;
    let id = e["id"].as_str().unwrap();
    backtest(&s).await;
    // The first attempt and the schedule's three retries.
    let got = rx.wait_for(4, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 4);
    let disabled = eventually(Duration::from_secs(30), || async {
        s.get(&format!("/webhooks/{id}"), DEMO).await.1["enabled"] == false
    })
    .await;
    let (_, ep) = s.get(&format!("/webhooks/{id}"), DEMO).await;
    assert!(disabled, "{ep}");
    let why = ep["disabled_reason"].as_str().unwrap();
    assert!(
        why.contains("failed all 4 attempts") && why.contains("HTTP 500"),
        "{why}"
    );
    let (_, log) = s.get(&format!("/webhooks/{id}/deliveries"), DEMO).await;
    let d = &log["deliveries"][0];
    assert_eq!(
        (d["status"].as_str(), d["tries"].as_u64()),
        (Some("failed"), Some(4))
    );
    let delivery = d["id"].as_str().unwrap();
    // Disabled: no new deliveries, and a redeliver is refused until enabled.
    // An endpoint that takes the same event hears of the next task: its
    // delivery is the proof that the task's event was told.
    let witness = Receiver::ok().await;
    subscribe(
        &s,
        json!({"url": witness.url("/w"), "events": ["task.finished"]}),
    )
    .await;
    let next = backtest(&s).await;
    let told = witness.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(told.len(), 1);
    assert_eq!(told[0].json()["data"]["task_id"], json!(next));
    assert_eq!(
        settled_log(&s, id, (DEMO_EMAIL, DEMO_PASSWORD)).await.len(),
        1
    );
    assert_eq!(rx.got().len(), 4);
    let path = format!("/webhooks/{id}/deliveries/{delivery}/redeliver");
    let (status, body) = s.post(&path, DEMO, &json!({})).await;
    assert_eq!(status, 409, "{body}");
    rx.answer(Answer::Status(204));
    let (status, _) = s
        .post(&format!("/webhooks/{id}/enable"), DEMO, &json!({}))
        .await;
    assert_eq!(status, 200);
    let (status, body) = s.post(&path, DEMO, &json!({})).await;
    assert_eq!(status, 202, "{body}");
    let got = rx.wait_for(5, Duration::from_secs(30)).await;
    assert_eq!(got[4].header("webhook-id"), delivery);
    assert_eq!(got[4].body, got[0].body);
    let done = eventually(Duration::from_secs(30), || async {
        let (_, log) = s.get(&format!("/webhooks/{id}/deliveries"), DEMO).await;
        log["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["id"] == delivery && d["status"] == "delivered" && d["tries"] == 5)
    })
    .await;
    assert!(done);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tenants_never_see_each_others_endpoints_deliveries_or_events() {
    let (s, _dir) = server().await;
    s.add_account(OTHER.0, OTHER.1, "pro").await;
    let mine = Receiver::ok().await;
    let theirs = Receiver::ok().await;
    let e = subscribe(&s, json!({"url": mine.url("/")})).await;
    let id = e["id"].as_str().unwrap();
    let (status, their_endpoint) = s
        .post("/webhooks", Some(OTHER), &json!({"url": theirs.url("/")}))
        .await;
    assert_eq!(status, 201);
    let their_id = their_endpoint["id"].as_str().unwrap().to_string();
    let (_, listed) = s.get("/webhooks", Some(OTHER)).await;
    assert_eq!(listed["endpoints"].as_array().unwrap().len(), 1);
    assert!(!listed.to_string().contains(id));
    for path in [
        format!("/webhooks/{id}"),
        format!("/webhooks/{id}/deliveries"),
    ] {
        assert_eq!(s.get(&path, Some(OTHER)).await.0, 404, "{path}");
    }
    for path in [
        format!("/webhooks/{id}/rotate"),
        format!("/webhooks/{id}/enable"),
    ] {
        assert_eq!(
            s.post(&path, Some(OTHER), &json!({})).await.0,
            404,
            "{path}"
        );
    }
    assert_eq!(
        send(
            &s,
            reqwest::Method::DELETE,
            &format!("/webhooks/{id}"),
            OTHER
        )
        .await
        .0,
        404
    );
    // My task tells my endpoint only: once mine has heard of it, theirs
    // has no delivery recorded (their account's endpoints are not even read).
    backtest(&s).await;
    assert_eq!(mine.wait_for(1, Duration::from_secs(30)).await.len(), 1);
    assert!(settled_log(&s, &their_id, OTHER).await.is_empty());
    assert!(theirs.got().is_empty());
    assert_eq!(
        send(
            &s,
            reqwest::Method::DELETE,
            &format!("/webhooks/{id}"),
            (DEMO_EMAIL, DEMO_PASSWORD)
        )
        .await
        .0,
        204
    );
    assert_eq!(s.get(&format!("/webhooks/{id}"), DEMO).await.0, 404);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn registration_refuses_bad_urls_private_addresses_and_unknown_events_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    // As deployed: no loopback. No scan either: its `scan.completed` would
    // go to the public addresses registered here (the suite's servers are
    // confined to loopback, and a refused destination fails the suite).
    opts.webhooks.allow_loopback = false;
    opts.scan.at_start = false;
    let s = TestServer::start(opts).await;
    for url in [
        "http://93.184.216.34/hook",
        "https://10.0.0.8/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/hook",
        "https://127.0.0.1:8443/",
        "https://localhost/hook",
        "https://192.168.1.1/",
        "https://[fd00:ec2::254]/",
        "https://user:pw@93.184.216.34/",
        "ftp://example.com/",
        "not a url",
    ] {
        let (status, body) = s.post("/webhooks", DEMO, &json!({ "url": url })).await;
        assert_eq!(status, 400, "{url}: {body}");
        assert!(body.to_string().contains("'url'"), "{url}: {body}");
    }
    let (status, body) = s
        .post("/webhooks", DEMO, &json!({"url": "https://93.184.216.34/h", "events": ["task.finished", "task.exploded"]}))
        .await;
    assert_eq!(status, 400);
    assert!(body.to_string().contains("events[1]"), "{body}");
    let (status, body) = s
        .post(
            "/webhooks",
            DEMO,
            &json!({"url": "https://93.184.216.34/h", "colour": 1}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, _) = s
        .post(
            "/webhooks",
            DEMO,
            &json!({"url": "https://93.184.216.34/h"}),
        )
        .await;
    assert_eq!(status, 201, "a public https address is taken");
    // Ten endpoints an account; the eleventh is a conflict, not a bad field.
    for k in 1..10 {
        let url = format!("https://93.184.216.34/h{k}");
        let (status, _) = s.post("/webhooks", DEMO, &json!({ "url": url })).await;
        assert_eq!(status, 201);
    }
    let more = json!({"url": "https://93.184.216.34/more"});
    let (status, body) = s.post("/webhooks", DEMO, &more).await;
    assert_eq!(status, 409, "{body}");
    let why = body["detail"].as_str().unwrap();
    assert!(why.contains("10 webhook endpoints"), "{why}");
    s.stop().await;
}
