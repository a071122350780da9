//! Task views over HTTP: each service's record and summary shapes, paging,
//! filters, and errors that name the parameter.

use chrono::NaiveDateTime;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::tasks::{Claim, NewTask, Outcome, TaskKind, now};
use serde_json::{Value, json};
use tests::server::TestServer;

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

async fn create(s: &TestServer, kind: TaskKind, params: Value) -> uuid::Uuid {
    s.state
        .tasks
        .create(NewTask {
            owner: DEMO_EMAIL.into(),
            kind,
            params,
        })
        .await
        .unwrap()
        .id
}

async fn finish(s: &TestServer, id: uuid::Uuid, outcome: Outcome) {
    let Claim::Claimed(t) = s
        .state
        .tasks
        .claim(id, now(), chrono::TimeDelta::minutes(1))
        .await
        .unwrap()
    else {
        panic!()
    };
    s.state
        .tasks
        .finish(
            id,
            platform::tasks::Finished {
                attempt: t.attempts,
                outcome,
                at: now(),
            },
        )
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn backtest_task_records_and_listing() {
    let (s, _dir) = TestServer::fresh().await;
    let mut ids = Vec::new();
    for n in 0..25 {
        ids.push(
            create(
                &s,
                TaskKind::StrategyBacktest,
                json!({"symbol": "SPX", "name": format!("s{n}"), "frequency": "Weekly"}),
            )
            .await,
        );
    }
    create(&s, TaskKind::CpmScan, json!({"symbol": "SPX"})).await;
    finish(&s, ids[24], Outcome::Success(json!({"Total Trades": 4}))).await;

    let (status, page) = s.get("/backtest/tasks", DEMO).await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            page["total"].as_u64(),
            page["limit"].as_u64(),
            page["offset"].as_u64()
        ),
        (Some(25), Some(20), Some(0))
    );
    let tasks = page["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 20);
    assert_eq!(tasks[0]["task_id"], json!(ids[24]));
    assert_eq!(tasks[0]["status"], json!("SUCCESS"));
    assert_eq!(
        (
            tasks[0]["strategy_name"].as_str(),
            tasks[0]["symbol"].as_str(),
            tasks[0]["frequency"].as_str()
        ),
        (Some("s24"), Some("SPX"), Some("Weekly"))
    );
    let created = tasks[0]["created_at"].as_str().unwrap();
    assert!(
        NaiveDateTime::parse_from_str(created, "%Y-%m-%dT%H:%M:%S").is_ok(),
        "ISO 8601 without zone: {created}"
    );
    let (_, page) = s.get("/backtest/tasks?limit=10&offset=20", DEMO).await;
    let rest: Vec<&str> = page["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["strategy_name"].as_str().unwrap())
        .collect();
    assert_eq!(rest, vec!["s4", "s3", "s2", "s1", "s0"]);
    let (_, page) = s.get("/backtest/tasks?status=success", DEMO).await;
    assert_eq!(page["total"], json!(1));

    let (status, record) = s.get(&format!("/backtest/status/{}", ids[24]), DEMO).await;
    assert_eq!(status, 200);
    assert_eq!(
        record["params"],
        json!({"symbol": "SPX", "name": "s24", "frequency": "Weekly"})
    );
    assert_eq!(
        (record["username"].as_str(), record["status"].as_str()),
        (Some(DEMO_EMAIL), Some("SUCCESS"))
    );
    assert_eq!(record["result"], json!({"Total Trades": 4}));
    let (_, pending) = s.get(&format!("/backtest/status/{}", ids[0]), DEMO).await;
    assert!(pending.get("result").is_none(), "no result before SUCCESS");

    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("offset=-1", "offset"),
        ("status=DONE", "status"),
    ] {
        let (status, body) = s.get(&format!("/backtest/tasks?{query}"), DEMO).await;
        assert_eq!(status, 400, "{query}");
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .contains(&format!("'{field}'")),
            "{query}: {body}"
        );
    }
    for id in ["not-a-uuid", &uuid::Uuid::new_v4().to_string()] {
        let (status, body) = s.get(&format!("/backtest/status/{id}"), DEMO).await;
        assert_eq!(
            (
                status,
                body["detail"].as_str().map(|d| d.contains("not found"))
            ),
            (404, Some(true))
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn analytics_task_objects_and_filters() {
    let (s, _dir) = TestServer::fresh().await;
    let scan = create(
        &s,
        TaskKind::CpmScan,
        json!({"symbol": "SPX", "system_pattern": "double_top"}),
    )
    .await;
    let backtest = create(&s, TaskKind::CpmBacktest, json!({"symbol": "HSI"})).await;
    let scanner = create(
        &s,
        TaskKind::ScannerBacktest,
        json!({"name": "swing", "find_type": "stock"}),
    )
    .await;
    finish(&s, scan, Outcome::Success(json!({"code": 200, "msg": "Found matching patterns!", "data": {"count": 0, "patterns": []}}))).await;
    finish(&s, backtest, Outcome::Failed("not enough history".into())).await;

    let (status, obj) = s.get(&format!("/cpm/status/{scan}"), DEMO).await;
    assert_eq!(status, 200);
    assert_eq!(
        obj["params"],
        json!(r#"{"symbol":"SPX","system_pattern":"double_top"}"#),
        "params is a JSON string"
    );
    assert_eq!(
        obj["result"],
        json!({"code": 200, "msg": "Found matching patterns!", "data": {"count": 0, "patterns": []}, "task_id": scan})
    );
    let created = obj["created_at"].as_str().unwrap();
    assert!(
        NaiveDateTime::parse_from_str(created, "%Y-%m-%dT%H:%M:%S%.6f").is_ok()
            && created.len() == 26,
        "microseconds: {created}"
    );
    let (_, obj) = s.get(&format!("/cpm/status/{backtest}"), DEMO).await;
    assert_eq!(
        (obj["status"].as_str(), obj.get("result")),
        (Some("FAILED"), None)
    );
    assert_eq!(obj["error"], json!("not enough history"));

    let (_, list) = s.get("/cpm/tasks", DEMO).await;
    assert_eq!(list["total"], json!(2));
    assert_eq!(
        list["tasks"][0],
        json!({"task_id": backtest, "status": "FAILED", "mode": "backtest", "symbol": "HSI", "system_pattern": null, "created_at": list["tasks"][0]["created_at"]})
    );
    assert_eq!(list["tasks"][1]["mode"], json!("scan"));
    let (_, list) = s.get("/cpm/tasks?mode=scan&status=SUCCESS", DEMO).await;
    assert_eq!(
        (
            list["total"].as_u64(),
            list["tasks"][0]["system_pattern"].as_str()
        ),
        (Some(1), Some("double_top"))
    );
    let (status, body) = s.get("/cpm/tasks?mode=sweep", DEMO).await;
    assert_eq!((status, body["code"].as_i64()), (400, Some(400)));
    assert!(body["msg"].as_str().unwrap().contains("'mode'"));

    let (_, list) = s.get("/smart-scanner-backtest/tasks", DEMO).await;
    assert_eq!(list["tasks"][0]["task_id"], json!(scanner));
    assert_eq!(
        (
            list["tasks"][0]["name"].as_str(),
            list["tasks"][0]["find_type"].as_str()
        ),
        (Some("swing"), Some("stock"))
    );
    // A task of another group reads as not found.
    assert_eq!(
        s.get(&format!("/smart-scanner-backtest/status/{scan}"), DEMO)
            .await
            .0,
        404
    );
    assert_eq!(
        s.get(&format!("/backtest/status/{scanner}"), DEMO).await.0,
        404
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_paths_and_methods_answer_in_json() {
    let (s, _dir) = TestServer::fresh().await;
    assert_eq!(
        s.get("/no/such/path", DEMO).await,
        (404, json!({"detail": "no such endpoint"}))
    );
    assert_eq!(
        s.get("/ws/noSuchEndpoint", DEMO).await,
        (404, json!({"error": "no such endpoint", "status": 404}))
    );
    let resp = reqwest::Client::new()
        .post(s.url("/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 405);
    let body: Value = resp.json().await.unwrap();
    assert!(body["detail"].is_string());
    s.stop().await;
}
