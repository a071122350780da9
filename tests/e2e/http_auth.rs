//! Authentication, plans and tenant isolation over HTTP.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::tasks::{NewTask, TaskKind};
use serde_json::json;
use tests::server::TestServer;

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

#[tokio::test(flavor = "multi_thread")]
async fn health_and_auth_info_are_public() {
    let (s, _dir) = TestServer::fresh().await;
    for path in ["/health", "/ws/health"] {
        assert_eq!(s.get(path, None).await, (200, json!({"status": "ok"})));
        assert_eq!(s.get(path, DEMO).await, (200, json!({"status": "ok"})));
    }
    let (status, info) = s.get("/auth-info", None).await;
    assert_eq!(
        (
            status,
            info["scheme"].as_str(),
            info["authenticated"].as_bool()
        ),
        (200, Some("basic"), Some(false))
    );
    let (_, info) = s.get("/auth-info", DEMO).await;
    assert_eq!(info["authenticated"], json!(true));
    assert_eq!(info["account"]["plan"], json!("pro"));
    assert_eq!(
        info["account"]["services"],
        json!(["backtest", "analytics", "data"])
    );
    // Every response carries a request id; a caller's own id is kept.
    let resp = reqwest::get(s.url("/health")).await.unwrap();
    assert_eq!(resp.headers()["x-request-id"].to_str().unwrap().len(), 36);
    let resp = reqwest::Client::new()
        .get(s.url("/ws/health"))
        .header("x-request-id", "trace-42")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["x-request-id"], "trace-42");
    let (_, info) = s.get("/auth-info", Some((DEMO_EMAIL, "nope"))).await;
    assert_eq!(
        (info["authenticated"].as_bool(), info["error"].as_str()),
        (Some(false), Some("invalid e-mail or password"))
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_wrong_and_unknown_credentials_are_401_in_each_envelope() {
    let (s, _dir) = TestServer::fresh().await;
    let cases = [
        ("/backtest/tasks", "detail"),
        ("/cpm/tasks", "msg"),
        ("/ws/getAllSymbols", "error"),
    ];
    for (path, field) in cases {
        for user in [
            None,
            Some((DEMO_EMAIL, "wrong-password")),
            Some(("nobody@example.test", DEMO_PASSWORD)),
        ] {
            let (status, body) = s.get(path, user).await;
            assert_eq!(status, 401, "{path} {user:?}: {body}");
            assert!(body[field].is_string(), "{path}: {body}");
        }
    }
    let (_, body) = s.get("/cpm/tasks", None).await;
    assert_eq!(
        (body["code"].as_i64(), &body["data"]),
        (Some(401), &json!(null))
    );
    let (_, body) = s.get("/ws/getAllSymbols", None).await;
    assert_eq!(body["status"], json!(401));
    // The 401 invites Basic authentication.
    let resp = reqwest::get(s.url("/backtest/tasks")).await.unwrap();
    assert!(
        resp.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Basic ")
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn plans_without_the_service_are_refused() {
    let (s, _dir) = TestServer::fresh().await;
    s.add_account("bt@example.test", "bt-password", "backtest")
        .await;
    s.add_account("data@example.test", "data-password", "data")
        .await;
    s.add_account("lapsed@example.test", "lapsed-password", "none")
        .await;
    let bt = Some(("bt@example.test", "bt-password"));
    let data = Some(("data@example.test", "data-password"));
    let lapsed = Some(("lapsed@example.test", "lapsed-password"));

    assert_eq!(s.get("/backtest/tasks", bt).await.0, 200);
    let (status, body) = s.get("/cpm/tasks", bt).await;
    assert_eq!((status, body["code"].as_i64()), (403, Some(403)), "{body}");
    assert!(
        body["msg"].as_str().unwrap().contains("analytics"),
        "{body}"
    );
    let (status, body) = s.get("/backtest/tasks", data).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("backtest"));
    // The data service answers a missing data plan with 401 (its spec's rule).
    let (status, body) = s.get("/ws/getAllSymbols", bt).await;
    assert_eq!(
        (status, body["status"].as_i64()),
        (401, Some(401)),
        "{body}"
    );
    assert!(body["error"].as_str().unwrap().contains("data plan"));
    assert_eq!(s.get("/ws/getAllSymbols", data).await.0, 200);
    for path in [
        "/backtest/tasks",
        "/cpm/tasks",
        "/smart-scanner-backtest/tasks",
    ] {
        assert_eq!(s.get(path, lapsed).await.0, 403, "{path}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tenant_cannot_see_another_tenants_tasks() {
    let (s, _dir) = TestServer::fresh().await;
    s.add_account("alice@example.test", "alice-password", "pro")
        .await;
    s.add_account("bob@example.test", "bob-password", "pro")
        .await;
    let alice = Some(("alice@example.test", "alice-password"));
    let bob = Some(("bob@example.test", "bob-password"));
    let task = s
        .state
        .tasks
        .create(NewTask {
            owner: "alice@example.test".into(),
            kind: TaskKind::StrategyBacktest,
            params: json!({"symbol": "SPX", "name": "mine"}),
        })
        .await
        .unwrap();
    let scan = s
        .state
        .tasks
        .create(NewTask {
            owner: "alice@example.test".into(),
            kind: TaskKind::CpmScan,
            params: json!({"symbol": "SPX"}),
        })
        .await
        .unwrap();
    let path = format!("/backtest/status/{}", task.id);
    let (status, body) = s.get(&path, alice).await;
    assert_eq!(
        (status, body["username"].as_str()),
        (200, Some("alice@example.test"))
    );
    let (status, body) = s.get(&path, bob).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(
        body,
        json!({"detail": format!("task '{}' not found", task.id)})
    );
    // The task's series: another tenant's is 404; the owner's, not run yet, 409.
    let chart = format!("/backtest/chart/{}", task.id);
    assert_eq!(s.get(&chart, bob).await.0, 404);
    let (status, body) = s.get(&chart, alice).await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("PENDING"),
        "{body}"
    );
    let (status, body) = s.get(&format!("/cpm/status/{}", scan.id), bob).await;
    assert_eq!((status, body["code"].as_i64()), (404, Some(404)));
    let (_, list) = s.get("/backtest/tasks", bob).await;
    assert_eq!(list["total"], json!(0));
    let (_, list) = s.get("/cpm/tasks", bob).await;
    assert_eq!(list["total"], json!(0));
    let (_, list) = s.get("/backtest/tasks", alice).await;
    assert_eq!(list["total"], json!(1));
    s.stop().await;
}
