//! The real `marketlab` binary with `--metrics-addr`: a known mix of
//! requests and tasks, then `/metrics` as `prometheus_client` parses it,
//! and the trace id of each submit in the worker's log lines.

use super::{collector, in_request, log_lines, spans_of, task_lines, trace_ids};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD, TRIAL_EMAIL, TRIAL_PASSWORD};
use serde_json::{Value, json};
use tests::spawned::Spawned;

/// The value of the sample `name` whose labels include `labels`, summed
/// over the rest (0 when there is none).
fn sample(parsed: &Value, name: &str, labels: &[(&str, &str)]) -> f64 {
    parsed["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == name)
        .filter(|s| labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .map(|s| s["value"].as_f64().unwrap())
        .sum()
}

/// Long-polls `url` as the demo account until SUCCESS: the reads it took
/// and the last answer.
async fn until_success(http: &reqwest::Client, url: &str) -> (usize, Value) {
    let mut reads = 0;
    loop {
        reads += 1;
        let t: Value = http
            .get(url)
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if t["status"] == "SUCCESS" {
            return (reads, t);
        }
        assert_ne!(t["status"], "FAILED", "{t}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_a_known_mix_and_a_submit_s_trace_reaches_the_worker_s_log_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(tests::server::market_dir(), dir.path().join("market")).unwrap();
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    // The trial plan at 3 requests a minute: the 4th and 5th are refused.
    let set = std::process::Command::new(&binary)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["plans", "set", "trial", "--requests-per-minute", "3"])
        .output()
        .unwrap();
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    let s = Spawned::start(
        &binary,
        dir.path(),
        &[
            "--workers",
            "1",
            "--no-scan",
            "--metrics-addr",
            "127.0.0.1:0",
        ],
        "info",
    );
    let metrics_url = s.metrics.clone().expect("the metrics address is printed");
    let http = reqwest::Client::new();
    let demo = |r: reqwest::RequestBuilder| r.basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));

    // Two submits, the second continuing a caller's trace; one refused body.
    let theirs = "4bf92f3577b34da6a3ce929d0e0e4736";
    let mut tasks = Vec::new();
    for traceparent in [None, Some(format!("00-{theirs}-00f067aa0ba902b7-01"))] {
        let mut r = demo(http.post(format!("{}/backtest/start_backtest", s.base)))
            .json(&tests::server::optix_strategy());
        if let Some(t) = &traceparent {
            r = r.header("traceparent", t);
        }
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), 202);
        let trace = r.headers()["x-trace-id"].to_str().unwrap().to_string();
        let body: Value = r.json().await.unwrap();
        tasks.push((body["task_id"].as_str().unwrap().to_string(), trace));
    }
    assert_eq!(tasks[1].1, theirs, "a caller's trace is continued");
    assert_ne!(tasks[0].1, theirs);
    let bad = demo(http.post(format!("{}/backtest/start_backtest", s.base)))
        .json(&json!({"strategy": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    // Each task long-polled to its end.
    let mut status_reads = 0;
    for (id, _) in &tasks {
        let url = format!("{}/backtest/status/{id}?wait=20", s.base);
        status_reads += until_success(&http, &url).await.0;
    }
    // A 2 x 2 grid: four rows through the batch chunks.
    let batch: Value = demo(http.post(format!("{}/backtest/batch", s.base)))
        .json(&json!({"strategy": {"symbol": "SPX", "start_date": "2016-01-04", "risk_control": "//5",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": "20"}}},
            "exit": {"rule_type": "RiskControlOnly"}},
            "grid": {"entry.condition.rule.period": ["20", "50"], "risk_control": ["//5", "//21"]}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let batch_id = batch["task_id"].as_str().unwrap().to_string();
    let batch_url = format!("{}/backtest/batch/{batch_id}?wait=20", s.base);
    let (batch_reads, b) = until_success(&http, &batch_url).await;
    assert_eq!(b["done"], 4, "{b}");
    let health = http.get(format!("{}/health", s.base)).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let unknown = demo(http.get(format!("{}/no/such/endpoint", s.base)))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let mut trial = Vec::new();
    for _ in 0..5 {
        let r = http
            .get(format!(
                "{}/backtest/status/{}",
                s.base,
                uuid::Uuid::new_v4()
            ))
            .basic_auth(TRIAL_EMAIL, Some(TRIAL_PASSWORD))
            .send()
            .await
            .unwrap();
        trial.push(r.status().as_u16());
    }
    assert_eq!(trial, [404, 404, 404, 429, 429]);

    // The tenants' port does not serve the metrics.
    let tenants = demo(http.get(format!("{}/metrics", s.base)))
        .send()
        .await
        .unwrap();
    assert_eq!(tenants.status(), 404);
    let text = http.get(&metrics_url).send().await.unwrap();
    assert_eq!(text.status(), 200);
    assert!(
        text.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = text.text().await.unwrap();
    let parsed = tests::reference::run("parse_prometheus.py", &json!({ "text": text }));

    let requests = |route: &str, method: &str, status: &str| {
        sample(
            &parsed,
            "http_requests_total",
            &[("route", route), ("method", method), ("status", status)],
        )
    };
    assert_eq!(
        requests("/backtest/start_backtest", "POST", "2xx"),
        2.0,
        "{text}"
    );
    assert_eq!(requests("/backtest/start_backtest", "POST", "4xx"), 1.0);
    assert_eq!(
        requests("/backtest/status/{task_id}", "GET", "2xx"),
        status_reads as f64
    );
    assert_eq!(requests("/backtest/status/{task_id}", "GET", "4xx"), 5.0);
    assert_eq!(requests("/health", "GET", "2xx"), 1.0);
    assert_eq!(requests("/backtest/batch", "POST", "2xx"), 1.0);
    assert_eq!(
        requests("/backtest/batch/{batch_id}", "GET", "2xx"),
        batch_reads as f64
    );
    // The unknown path and `/metrics` asked of the tenants' port.
    assert_eq!(requests("unmatched", "GET", "4xx"), 2.0);
    assert_eq!(requests("/backtest/start_backtest", "POST", "5xx"), 0.0);
    // Latency: a histogram, one observation per request.
    assert_eq!(
        sample(
            &parsed,
            "http_request_duration_seconds_count",
            &[("route", "/backtest/start_backtest"), ("method", "POST")]
        ),
        3.0
    );
    let family = |name: &str| {
        parsed["families"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(family("http_request_duration_seconds")["type"], "histogram");
    assert_eq!(family("http_requests")["type"], "counter");
    assert_eq!(
        sample(
            &parsed,
            "tasks_total",
            &[("kind", "strategy_backtest"), ("outcome", "success")]
        ),
        2.0
    );
    assert_eq!(
        sample(&parsed, "tasks_total", &[("outcome", "failed")]),
        0.0
    );
    assert_eq!(
        sample(
            &parsed,
            "tasks_total",
            &[("kind", "batch_backtest"), ("outcome", "success")]
        ),
        1.0
    );
    let chunks = sample(
        &parsed,
        "tasks_total",
        &[("kind", "batch_chunk"), ("outcome", "success")],
    );
    assert!(chunks >= 1.0);
    assert_eq!(sample(&parsed, "batch_rows_total", &[]), 4.0);
    assert_eq!(
        sample(&parsed, "batch_rows_per_second_count", &[]),
        chunks,
        "one rate per chunk"
    );
    for h in [
        "task_run_seconds_count",
        "task_queue_wait_seconds_count",
        "task_attempts_count",
    ] {
        assert_eq!(
            sample(&parsed, h, &[("kind", "strategy_backtest")]),
            2.0,
            "{h}"
        );
    }
    assert_eq!(
        sample(
            &parsed,
            "task_attempts_sum",
            &[("kind", "strategy_backtest")]
        ),
        2.0,
        "each on its first attempt"
    );
    assert_eq!(
        sample(
            &parsed,
            "quota_rejections_total",
            &[("plan", "trial"), ("limit", "requests_per_minute")]
        ),
        2.0
    );
    assert_eq!(
        sample(&parsed, "quota_rejections_total", &[("plan", "pro")]),
        0.0
    );
    assert_eq!(sample(&parsed, "queue_depth", &[("queue", "jobs")]), 0.0);
    assert_eq!(sample(&parsed, "worker_slots_busy", &[]), 0.0);
    assert!(sample(&parsed, "cache_misses_total", &[("cache", "bars")]) >= 1.0);
    assert!(
        sample(&parsed, "cache_hits_total", &[("cache", "bars")]) >= 1.0,
        "the second run reads SPX from memory"
    );
    assert!(sample(&parsed, "cache_bytes", &[("cache", "bars")]) > 0.0);
    // No label carries an account.
    assert!(!text.contains("marketlab.local"), "{text}");

    // Readiness beside the metrics, not on the tenants' port.
    let ready_url = metrics_url.replace("/metrics", "/ready");
    let ready = http.get(&ready_url).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let ready: Value = ready.json().await.unwrap();
    assert_eq!(ready["ready"], true, "{ready}");
    assert_eq!(ready["checks"]["task_store"], "ok");
    assert!(
        ready["checks"]["market_data"]
            .as_str()
            .unwrap()
            .starts_with("ok (")
    );

    // One trace per submit, from the request's log lines to the worker's.
    let logs = log_lines(&s.lines());
    for (id, trace) in &tasks {
        let request_lines = logs
            .iter()
            .filter(|l| trace_ids(l).contains(trace))
            .filter(|l| in_request(l))
            .count();
        assert!(
            request_lines >= 1,
            "the submit's request logged under {trace}"
        );
        let ran = task_lines(&logs, id);
        let messages: Vec<&str> = ran.iter().map(|(m, _)| m.as_str()).collect();
        assert!(
            messages.contains(&"job started") && messages.contains(&"job finished"),
            "{messages:?}"
        );
        for (message, ids) in &ran {
            assert_eq!(ids, &vec![trace.clone()], "{message}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn readiness_is_503_naming_what_is_missing_while_health_stays_200() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(tests::server::market_dir(), dir.path().join("market")).unwrap();
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    let s = Spawned::start(
        &binary,
        dir.path(),
        &[
            "--workers",
            "0",
            "--no-scan",
            "--metrics-addr",
            "127.0.0.1:0",
        ],
        "warn",
    );
    let ready_url = s.metrics.clone().unwrap().replace("/metrics", "/ready");
    let r = reqwest::get(&ready_url).await.unwrap();
    assert_eq!(r.status(), 503);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["ready"], false);
    assert!(
        body["checks"]["workers"]
            .as_str()
            .unwrap()
            .starts_with("none"),
        "{body}"
    );
    assert_eq!(body["checks"]["task_store"], "ok");
    let health = reqwest::get(format!("{}/health", s.base)).await.unwrap();
    assert_eq!(health.status(), 200, "alive, though not ready");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_an_otlp_collector_set_a_submit_and_its_task_arrive_as_parent_and_child_spans() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(tests::server::market_dir(), dir.path().join("market")).unwrap();
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    let (url, got) = collector().await;
    let s = Spawned::start_with(
        &binary,
        dir.path(),
        &["--workers", "1", "--no-scan"],
        "warn",
        &[("MARKETLAB_OTLP_ENDPOINT", &url)],
    );
    let theirs = "0af7651916cd43dd8448eb211c80319c";
    let http = reqwest::Client::new();
    let before = std::time::SystemTime::now();
    let r: Value = http
        .post(format!("{}/backtest/start_backtest", s.base))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .header("traceparent", format!("00-{theirs}-b7ad6b7169203331-01"))
        .json(&tests::server::optix_strategy())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = r["task_id"].as_str().unwrap();
    let done: Value = http
        .get(format!("{}/backtest/status/{id}?wait=20", s.base))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(done["status"], "SUCCESS");

    let ok = tests::server::eventually(std::time::Duration::from_secs(5), || {
        let n = spans_of(&got, theirs).len();
        async move { n >= 2 }
    })
    .await;
    assert!(ok, "{:?}", got.lock().unwrap());
    let all: Vec<Value> = spans_of(&got, theirs)
        .into_iter()
        .map(|(service, s)| {
            assert_eq!(service, "marketlab");
            s
        })
        .collect();
    let request = all
        .iter()
        .find(|s| s["name"] == "POST /backtest/start_backtest")
        .expect("the submit's span");
    let task = all
        .iter()
        .find(|s| s["name"] == "task strategy_backtest")
        .expect("the task's span");
    assert_eq!(request["kind"], 2, "server");
    assert_eq!(
        request["parentSpanId"], "b7ad6b7169203331",
        "the caller's span"
    );
    assert_eq!(task["kind"], 5, "consumer");
    assert_eq!(
        task["parentSpanId"], request["spanId"],
        "the task is the request's child"
    );
    let attr = |span: &Value, key: &str| {
        span["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == key)
            .map(|a| a["value"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        attr(request, "http.response.status_code"),
        json!({"intValue": "202"})
    );
    assert_eq!(
        attr(request, "http.route"),
        json!({"stringValue": "/backtest/start_backtest"})
    );
    assert_eq!(attr(task, "marketlab.task_id"), json!({"stringValue": id}));
    assert_eq!(
        attr(task, "marketlab.disposition"),
        json!({"stringValue": "done"})
    );
    let nanos = |v: &Value| v.as_str().unwrap().parse::<u128>().unwrap();
    let since = before
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    for s in [request, task] {
        let (start, end) = (nanos(&s["startTimeUnixNano"]), nanos(&s["endTimeUnixNano"]));
        assert!(since <= start && start <= end, "{s}");
    }
    assert!(nanos(&task["startTimeUnixNano"]) >= nanos(&request["startTimeUnixNano"]));
}
