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

/// Sets `field` of task `id` as the store never writes it, through the
/// database file the server runs on.
fn damage(dir: &std::path::Path, id: uuid::Uuid, field: &str, value: rusqlite::types::Value) {
    let c = rusqlite::Connection::open(dir.join("db.sqlite")).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
    let sql = format!("UPDATE tasks SET {field} = ?1 WHERE id = ?2");
    let changed = c
        .execute(&sql, rusqlite::params![value, id.to_string()])
        .unwrap();
    assert_eq!(changed, 1);
}

/// Damaged task rows answer 200 FAILED with the damage named on every
/// route that reads one task, list FAILED, and never answer 500; reads
/// that need more than the status answer 409; a batch whose chunks are
/// damaged still gives its whole table, those rows failing with the
/// damage; a task whose owner cannot be read is no one's.
#[tokio::test(flavor = "multi_thread")]
async fn damaged_tasks_read_failed_on_every_route_and_never_answer_500() {
    use platform::tasks::damaged;
    use rusqlite::types::Value::{Blob, Text};
    let (s, dir) = TestServer::fresh().await;
    let text = |s: &str| Text(s.into());

    // A batch of 251 strategies, two chunks, run to the end.
    let strategy = json!({"symbol": "SPX", "start_date": "2016-01-04", "risk_control": "//21",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
            "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": "20"}}},
        "exit": {"rule_type": "RiskControlOnly"}});
    let periods: Vec<String> = (5..256).map(|p| p.to_string()).collect();
    let grid = json!({"strategy": strategy, "grid": {"entry.condition.rule.period": periods}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &grid).await;
    assert_eq!(status, 202, "{sub}");
    let batch = sub["task_id"].as_str().unwrap().to_string();
    let mut standing = json!(null);
    for _ in 0..30 {
        standing = s
            .get(&format!("/backtest/batch/{batch}?wait=20"), DEMO)
            .await
            .1;
        if standing["status"] == "SUCCESS" {
            break;
        }
    }
    assert_eq!(standing["status"], "SUCCESS", "{standing}");
    let record = s.state.tasks.get(batch.parse().unwrap()).await.unwrap();
    let chunks: Vec<uuid::Uuid> =
        serde_json::from_value(record.unwrap().result.unwrap()["chunks"].clone()).unwrap();
    assert_eq!(chunks.len(), 2);
    damage(dir.path(), chunks[0], "params", text("{not json"));
    damage(dir.path(), chunks[1], "result", text("[1, not json"));
    let (status, rows) = s
        .get(&format!("/backtest/batch/{batch}/results"), DEMO)
        .await;
    assert_eq!(status, 200, "{rows}");
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 251, "every row, once");
    let params_gone = damaged("params is not JSON");
    assert!(
        rows[..250]
            .iter()
            .enumerate()
            .all(|(k, r)| r["index"] == k && r["error"] == params_gone.as_str()),
        "{:?}",
        &rows[..2]
    );
    assert_eq!(rows[250]["index"], 250);
    assert_eq!(rows[250]["error"], damaged("result is not a chunk's rows"));
    assert_eq!(
        rows[250]["params"],
        json!({"entry.condition.rule.period": "255"}),
        "a chunk whose parameters read keeps them"
    );
    let (status, parquet) = s
        .get_raw(
            &format!("/backtest/batch/{batch}/results?format=parquet"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200);
    assert!(parquet.starts_with(b"PAR1"));
    let (status, page) = s
        .get(
            &format!("/backtest/batch/{batch}/rows?cursor=249&limit=2"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["rows"][1]["error"],
        damaged("result is not a chunk's rows")
    );

    // Tasks of each kind, damaged as a hand-edit leaves them.
    let backtest = create(&s, TaskKind::StrategyBacktest, json!({"symbol": "SPX"})).await;
    let portfolio = create(
        &s,
        TaskKind::PortfolioBacktest,
        json!({"universe": ["AAPL"]}),
    )
    .await;
    let broken_batch = create(&s, TaskKind::BatchBacktest, json!({})).await;
    let scan = create(&s, TaskKind::CpmScan, json!({"symbol": "SPX"})).await;
    let ownerless = create(&s, TaskKind::StrategyBacktest, json!({"symbol": "SPX"})).await;
    damage(dir.path(), backtest, "kind", text("no_such_kind"));
    damage(dir.path(), portfolio, "params", text("{not json"));
    damage(dir.path(), broken_batch, "params", text("{not json"));
    damage(dir.path(), scan, "status", text("DONE"));
    damage(dir.path(), ownerless, "owner", Blob(vec![0xff]));
    let kind_gone = damaged("kind is not a known task kind");
    let status_gone = damaged("status is not PENDING, RUNNING, SUCCESS or FAILED");

    // Every kind's status route reads a task whose kind is damaged.
    for path in [
        format!("/backtest/status/{backtest}"),
        format!("/cpm/status/{backtest}"),
        format!("/smart-scanner-backtest/status/{backtest}?wait=5"),
        format!("/backtest/portfolio/{backtest}"),
    ] {
        let (status, body) = s.get(&path, DEMO).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(
            (body["status"].as_str(), body["error"].as_str()),
            (Some("FAILED"), Some(kind_gone.as_str())),
            "{path}"
        );
    }
    let (status, body) = s.get(&format!("/backtest/batch/{backtest}"), DEMO).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("FAILED")),
        "{body}"
    );
    let (status, body) = s
        .get(&format!("/backtest/portfolio/{portfolio}"), DEMO)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["status"].as_str(), body["error"].as_str()),
        (Some("FAILED"), Some(params_gone.as_str()))
    );
    let (status, body) = s.get(&format!("/cpm/status/{scan}"), DEMO).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["error"], status_gone);
    let (status, body) = s
        .get(&format!("/backtest/batch/{broken_batch}"), DEMO)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["status"].as_str(), body["error"].as_str()),
        (Some("FAILED"), Some(params_gone.as_str()))
    );
    for (path, want) in [
        (format!("/backtest/batch/{broken_batch}/results"), 409),
        (format!("/backtest/batch/{broken_batch}/rows"), 409),
        (
            format!("/backtest/batch/{broken_batch}/monte-carlo?row=0"),
            409,
        ),
        (format!("/backtest/monte-carlo/{backtest}"), 409),
        (format!("/backtest/portfolio/{portfolio}/chart"), 409),
        (format!("/backtest/status/{ownerless}"), 404),
    ] {
        let (status, body) = s.get(&path, DEMO).await;
        assert_eq!(status, want, "{path}: {body}");
    }
    for path in [
        format!("/backtest/report/{backtest}"),
        format!("/backtest/batch/{broken_batch}/report"),
        format!("/backtest/portfolio/{portfolio}/report"),
        format!("/cpm/report/{scan}"),
    ] {
        let (status, page) = s.get_text(&path, DEMO).await;
        assert_eq!(status, 200, "{path}: {page}");
        assert!(page.contains("the stored task is damaged ("), "{path}");
    }

    // Listed FAILED, the ownerless one nowhere.
    let (status, list) = s.get("/backtest/tasks", DEMO).await;
    assert_eq!(status, 200, "{list}");
    let listed: Vec<(String, String)> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task_id"].as_str().unwrap().into(),
                t["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [(backtest.to_string(), "FAILED".to_string())],
        "{list}"
    );
    // A damaged status is FAILED to a filter too.
    let (_, list) = s.get("/cpm/tasks?status=FAILED", DEMO).await;
    assert_eq!(list["tasks"][0]["task_id"], json!(scan), "{list}");
    let (status, list) = s.get("/backtest/batches", DEMO).await;
    assert_eq!(status, 200, "{list}");
    let batches: Vec<(&str, &str)> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["batch_id"].as_str().unwrap(),
                b["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        batches,
        [
            (broken_batch.to_string().as_str(), "FAILED"),
            (backtest.to_string().as_str(), "FAILED"),
            (batch.as_str(), "SUCCESS")
        ],
        "newest first, the one whose kind is damaged among them"
    );
    s.stop().await;
}
