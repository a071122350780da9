//! API keys on the AWS path (the emulator, the functions' own binaries):
//! a key made through the backtest function works on two instances, is
//! refused by the other within 5 s of its revocation, cannot submit with
//! only `read` on any submitting route of the backtest and analytics
//! functions, and a test key's backtest runs on the bucket's `sample/` set
//! with its tasks and usage kept apart.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tests::emulator::{deployment_on, drain_until, function_env, sample_bucket_with_test_set};
use tests::runtime_api::{Function, answer_json, basic, http_event, workspace_binaries};

/// One invocation's status, headers and JSON body.
async fn call(
    f: &mut Function,
    method: &str,
    path: &str,
    body: Option<&Value>,
    auth: &str,
) -> (u16, Value, Value) {
    let answer = f
        .invoke(http_event(method, path, body, Some(auth)))
        .await
        .answer;
    let status = answer["statusCode"].as_u64().unwrap() as u16;
    (status, answer["headers"].clone(), answer_json(&answer))
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_scopes_and_test_mode_through_the_functions() {
    let c = tests::emulator::clients().await;
    let bucket = sample_bucket_with_test_set(&c).await;
    let d = deployment_on(c, bucket).await;
    let [worker, backtest, analytics] =
        workspace_binaries(["worker", "backtest", "analytics"]).await;
    let env = function_env(&d.names);
    let mut a = Function::new(&backtest, "backtest", 1024, &env).await;
    let mut b = Function::new(&backtest, "backtest", 1024, &env).await;
    let mut an = Function::new(&analytics, "analytics", 1024, &env).await;
    let password = basic(DEMO_EMAIL, DEMO_PASSWORD);

    // Made once, used on both instances; the remaining count falls by one.
    let (status, _, made) = call(
        &mut a,
        "POST",
        "/keys",
        Some(&json!({"name": "ci", "scopes": ["read", "submit"]})),
        &password,
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let key = format!("Bearer {}", made["key"].as_str().unwrap());
    let id = made["id"].as_str().unwrap().to_string();
    let mut left = Vec::new();
    for second in [false, false, true] {
        let f = if second { &mut b } else { &mut a };
        let (status, headers, _) = call(f, "GET", "/backtest/tasks", None, &key).await;
        assert_eq!(status, 200);
        assert_eq!(headers["marketlab-mode"], "live");
        assert!(
            headers["ratelimit-policy"]
                .as_str()
                .unwrap()
                .starts_with("\"backtest\";q=")
        );
        left.push(headers["ratelimit"].as_str().unwrap().to_string());
    }
    let r = |t: &str| -> u32 {
        t.split(";r=")
            .nth(1)
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(r(&left[0]), r(&left[1]) + 1, "{left:?}");

    // A read key on every submitting route of both functions: 403 naming `submit`.
    let (_, _, reader) = call(
        &mut a,
        "POST",
        "/keys",
        Some(&json!({"name": "reader", "scopes": ["read"]})),
        &password,
    )
    .await;
    let reader = format!("Bearer {}", reader["key"].as_str().unwrap());
    let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
    let mut submitting = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if op["security"][1]["bearer"][0] != "submit" {
                continue;
            }
            let f = if op["tags"][0] == "analytics" {
                &mut an
            } else {
                &mut a
            };
            let (status, _, body) =
                call(f, &method.to_uppercase(), path, Some(&json!({})), &reader).await;
            assert_eq!(status, 403, "{method} {path}: {body}");
            assert!(
                body.to_string().contains("'submit'"),
                "{method} {path}: {body}"
            );
            submitting += 1;
        }
    }
    assert!(submitting >= 6, "{submitting}");

    // A test key's backtest runs on the sample/ set and stays in its books.
    let (_, _, test) = call(
        &mut a,
        "POST",
        "/keys",
        Some(&json!({"name": "sandbox", "scopes": ["read", "submit"], "mode": "test"})),
        &password,
    )
    .await;
    let test = format!("Bearer {}", test["key"].as_str().unwrap());
    let strategy = tests::server::optix_strategy();
    let (status, headers, live_task) = call(
        &mut a,
        "POST",
        "/backtest/start_backtest",
        Some(&strategy),
        &key,
    )
    .await;
    assert_eq!(status, 202, "{live_task}");
    assert_eq!(headers["marketlab-mode"], "live");
    let (status, headers, test_task) = call(
        &mut a,
        "POST",
        "/backtest/start_backtest",
        Some(&strategy),
        &test,
    )
    .await;
    assert_eq!(status, 202, "{test_task}");
    assert_eq!(headers["marketlab-mode"], "test");
    let (live_id, test_id) = (
        live_task["task_id"].as_str().unwrap().to_string(),
        test_task["task_id"].as_str().unwrap().to_string(),
    );
    let mut w = Function::new(&worker, "worker", 2048, &env).await;
    let tasks = d.state.tasks.clone();
    let ids: Vec<uuid::Uuid> = [&live_id, &test_id]
        .iter()
        .map(|i| i.parse().unwrap())
        .collect();
    drain_until(&d.clients, &d.names.queue_url, &mut w, || async {
        let mut done = true;
        for id in &ids {
            done &= tasks
                .get(*id)
                .await
                .unwrap()
                .is_some_and(|t| t.status.is_finished());
        }
        done
    })
    .await;
    let (_, _, record) = call(
        &mut a,
        "GET",
        &format!("/backtest/status/{test_id}"),
        None,
        &test,
    )
    .await;
    assert_eq!(record["status"], "SUCCESS", "{record}");
    let listed = |v: &Value| -> Vec<String> {
        v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["task_id"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, _, live_list) = call(&mut a, "GET", "/backtest/tasks", None, &password).await;
    assert!(listed(&live_list).contains(&live_id) && !listed(&live_list).contains(&test_id));
    let (_, _, test_list) = call(&mut a, "GET", "/backtest/tasks", None, &test).await;
    assert_eq!(listed(&test_list), vec![test_id.clone()]);
    let (status, _, _) = call(
        &mut a,
        "GET",
        &format!("/backtest/status/{live_id}"),
        None,
        &test,
    )
    .await;
    assert_eq!(status, 404, "live tasks are invisible to a test key");
    // Usage reaches the table at a request's end once 2 s have passed:
    // wait until both books show their task (each is one task, never two).
    let started = Instant::now();
    let (usage, test_usage) = loop {
        let (_, _, usage) = call(&mut a, "GET", "/usage?by=key", None, &password).await;
        let (_, _, test_usage) = call(&mut a, "GET", "/usage", None, &test).await;
        let one = |u: &Value| u["total"]["tasks"]["strategy_backtest"] == 1;
        if one(&usage) && one(&test_usage) {
            break (usage, test_usage);
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{usage} {test_usage}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(usage["mode"], "live");
    let names: Vec<&str> = usage["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"ci") && !names.contains(&"sandbox"),
        "{usage}"
    );
    assert_eq!(
        (test_usage["mode"].as_str(), &test_usage["total"]["tasks"]),
        (Some("test"), &json!({"strategy_backtest": 1}))
    );

    // Revoked on one instance: the other refuses it within 5 s.
    let (status, _, _) = call(&mut a, "DELETE", &format!("/keys/{id}"), None, &password).await;
    assert_eq!(status, 200);
    let at = Instant::now();
    let (status, _, _) = call(&mut a, "GET", "/backtest/tasks", None, &key).await;
    assert_eq!(status, 401);
    loop {
        let (status, _, _) = call(&mut b, "GET", "/backtest/tasks", None, &key).await;
        if status == 401 {
            break;
        }
        assert!(at.elapsed() < Duration::from_secs(8), "still accepted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        at.elapsed() <= Duration::from_millis(5_500),
        "{:?}",
        at.elapsed()
    );
}
