//! What every deployment meters: a known mix of requests and a task over the
//! real HTTP stack leaves exactly the expected counters in its usage store,
//! per account, and `/usage` shows each caller only its own.
//!
//! The suite takes the deployment's state (its ports and its metering), serves
//! it on 127.0.0.1, and runs the submitted task itself with the deployment's
//! job handlers, so the same checks hold on SQLite and on DynamoDB.

use super::unique;
use api::AppState;
use chrono::TimeDelta;
use platform::queue::JobMessage;
use platform::worker::{Disposition, WorkerDeps, run_job};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const PASSWORD: &str = "metered-password";

pub async fn run_all(state: AppState) {
    let metering = state.metering.clone().expect("a metered deployment");
    let (a, b, data_only) = (
        format!("{}@example.test", unique("a")),
        format!("{}@example.test", unique("b")),
        format!("{}@example.test", unique("d")),
    );
    let store = state.auth.store();
    for (email, plan) in [(&a, "pro"), (&b, "pro"), (&data_only, "data")] {
        platform::accounts::add_account(store.as_ref(), email, PASSWORD, plan, vec![])
            .await
            .unwrap();
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::serve::serve(
        listener,
        api::routes::embedded(&state),
        Default::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let http = reqwest::Client::new();
    let get = |path: &str, who: &str| {
        http.get(format!("{base}{path}"))
            .basic_auth(who, Some(PASSWORD))
            .send()
    };

    // The mix, as A: 3 backtest reads, 2 analytics reads, 2 data reads of
    // 5 records each, one strategy submitted and run.
    for _ in 0..3 {
        assert_eq!(get("/backtest/tasks", &a).await.unwrap().status(), 200);
    }
    for _ in 0..2 {
        assert_eq!(get("/cpm/tasks", &a).await.unwrap().status(), 200);
    }
    let mut data_bytes = 0;
    for _ in 0..2 {
        let r = get("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=5", &a)
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body = r.bytes().await.unwrap();
        let records: BTreeMap<String, Value> = serde_json::from_slice(&body).unwrap();
        assert_eq!(records.len(), 5);
        data_bytes += body.len() as u64;
    }
    let strategy = crate::server::optix_strategy();
    let submitted: Value = http
        .post(format!("{base}/backtest/start_backtest"))
        .basic_auth(&a, Some(PASSWORD))
        .json(&strategy)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id: uuid::Uuid = submitted["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{submitted}"))
        .parse()
        .unwrap();
    let deps = WorkerDeps {
        tasks: state.tasks.clone(),
        handlers: Arc::new(api::jobs::registry(&state)),
        lease: TimeDelta::minutes(5),
        max_attempts: 3,
        stall: std::time::Duration::from_secs(5 * 60),
        after: None,
        metering: Some(metering.clone()),
        queue: state.queue.clone(),
        count_ends: false,
    };
    let task = state.tasks.get(id).await.unwrap().unwrap();
    let started = std::time::Instant::now();
    assert_eq!(
        run_job(&deps, &JobMessage::for_task(&task)).await.unwrap(),
        Disposition::Done
    );
    let wall_ms = started.elapsed().as_millis() as u64;

    // Not counted: a wrong password, and a plan without the service.
    assert_eq!(
        http.get(format!("{base}/backtest/tasks"))
            .basic_auth(&a, Some("wrong"))
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        get("/backtest/tasks", &data_only).await.unwrap().status(),
        403
    );
    // B's one request is B's.
    assert_eq!(get("/backtest/tasks", &b).await.unwrap().status(), 200);

    metering.flush().await.unwrap();
    let today = chrono::Utc::now().date_naive();
    let counters = |days: Vec<platform::usage::UsageDay>| -> BTreeMap<String, u64> {
        let mut all = BTreeMap::new();
        for d in days {
            for (k, n) in d.counters {
                *all.entry(k).or_insert(0) += n;
            }
        }
        all
    };
    let mine = counters(metering.month(&a, today).await.unwrap());
    let compute = mine["compute_ms:strategy_backtest"];
    // The run's time, counted as at least the minimum of an attempt.
    let least = platform::metering::MIN_ATTEMPT_COMPUTE_MS;
    assert!(
        compute == least || (least..=wall_ms).contains(&compute),
        "compute {compute} ms: the run's {wall_ms} ms, at least {least}"
    );
    let expected: BTreeMap<String, u64> = [
        ("requests:backtest", 4),
        ("requests:analytics", 2),
        ("requests:data", 2),
        ("rows:data", 10),
        ("bytes:data", data_bytes),
        ("compute_ms:strategy_backtest", compute),
        ("tasks:strategy_backtest", 1),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    assert_eq!(mine, expected);
    assert_eq!(
        counters(metering.month(&b, today).await.unwrap()),
        [("requests:backtest".to_string(), 1)].into()
    );
    assert!(metering.month(&data_only, today).await.unwrap().is_empty());

    // `/usage` shows each caller its own figures, with the plan's limits.
    let usage: Value = get("/usage", &a).await.unwrap().json().await.unwrap();
    assert_eq!(usage["account"], json!(a));
    assert_eq!(usage["total"]["requests"]["backtest"], 4, "{usage}");
    assert_eq!(usage["total"]["requests"]["data"], 2);
    assert_eq!(usage["total"]["data_rows"], 10);
    assert_eq!(usage["total"]["compute_ms"]["strategy_backtest"], compute);
    let limits = metering.limits("pro").await;
    assert_eq!(
        usage["plan"]["limits"]["requests_per_minute"],
        limits.requests_per_minute
    );
    let theirs: Value = get("/ws/usage", &b).await.unwrap().json().await.unwrap();
    assert_eq!(theirs["account"], json!(b));
    assert_eq!(theirs["total"]["requests"]["backtest"], 1, "{theirs}");
    assert_eq!(theirs["total"]["data_rows"], 0);
    // Every plan may read its own usage.
    let own: Value = get("/usage", &data_only)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(own["plan"]["code"], "data");
    let bad = get("/usage?month=2026-13", &a).await.unwrap();
    assert_eq!(bad.status(), 400);
    let bad: Value = bad.json().await.unwrap();
    assert!(bad["detail"].as_str().unwrap().contains("'month'"), "{bad}");

    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
