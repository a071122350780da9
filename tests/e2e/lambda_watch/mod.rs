//! The functions under `cargo lambda watch`: requests pass through the real
//! Lambda runtime API and lambda_http; SQS reaches the worker through a bridge
//! that behaves like Lambda's event source mapping (batches of up to 10,
//! partial batch failures left for redelivery after the visibility timeout,
//! redrive to the dead-letter queue by SQS itself).

mod support;

use aws_adapters::{SqsQueue, provision};
use chrono::TimeDelta;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::queue::{JobMessage, JobQueue};
use platform::tasks::{Claim, NewTask, TaskKind, TaskStatus, now};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use support::*;
use tests::contract::unique;

#[tokio::test(flavor = "multi_thread")]
async fn functions_under_the_lambda_runtime_on_the_emulator() {
    let tests::emulator::Deployment {
        clients: c,
        names,
        state,
    } = tests::emulator::deployment().await;

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = tests::emulator::function_env(&names);
    let env_vars: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let cargo_lambda = tests::reference::python().with_file_name("cargo-lambda");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let log_path =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("lambda-watch-{port}.log"));
    let log = std::fs::File::create(&log_path).unwrap();
    let _watch = Watch(
        tests::as_outside_cargo_test(&mut Command::new(cargo_lambda))
            .args([
                "lambda",
                "watch",
                "--ignore-changes",
                "--quiet",
                "-A",
                "127.0.0.1",
                "-P",
                &port.to_string(),
                "--env-vars",
                &env_vars.join(","),
            ])
            .current_dir(&repo)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("cargo lambda watch starts"),
        log_path,
    );
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(600))
        .build()
        .unwrap();
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "cargo lambda watch did not listen"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let url = |path: &str| format!("{base}/lambda-url/backtest{path}");
    let get = |path: String, user: (&'static str, &'static str)| {
        let req = http.get(url(&path)).basic_auth(user.0, Some(user.1));
        async move {
            let r = send(req).await;
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let first = Instant::now();
    assert_eq!(
        get("/health".into(), (DEMO_EMAIL, DEMO_PASSWORD)).await,
        (200, json!({"status": "ok"}))
    );
    let first_answer = first.elapsed();
    let warm = Instant::now();
    assert_eq!(
        get("/health".into(), (DEMO_EMAIL, DEMO_PASSWORD)).await.0,
        200
    );
    let warm_answer = warm.elapsed();
    assert_eq!(
        send(http.get(url("/backtest/tasks")))
            .await
            .status()
            .as_u16(),
        401
    );
    // Failed logins lock through the DynamoDB limits table: 429 after five.
    let mut last = None;
    for _ in 0..7 {
        let r = send(
            http.get(url("/backtest/tasks"))
                .basic_auth("nobody@example.test", Some("guess")),
        )
        .await;
        let retry = r.headers().get("retry-after").is_some();
        last = Some((r.status().as_u16(), retry, r.json::<Value>().await.unwrap()));
    }
    let (status, retry, body) = last.unwrap();
    assert_eq!((status, retry), (429, true), "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("too many failed logins")
    );

    let strategy = tests::server::optix_strategy();
    let mut latencies = Vec::new();
    let mut first_result = Value::Null;
    let worker_first = Instant::now();
    for i in 0..100 {
        let t0 = Instant::now();
        let r = demo_json(http.post(url("/backtest/start_backtest")).json(&strategy)).await;
        let id = r["task_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_string();
        assert_eq!(deliver(&http, &base, &c, &names.queue_url).await, (1, 0));
        let (status, task) = get(
            format!("/backtest/status/{id}"),
            (DEMO_EMAIL, DEMO_PASSWORD),
        )
        .await;
        assert_eq!(
            (status, task["status"].as_str()),
            (200, Some("SUCCESS")),
            "{task}"
        );
        latencies.push(t0.elapsed());
        if i == 0 {
            println!(
                "first task through the worker function (starts it): {:?}",
                worker_first.elapsed()
            );
            first_result = task["result"].clone();
        } else {
            assert_eq!(task["result"], first_result);
        }
    }
    latencies.sort();
    println!(
        "functions under cargo lambda watch: first answer {first_answer:?}, warm {warm_answer:?}; task latency p50 {:?}, p99 {:?} (100 tasks)",
        latencies[49], latencies[98]
    );

    // The same result as the embedded default.
    let (embedded, _dir) = tests::server::TestServer::fresh().await;
    assert_eq!(
        embedded_result(
            &embedded,
            "/backtest/start_backtest",
            "/backtest/status",
            &strategy
        )
        .await,
        first_result
    );

    // The analytics function reads the market data from S3 and answers as the
    // embedded server does: seasonality (all-in-one) and a form-encoded POST.
    let analytics = |path: &str| format!("{base}/lambda-url/analytics{path}");
    let t0 = Instant::now();
    let all: Value = send(
        http.get(analytics("/seasonality?ticker=SPX"))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)),
    )
    .await
    .json()
    .await
    .unwrap();
    println!(
        "analytics function, first all-in-one seasonality: {:?}",
        t0.elapsed()
    );
    assert_eq!(all["code"], 200, "{all}");
    assert_eq!(all["data"].as_object().unwrap().len(), 8);
    assert_eq!(
        embedded
            .get("/seasonality?ticker=SPX", Some((DEMO_EMAIL, DEMO_PASSWORD)))
            .await
            .1,
        all
    );
    let form = [
        ("benchmark", "SPX"),
        ("stock_comparison", "[\"IVV\", \"TLT\"]"),
        ("start_date", "2020-01-01"),
        ("end_date", "2020-12-31"),
    ];
    let corr: Value = send(
        http.post(analytics("/symbol_corr"))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .form(&form),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(corr["code"], 211, "{corr}");
    let body = json!({"benchmark": "SPX", "stock_comparison": ["IVV", "TLT"],
        "start_date": "2020-01-01", "end_date": "2020-12-31"});
    assert_eq!(
        embedded
            .post("/symbol_corr", Some((DEMO_EMAIL, DEMO_PASSWORD)), &body)
            .await
            .1,
        corr
    );

    // A pattern scan through the analytics function and the worker function
    // (a universe search, reading every series from S3): the same result as
    // the embedded server's; another tenant's id is 404.
    let search = json!({"symbol": "SPX", "corr_per": 70, "time_in_market": 21,
        "start_date": "2024-03-01", "end_date": "2024-05-31", "universe": "sp1500", "max_matches": 5});
    let sub = demo_json(http.post(analytics("/cpm/scan/start")).json(&search)).await;
    let cpm_id = sub["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{sub}"))
        .to_string();
    assert_eq!(deliver(&http, &base, &c, &names.queue_url).await, (1, 0));
    let cpm_task = demo_json(http.get(analytics(&format!("/cpm/status/{cpm_id}")))).await;
    assert_eq!(cpm_task["status"], "SUCCESS", "{cpm_task}");
    assert_eq!(cpm_task["result"]["code"], 200, "{cpm_task}");
    assert_eq!(cpm_task["result"]["data"]["count"], 5);
    assert_eq!(
        embedded_result(&embedded, "/cpm/scan/start", "/cpm/status", &search).await["data"],
        cpm_task["result"]["data"]
    );
    assert_eq!(
        other_tenant(&http, analytics(&format!("/cpm/status/{cpm_id}"))).await,
        404
    );

    // A scanner backtest through the analytics function and the worker
    // function: the same result as the embedded server's; another tenant's
    // id is 404.
    let trader = json!({"name": "lambda", "start_date": "2026-06-01", "end_date": "2026-11-20",
        "find_type": "stock/etf", "signals": ["All"], "total_capital": 100000,
        "long_short_ratio": "0.8/0.2", "commission": 0.05});
    let sub = demo_json(
        http.post(analytics("/smart-scanner-backtest/start"))
            .json(&trader),
    )
    .await;
    let trader_id = sub["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{sub}"))
        .to_string();
    assert_eq!(deliver(&http, &base, &c, &names.queue_url).await, (1, 0));
    let trader_task = demo_json(http.get(analytics(&format!(
        "/smart-scanner-backtest/status/{trader_id}"
    ))))
    .await;
    assert_eq!(trader_task["status"], "SUCCESS", "{trader_task}");
    assert_eq!(trader_task["result"]["msg"], "Finish Scanner trader!");
    assert_eq!(
        embedded_result(
            &embedded,
            "/smart-scanner-backtest/start",
            "/smart-scanner-backtest/status",
            &trader
        )
        .await["data"],
        trader_task["result"]["data"]
    );
    assert_eq!(
        other_tenant(
            &http,
            analytics(&format!("/smart-scanner-backtest/status/{trader_id}"))
        )
        .await,
        404
    );

    // The nightly scanner: the target of the template's schedule, invoked
    // as EventBridge Scheduler does, writes the day's file to the bucket; the
    // analytics function then answers from it as the embedded server does.
    let nightly = scheduled_binary();
    let spx = embedded.state.market.daily("SPX").await.unwrap();
    let before = spx.date(spx.len() - 2);
    let key = platform::scanner::key(before);
    let exists = |key: String| {
        let s3 = c.s3.clone();
        let bucket = names.bucket.clone();
        async move {
            s3.head_object()
                .bucket(bucket)
                .key(key)
                .send()
                .await
                .is_ok()
        }
    };
    assert!(!exists(key.clone()).await);
    let invoke = |payload: Value| {
        let req = http
            .post(format!("{base}/2015-03-31/functions/{nightly}/invocations"))
            .json(&payload);
        async move { send(req).await.json::<Value>().await.unwrap() }
    };
    let t0 = Instant::now();
    let ran = invoke(json!({"date": before.to_string()})).await;
    assert_eq!(ran["date"], before.to_string(), "{ran}");
    println!(
        "nightly scanner function (first invocation): {:?}",
        t0.elapsed()
    );
    assert!(exists(key).await);
    let latest_ran = invoke(json!({})).await;
    let latest = spx.date(spx.len() - 1);
    assert_eq!(latest_ran["date"], latest.to_string(), "{latest_ran}");
    for (d, path) in [
        (
            Some(before),
            format!("/smart-stock-scanner/latest-day-all?date={before}&category=MidTermAI"),
        ),
        (None, "/smart-stock-scanner/latest-day-all".to_string()),
    ] {
        let lambda = demo_json(http.get(analytics(&path))).await;
        services::analytics::scanner::nightly::run(
            embedded.state.market.as_ref(),
            embedded.state.scanner.as_ref(),
            d,
            &platform::worker::Progress::default(),
        )
        .await
        .unwrap();
        let local = embedded
            .get(&path, Some((DEMO_EMAIL, DEMO_PASSWORD)))
            .await
            .1;
        assert_eq!(lambda, local, "{path}");
        assert!(
            matches!(lambda["code"].as_u64(), Some(200 | 407)),
            "{lambda}"
        );
    }
    let bad = invoke(json!({"date": "2026-13-01"})).await;
    assert!(bad.to_string().contains("date"), "{bad}");
    embedded.stop().await;

    // A batch file dropped in the bucket: the S3 event reaches the worker
    // through the queue, the batch runs in chunks, and its table is written
    // beside the file.
    aws_adapters::provision::bucket_notifications(&c, &names.bucket, &names.queue_url, None)
        .await
        .unwrap();
    let sma = |period: &str| {
        json!({"symbol": "SPX", "start_date": "2020-01-02", "risk_control": "//10",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": period}}},
            "exit": {"rule_type": "RiskControlOnly"}})
    };
    let file = format!("{}\n{}\n", sma("20"), sma("50"));
    let dropped = format!("batches/{DEMO_EMAIL}/periods.jsonl");
    c.s3.put_object()
        .bucket(&names.bucket)
        .key(&dropped)
        .body(file.into_bytes().into())
        .send()
        .await
        .unwrap();
    let results = format!("batches/{DEMO_EMAIL}/periods.results.parquet");
    let t0 = Instant::now();
    while !exists(results.clone()).await {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no results for the dropped batch"
        );
        deliver(&http, &base, &c, &names.queue_url).await;
    }
    let table =
        c.s3.get_object()
            .bucket(&names.bucket)
            .key(&results)
            .send()
            .await
            .unwrap();
    let bytes = table.body.collect().await.unwrap().into_bytes();
    let table = platform::marketdata::codec::from_parquet(bytes).unwrap();
    assert_eq!(table.num_rows(), 2);
    let errors = platform::marketdata::columns::texts(&table, "error").unwrap();
    assert!(errors.iter().all(Option::is_none), "{errors:?}");
    println!("dropped batch file to results: {:?}", t0.elapsed());

    // A backfill invoked by hand records the history in the bucket; the
    // same scanner backtest through the functions then reads it, and
    // answers as it did when it computed every session.
    let filled = invoke(json!({"from": "2026-06-01", "date": latest.to_string()})).await;
    assert_eq!(filled["from"], "2026-06-01", "{filled}");
    assert_eq!(filled["months"], 6, "{filled}");
    assert!(exists(platform::scanner::history_key(before)).await);
    let mut again = trader.clone();
    again["name"] = json!("lambda, from the history");
    let sub = demo_json(
        http.post(analytics("/smart-scanner-backtest/start"))
            .json(&again),
    )
    .await;
    let again_id = sub["task_id"].as_str().unwrap_or_else(|| panic!("{sub}"));
    assert_eq!(deliver(&http, &base, &c, &names.queue_url).await, (1, 0));
    let again_task = demo_json(http.get(analytics(&format!(
        "/smart-scanner-backtest/status/{again_id}"
    ))))
    .await;
    assert_eq!(again_task["status"], "SUCCESS", "{again_task}");
    assert_eq!(again_task["result"]["data"], trader_task["result"]["data"]);
    // Its report page comes through the function as HTML, its script and
    // the chart library through the backtest function.
    let page = send(
        http.get(analytics(&format!(
            "/smart-scanner-backtest/report/{again_id}"
        )))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)),
    )
    .await;
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = page.text().await.unwrap();
    assert!(
        html.contains(r#"<span id="status">SUCCESS</span>"#) && html.contains("report-data"),
        "{html}"
    );
    for asset in ["/assets/report-scanner.js", "/assets/lightweight-charts.js"] {
        let r = send(http.get(url(asset))).await;
        assert_eq!(r.status(), 200, "{asset}");
        assert!(r.text().await.unwrap().len() > 1000, "{asset}");
    }

    // Paging, unknown and foreign ids.
    let (_, page) = get(
        "/backtest/tasks?limit=7&offset=95".into(),
        (DEMO_EMAIL, DEMO_PASSWORD),
    )
    .await;
    assert_eq!(
        (
            page["total"].as_u64(),
            page["tasks"].as_array().unwrap().len()
        ),
        (Some(100), 5)
    );
    let (_, newest) = get(
        "/backtest/tasks?limit=2".into(),
        (DEMO_EMAIL, DEMO_PASSWORD),
    )
    .await;
    assert!(newest["tasks"][0]["created_at"].as_str() >= newest["tasks"][1]["created_at"].as_str());
    let any = newest["tasks"][0]["task_id"].as_str().unwrap().to_string();
    assert_eq!(
        get(
            format!("/backtest/status/{}", uuid::Uuid::new_v4()),
            (DEMO_EMAIL, DEMO_PASSWORD)
        )
        .await
        .0,
        404
    );
    assert_eq!(
        get(
            format!("/backtest/status/{any}"),
            ("other@example.test", "other-password")
        )
        .await
        .0,
        404
    );

    // A permanent failure: FAILED, acknowledged, not retried.
    let bad = state
        .tasks
        .create(NewTask {
            owner: DEMO_EMAIL.into(),
            kind: TaskKind::StrategyBacktest,
            params: json!({"symbol": "NOPE", "entry": strategy["entry"], "exit": strategy["exit"]}),
        })
        .await
        .unwrap();
    state
        .queue
        .enqueue(JobMessage::for_task(&bad))
        .await
        .unwrap();
    assert_eq!(deliver(&http, &base, &c, &names.queue_url).await, (1, 0));
    assert_eq!(
        state.tasks.get(bad.id).await.unwrap().unwrap().status,
        TaskStatus::Failed
    );
    assert_eq!(
        deliver(&http, &base, &c, &names.queue_url).await,
        (0, 0),
        "nothing left to redeliver"
    );

    // A worker killed mid-job: after its lease the redelivered message finishes the task once.
    let crashed = state
        .tasks
        .create(NewTask {
            owner: DEMO_EMAIL.into(),
            kind: TaskKind::StrategyBacktest,
            params: strategy.clone(),
        })
        .await
        .unwrap();
    assert!(matches!(
        state
            .tasks
            .claim(
                crashed.id,
                now() - TimeDelta::hours(1),
                TimeDelta::minutes(16)
            )
            .await
            .unwrap(),
        Claim::Claimed(_)
    ));
    state
        .queue
        .enqueue(JobMessage::for_task(&crashed))
        .await
        .unwrap();
    assert_eq!(deliver(&http, &base, &c, &names.queue_url).await, (1, 0));
    let done = state.tasks.get(crashed.id).await.unwrap().unwrap();
    assert_eq!((done.status, done.attempts), (TaskStatus::Success, 2));

    // A message that keeps failing is redelivered after the visibility timeout,
    // then moved to the dead-letter queue by the redrive policy.
    let name = unique("retry");
    let retry_url = provision::queue(&c, &name, 2, 1).await.unwrap();
    let retry = SqsQueue::new(c.sqs.clone(), &retry_url);
    let held = state
        .tasks
        .create(NewTask {
            owner: DEMO_EMAIL.into(),
            kind: TaskKind::StrategyBacktest,
            params: strategy.clone(),
        })
        .await
        .unwrap();
    assert!(matches!(
        state
            .tasks
            .claim(held.id, now(), TimeDelta::hours(1))
            .await
            .unwrap(),
        Claim::Claimed(_)
    ));
    retry.enqueue(JobMessage::for_task(&held)).await.unwrap();
    assert_eq!(
        deliver(&http, &base, &c, &retry_url).await,
        (1, 1),
        "busy: reported as a batch item failure"
    );
    // Hidden for the visibility timeout (1 s), then received again: each
    // receive below long-polls the queue for a second.
    let started = Instant::now();
    let again = loop {
        let got = deliver(&http, &base, &c, &retry_url).await;
        if got != (0, 0) || started.elapsed() > Duration::from_secs(30) {
            break got;
        }
    };
    assert_eq!(again, (1, 1), "redelivered after the visibility timeout");
    // Past the redrive policy's two receives, the next receive moves it to
    // the dead-letter queue: it is never delivered a third time.
    let dlq_url = tests::emulator::dead_letter_url(&c, &retry_url).await;
    let dlq = SqsQueue::new(c.sqs.clone(), dlq_url);
    let started = Instant::now();
    let dead = loop {
        assert_eq!(
            deliver(&http, &base, &c, &retry_url).await,
            (0, 0),
            "gone from the queue after two receives"
        );
        let dead = dlq.receive(10, 1).await.unwrap();
        if !dead.is_empty() {
            break dead;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never moved to the dead-letter queue"
        );
    };
    assert_eq!(
        dead.iter().map(|d| d.message.task_id).collect::<Vec<_>>(),
        vec![held.id],
        "in the dead-letter queue"
    );
}
