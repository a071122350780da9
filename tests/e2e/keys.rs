//! API keys on the embedded deployment: made, used, listed and revoked
//! (refused by another instance within the 5 s bound), scopes checked on
//! every operation, test mode on the sample set with its own books, and the
//! rate-limit headers under parallel clients.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tests::keys::{Keys, bearer};
use tests::server::{Options, TestServer, eventually, optix_strategy};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

#[tokio::test(flavor = "multi_thread")]
async fn a_key_is_made_used_listed_and_revoked_and_another_instance_refuses_it_within_5_s() {
    let (s, dir) = TestServer::fresh().await;
    // A second instance on the same database, as a second function would be.
    let other = TestServer::start(Options {
        workers: 0,
        ..Options::new(dir.path().join("db.sqlite"))
    })
    .await;
    let keys = Keys::new(&s.base);
    let made = keys
        .create(json!({"name": "ci job", "scopes": ["read", "submit"]}))
        .await;
    let key = made["key"].as_str().unwrap().to_string();
    let id = made["id"].as_str().unwrap().to_string();
    assert!(key.starts_with(&format!("mlk_live_{id}_")), "{made}");
    assert_eq!(made["prefix"], json!(format!("mlk_live_{id}")));
    assert_eq!(
        (made["status"].as_str(), made["mode"].as_str()),
        (Some("active"), Some("live"))
    );
    assert_eq!(made["scopes"], json!(["read", "submit"]));

    // Used on both instances (the second reads the key once, then keeps it).
    let http = Client::new();
    for base in [&s.base, &other.base] {
        let r = bearer(&http, Method::GET, base, "/backtest/tasks", &key).await;
        assert_eq!(r.status(), 200, "{base}");
        assert_eq!(r.headers()["marketlab-mode"], "live");
    }
    // `/auth-info` says which key it is and what it may do.
    let info: Value = bearer(&http, Method::GET, &s.base, "/auth-info", &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(info["authenticated"], true);
    assert_eq!(info["key"]["prefix"], made["prefix"]);
    assert_eq!(info["key"]["scopes"], json!(["read", "submit"]));
    assert_eq!(info["account"]["email"], DEMO_EMAIL);
    // It cannot manage keys: 403 naming the scope.
    let r = bearer(&http, Method::GET, &s.base, "/keys", &key).await;
    assert_eq!(r.status(), 403);
    assert!(r.text().await.unwrap().contains("'manage'"));

    // Listed by its account, without its secret, with when it was last used.
    let secret = key[format!("mlk_live_{id}_").len()..].to_string();
    assert_eq!(secret.len(), 43);
    assert!(
        eventually(Duration::from_secs(5), || async {
            let list = keys.list().await;
            list["keys"][0]["last_used_at"].is_string()
        })
        .await
    );
    let list = keys.list().await;
    assert_eq!(
        (list["live"].as_u64(), list["max_live"].as_u64()),
        (Some(1), Some(20))
    );
    assert_eq!(list["keys"][0]["name"], "ci job");
    assert!(!list.to_string().contains(&secret), "no secret in a list");

    // A wrong secret with the right id, and text that is no key, are 401.
    let forged = format!("mlk_live_{id}_{}", "A".repeat(43));
    for wrong in [forged.as_str(), "not-a-key"] {
        let r = bearer(&http, Method::GET, &s.base, "/backtest/tasks", wrong).await;
        assert_eq!(r.status(), 401, "{wrong}");
    }

    // Revoked: refused at once here, and by the other instance within 5 s.
    let at = Instant::now();
    let revoked = keys.revoke(&id).await;
    assert_eq!(revoked["status"], "revoked");
    let r = bearer(&http, Method::GET, &s.base, "/backtest/tasks", &key).await;
    assert_eq!(r.status(), 401);
    assert!(r.text().await.unwrap().contains("revoked"));
    refused_within_the_bound(&http, &other.base, &key, at).await;

    // At most 20 live keys: the revoked one does not count.
    for n in 0..20 {
        keys.create(json!({"name": format!("k{n}"), "scopes": ["read"]}))
            .await;
    }
    let (status, body) = keys
        .try_create(json!({"name": "one too many", "scopes": ["read"]}))
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(keys.list().await["live"], 20);
    other.stop().await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_key_requests_are_400_naming_the_field_and_keys_never_grant_more_than_they_hold() {
    let (s, _dir) = TestServer::fresh().await;
    let keys = Keys::new(&s.base);
    for (body, field) in [
        (json!({"name": "", "scopes": ["read"]}), "name"),
        (json!({"name": "x", "scopes": []}), "scopes"),
        (json!({"name": "x", "scopes": ["admin"]}), "scopes"),
        (
            json!({"name": "x", "scopes": ["read"], "mode": "prod"}),
            "mode",
        ),
        (
            json!({"name": "x", "scopes": ["read"], "expires_at": "2020-01-01T00:00:00Z"}),
            "expires_at",
        ),
        (
            json!({"name": "x", "scopes": ["read"], "owner": "someone"}),
            "owner",
        ),
    ] {
        let (status, answer) = keys.try_create(body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert!(answer.to_string().contains(field), "{body}: {answer}");
    }
    // A manage key without submit cannot make a submit key; a test key
    // cannot make a live one.
    let manage = keys
        .create(json!({"name": "admin", "scopes": ["read", "manage"]}))
        .await;
    let by_key = Keys::with_key(&s.base, manage["key"].as_str().unwrap());
    let (status, answer) = by_key
        .try_create(json!({"name": "x", "scopes": ["submit"]}))
        .await;
    assert_eq!(status, 403, "{answer}");
    assert!(answer.to_string().contains("'submit'"));
    let made = by_key
        .create(json!({"name": "reader", "scopes": ["read"]}))
        .await;
    assert_eq!(made["mode"], "live");
    let test = keys
        .create(json!({"name": "sandbox", "scopes": ["read", "manage"], "mode": "test"}))
        .await;
    let by_test = Keys::with_key(&s.base, test["key"].as_str().unwrap());
    let (status, _) = by_test
        .try_create(json!({"name": "x", "scopes": ["read"], "mode": "live"}))
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        by_test
            .create(json!({"name": "t2", "scopes": ["read"]}))
            .await["mode"],
        "test",
        "a test key's keys are test keys"
    );
    // An expiry in the future is kept and the key works until then.
    let later = (chrono::Utc::now() + chrono::TimeDelta::days(30)).to_rfc3339();
    let expiring = keys
        .create(json!({"name": "month", "scopes": ["read"], "expires_at": later}))
        .await;
    assert!(expiring["expires_at"].is_string());
    let r = bearer(
        &Client::new(),
        Method::GET,
        &s.base,
        "/usage",
        expiring["key"].as_str().unwrap(),
    )
    .await;
    assert_eq!(r.status(), 200);
    // Another account cannot revoke this one's key.
    s.add_account("other@example.test", "other-password", "pro")
        .await;
    let stranger = Keys::with_basic(&s.base, "other@example.test", "other-password");
    let (status, _) = stranger.try_revoke(made["id"].as_str().unwrap()).await;
    assert_eq!(status, 404);
    s.stop().await;
}

/// Every authenticated operation of the document, asked with a key that
/// holds every scope but the one it states: 403 naming that scope, before
/// its handler reads anything. Submitting routes with a `read` key are among them.
#[tokio::test(flavor = "multi_thread")]
async fn every_operation_refuses_a_key_without_its_scope_and_names_it() {
    let (s, _dir) = TestServer::fresh().await;
    let keys = Keys::new(&s.base);
    let mut lacking = std::collections::BTreeMap::new();
    for scope in ["read", "submit", "manage"] {
        let others: Vec<&str> = ["read", "submit", "manage"]
            .into_iter()
            .filter(|s| *s != scope)
            .collect();
        let made = keys
            .create(json!({"name": format!("no {scope}"), "scopes": others}))
            .await;
        lacking.insert(scope, made["key"].as_str().unwrap().to_string());
    }
    let reader = keys
        .create(json!({"name": "reader", "scopes": ["read"]}))
        .await;
    let reader = reader["key"].as_str().unwrap().to_string();
    let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
    let http = Client::new();
    let (mut checked, mut submitting) = (0, 0);
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(scope) = op["security"][1]["bearer"][0].as_str() else {
                continue;
            };
            let concrete = fill_path(path);
            let method: Method = method.to_uppercase().parse().unwrap();
            let mut keys_to_try = vec![&lacking[scope]];
            if scope == "submit" {
                keys_to_try.push(&reader);
                submitting += 1;
            }
            for key in keys_to_try {
                let r = bearer(&http, method.clone(), &s.base, &concrete, key).await;
                let status = r.status();
                let text = r.text().await.unwrap();
                assert_eq!(status, 403, "{method} {concrete}: {text}");
                assert!(
                    text.contains(&format!("'{scope}'")),
                    "{method} {concrete}: {text}"
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked > 90 && submitting >= 6,
        "{checked} operations, {submitting} submitting"
    );
    s.stop().await;
}

/// Waits for `base` to refuse `key`, and checks it did within the 5 s
/// bound (and a little for the request) of `revoked_at`.
async fn refused_within_the_bound(http: &Client, base: &str, key: &str, revoked_at: Instant) {
    let refused = eventually(Duration::from_secs(8), || async {
        bearer(http, Method::GET, base, "/backtest/tasks", key)
            .await
            .status()
            == StatusCode::UNAUTHORIZED
    })
    .await;
    let took = revoked_at.elapsed();
    assert!(refused && took <= Duration::from_millis(5_500), "{took:?}");
}

/// `{name}` path parameters as a client would fill them; the scope check
/// answers before any is read.
fn fill_path(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').unwrap() + open;
        out.push_str("00000000-0000-0000-0000-000000000000");
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_test_key_works_on_the_sample_set_and_its_tasks_and_usage_stay_apart() {
    // Live data of another seed: the sample set test keys read differs from it.
    let live = tempfile::tempdir().unwrap();
    sample::generate(
        &sample::SampleConfig {
            seed: 7,
            stocks: tests::server::TEST_STOCKS,
            intraday_days: 10,
            ..Default::default()
        },
        &platform::marketdata::LocalDir::new(live.path()),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = TestServer::start(Options {
        market_dir: live.path().to_path_buf(),
        ..Options::new(dir.path().join("db.sqlite"))
    })
    .await;
    // A server whose live data is the sample set, for what test mode should read.
    let (sample_server, _sample_dir) = TestServer::fresh().await;
    let keys = Keys::new(&s.base);
    let test = keys
        .create(json!({"name": "sandbox", "scopes": ["read", "submit"], "mode": "test"}))
        .await;
    let test_key = test["key"].as_str().unwrap().to_string();
    assert!(test_key.starts_with("mlk_test_"));
    let live_key = keys
        .create(json!({"name": "prod job", "scopes": ["read", "submit"]}))
        .await["key"]
        .as_str()
        .unwrap()
        .to_string();
    let http = Client::new();

    // The sample set's prices, not the live ones; the answer says test.
    let prices = "/ws/prices/SPX?start=2024-01-02&end=2024-03-28";
    let r = bearer(&http, Method::GET, &s.base, prices, &test_key).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["marketlab-mode"], "test");
    let as_test: Value = r.json().await.unwrap();
    let (_, as_live) = s.get(prices, DEMO).await;
    let (_, sample) = sample_server.get(prices, DEMO).await;
    assert_eq!(as_test, sample);
    assert_ne!(as_test, as_live, "live data of another seed");
    // So do synchronous analytics answers.
    let seasonal = "/seasonality/performance-by-month?ticker=SPX";
    let as_test: Value = bearer(&http, Method::GET, &s.base, seasonal, &test_key)
        .await
        .json()
        .await
        .unwrap();
    let (_, as_live) = s.get(seasonal, DEMO).await;
    let (_, sample) = sample_server.get(seasonal, DEMO).await;
    assert_eq!(as_test, sample);
    assert_ne!(as_test, as_live);

    // A backtest each way: each listing holds only its own.
    let start = |key: &str| {
        let (http, url, key) = (
            http.clone(),
            s.url("/backtest/start_backtest"),
            key.to_string(),
        );
        async move {
            let r = http
                .post(url)
                .bearer_auth(key)
                .json(&optix_strategy())
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 202);
            let mode = r.headers()["marketlab-mode"].to_str().unwrap().to_string();
            let body: Value = r.json().await.unwrap();
            (body["task_id"].as_str().unwrap().to_string(), mode)
        }
    };
    let (test_task, mode) = start(&test_key).await;
    assert_eq!(mode, "test");
    let (live_task, mode) = start(&live_key).await;
    assert_eq!(mode, "live");
    let ids = |list: Value| -> Vec<String> {
        list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["task_id"].as_str().unwrap().to_string())
            .collect()
    };
    let listed_live = ids(s.get("/backtest/tasks", DEMO).await.1);
    assert!(listed_live.contains(&live_task) && !listed_live.contains(&test_task));
    let r = bearer(&http, Method::GET, &s.base, "/backtest/tasks", &test_key).await;
    let listed_test = ids(r.json().await.unwrap());
    assert_eq!(listed_test, vec![test_task.clone()]);
    let r = bearer(
        &http,
        Method::GET,
        &s.base,
        &format!("/backtest/status/{live_task}"),
        &test_key,
    )
    .await;
    assert_eq!(r.status(), 404, "live tasks are invisible to a test key");
    let (status, _) = s.get(&format!("/backtest/status/{test_task}"), DEMO).await;
    assert_eq!(status, 404, "and test tasks to the live account");

    // The test task ran on the sample set: its result equals the same
    // strategy's on a server whose live data is the sample set.
    let test_path = format!("/backtest/status/{test_task}");
    let done = eventually(Duration::from_secs(60), || async {
        let r = bearer(&http, Method::GET, &s.base, &test_path, &test_key).await;
        let t: Value = r.json().await.unwrap();
        t["status"] == "SUCCESS"
    })
    .await;
    assert!(done);
    let r = bearer(&http, Method::GET, &s.base, &test_path, &test_key).await;
    let test_result: Value = r.json().await.unwrap();
    let (_, submitted) = sample_server
        .post("/backtest/start_backtest", DEMO, &optix_strategy())
        .await;
    let on_sample = sample_server
        .succeeded(
            &format!(
                "/backtest/status/{}",
                submitted["task_id"].as_str().unwrap()
            ),
            DEMO,
        )
        .await;
    assert_eq!(
        test_result["result"]["statistics"],
        on_sample["result"]["statistics"]
    );
    s.succeeded(&format!("/backtest/status/{live_task}"), DEMO)
        .await;

    // Usage: each mode counts its own; the live month breaks down by key.
    s.state.metering.as_ref().unwrap().flush().await.unwrap();
    let (_, live_usage) = s.get("/usage?by=key", DEMO).await;
    assert_eq!(live_usage["mode"], "live");
    assert_eq!(
        live_usage["total"]["tasks"],
        json!({"strategy_backtest": 1})
    );
    let by_key = live_usage["keys"].as_array().unwrap();
    assert_eq!(by_key.len(), 1, "{live_usage}");
    assert_eq!(by_key[0]["name"], "prod job");
    assert_eq!(by_key[0]["tasks"], json!({"strategy_backtest": 1}));
    assert_eq!(by_key[0]["requests"]["backtest"], 1);
    let r = bearer(&http, Method::GET, &s.base, "/usage?by=key", &test_key).await;
    let test_usage: Value = r.json().await.unwrap();
    assert_eq!(test_usage["mode"], "test");
    assert_eq!(test_usage["account"], DEMO_EMAIL);
    assert_eq!(
        test_usage["total"]["tasks"],
        json!({"strategy_backtest": 1})
    );
    assert_eq!(test_usage["keys"][0]["name"], "sandbox");
    assert!(
        test_usage["total"]["compute_ms"]["strategy_backtest"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(live_usage["total"]["requests"]["data"].as_u64().unwrap() >= 1);
    // The test key's data request is in the test books only.
    assert_eq!(test_usage["total"]["requests"]["data"], 1);
    let (status, body) = s.get("/usage?by=account", DEMO).await;
    assert_eq!(status, 400, "{body}");
    sample_server.stop().await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_remaining_count_falls_by_one_and_reaches_zero_at_the_429_under_32_clients() {
    // A clock held 20 s into this minute: the window cannot turn during
    // the test (the stored counters expire by the real clock, minutes later).
    let minute = chrono::Utc::now().timestamp().div_euclid(60) * 60;
    let clock = std::sync::Arc::new(platform::clock::ManualClock::new(
        chrono::DateTime::from_timestamp(minute + 20, 0).unwrap(),
    ));
    let dir = tempfile::tempdir().unwrap();
    let s = TestServer::start(Options {
        clock: clock.clone(),
        ..Options::new(dir.path().join("db.sqlite"))
    })
    .await;
    let metering = s.state.metering.clone().unwrap();
    metering
        .quota_store()
        .set_plan_limits(
            "pro",
            platform::quota::PlanLimits {
                requests_per_minute: 100,
                ..platform::quota::default_limits("pro")
            },
        )
        .await
        .unwrap();
    let key = Keys::new(&s.base)
        .create(json!({"name": "load", "scopes": ["read"]}))
        .await["key"]
        .as_str()
        .unwrap()
        .to_string();
    let http = Client::new();
    let clients = (0..32).map(|_| {
        let (http, base, key) = (http.clone(), s.base.clone(), key.clone());
        tokio::spawn(async move {
            let mut seen = Vec::new();
            loop {
                let r = bearer(&http, Method::GET, &base, "/backtest/tasks", &key).await;
                let h = r.headers();
                assert!(h.contains_key("ratelimit"), "{} {h:?}", r.status());
                assert_eq!(h["ratelimit-policy"], "\"backtest\";q=100;w=60");
                let now = h["ratelimit"].to_str().unwrap().to_string();
                if r.status() == 429 {
                    assert_eq!(now, "\"backtest\";r=0;t=40");
                    assert_eq!(h["retry-after"], "40");
                    return seen;
                }
                assert_eq!(r.status(), 200);
                let r: u32 = now
                    .strip_prefix("\"backtest\";r=")
                    .and_then(|t| t.strip_suffix(";t=40"))
                    .unwrap()
                    .parse()
                    .unwrap();
                seen.push(r);
            }
        })
    });
    let mut remaining = Vec::new();
    for c in clients {
        let seen = c.await.unwrap();
        assert!(seen.windows(2).all(|w| w[0] > w[1]), "{seen:?}");
        remaining.extend(seen);
    }
    remaining.sort_unstable();
    // The key's creation was the minute's first request to the service.
    assert_eq!(remaining, (0..99).collect::<Vec<u32>>());
    // Another service keeps its own count; the next minute starts over.
    let r = bearer(&http, Method::GET, &s.base, "/ws/getAllSymbols", &key).await;
    assert_eq!(r.headers()["ratelimit"], "\"data\";r=99;t=40");
    clock.advance(chrono::TimeDelta::seconds(40));
    let r = bearer(&http, Method::GET, &s.base, "/backtest/tasks", &key).await;
    assert_eq!(r.headers()["ratelimit"], "\"backtest\";r=99;t=60");
    let r = bearer(&http, Method::GET, &s.base, "/backtest/tasks", &key).await;
    assert_eq!(
        r.headers()["ratelimit"],
        "\"backtest\";r=98;t=60",
        "one less per request"
    );
    s.stop().await;
}

/// The operator's `marketlab keys` on a data directory: a key made for an
/// account works on the server over that directory, is listed by its
/// prefix, and its revocation by the command reaches the running server
/// within 5 s.
#[tokio::test(flavor = "multi_thread")]
async fn the_operator_makes_lists_and_revokes_keys_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&binary)
            .arg("--data-dir")
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (ok, _, err) = run(&[
        "accounts",
        "add",
        "--email",
        "ops@example.test",
        "--password",
        "ops-password",
        "--plan",
        "pro",
    ]);
    assert!(ok, "{err}");
    let (ok, out, err) = run(&[
        "keys",
        "create",
        "--email",
        "ops@example.test",
        "--name",
        "cron",
        "--scopes",
        "read,submit",
    ]);
    assert!(ok, "{err}");
    let key = out.lines().next().unwrap().trim().to_string();
    assert!(key.starts_with("mlk_live_"), "{out}");
    let prefix = &key[..21];
    let (ok, _, err) = run(&[
        "keys",
        "create",
        "--email",
        "nobody@example.test",
        "--name",
        "x",
    ]);
    assert!(!ok && err.contains("no account"), "{err}");
    let (ok, _, err) = run(&[
        "keys",
        "create",
        "--email",
        "ops@example.test",
        "--name",
        "x",
        "--scopes",
        "admin",
    ]);
    assert!(!ok && err.contains("admin"), "{err}");
    let (_, listed, _) = run(&["keys", "list", "--email", "ops@example.test"]);
    assert!(
        listed.contains(prefix) && listed.contains("active") && !listed.contains(&key),
        "{listed}"
    );

    let s = TestServer::start(Options::new(
        dir.path().join("state").join("marketlab.sqlite"),
    ))
    .await;
    let http = Client::new();
    let r = bearer(&http, Method::GET, &s.base, "/backtest/tasks", &key).await;
    assert_eq!(r.status(), 200);
    let at = Instant::now();
    let (ok, out, err) = run(&[
        "keys",
        "revoke",
        "--email",
        "ops@example.test",
        "--id",
        &prefix[9..],
    ]);
    assert!(ok && out.contains("revoked"), "{err}");
    refused_within_the_bound(&http, &s.base, &key, at).await;
    s.stop().await;
}
