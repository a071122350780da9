//! The AWS path on the emulator: the backtest and worker *binaries* under
//! the Lambda Runtime API write EMF documents after each invocation, valid
//! by the specification and counting a known mix; a submit's trace id (or
//! the X-Ray header SQS hands on) is the one in the worker's log lines.

use super::{collector, in_request, log_lines, spans_of, task_lines, trace_ids};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::json;
use tests::emf::{self, count, last, sum};
use tests::emulator::{function_env, receive_batch, settle_batch};
use tests::runtime_api::{Function, answer_json, basic, http_event, workspace_binaries};

#[tokio::test(flavor = "multi_thread")]
async fn lambda_functions_emit_valid_emf_counting_a_known_mix_and_carry_one_trace_through_sqs() {
    let tests::emulator::Deployment {
        clients: c,
        names,
        state,
    } = tests::emulator::deployment().await;
    let [backtest, worker] = workspace_binaries(["backtest", "worker"]).await;
    let mut env = function_env(&names);
    env.push(("MARKETLAB_QUEUE_SAMPLE_SECONDS", "0".into()));
    // Info lines too: each request's and each job's are what is traced.
    env.retain(|(k, _)| *k != "RUST_LOG");
    env.push(("RUST_LOG", "info".into()));
    let (collector_url, got) = collector().await;
    env.push(("MARKETLAB_OTLP_ENDPOINT", collector_url));
    let auth = basic(DEMO_EMAIL, DEMO_PASSWORD);

    let mut http = Function::new(&backtest, "backtest", 1024, &env)
        .await
        .keep_lines();
    let theirs = "4bf92f3577b34da6a3ce929d0e0e4736";
    let mut tasks = Vec::new();
    for traceparent in [None, Some(format!("00-{theirs}-00f067aa0ba902b7-01"))] {
        let mut event = http_event(
            "POST",
            "/backtest/start_backtest",
            Some(&tests::server::optix_strategy()),
            Some(&auth),
        );
        if let Some(t) = traceparent {
            event["headers"]["traceparent"] = json!(t);
        }
        let a = http.invoke(event).await.answer;
        assert_eq!(a["statusCode"], 202, "{a}");
        let trace = a["headers"]["x-trace-id"].as_str().unwrap().to_string();
        tasks.push((
            answer_json(&a)["task_id"].as_str().unwrap().to_string(),
            trace,
        ));
    }
    assert_eq!(tasks[1].1, theirs);
    let bad = http
        .invoke(http_event(
            "POST",
            "/backtest/start_backtest",
            Some(&json!({"strategy": 1})),
            Some(&auth),
        ))
        .await
        .answer;
    assert_eq!(bad["statusCode"], 400);
    let health = http
        .invoke(http_event("GET", "/health", None, None))
        .await
        .answer;
    assert_eq!(health["statusCode"], 200);
    let unknown = http
        .invoke(http_event("GET", "/no/such/endpoint", None, Some(&auth)))
        .await
        .answer;
    assert_eq!(unknown["statusCode"], 404);

    // A third task queued with no trace attribute: SQS's X-Ray header is
    // what the event source mapping hands on, and the worker continues it.
    let third = state
        .tasks
        .create(platform::tasks::NewTask {
            owner: DEMO_EMAIL.into(),
            kind: platform::tasks::TaskKind::StrategyBacktest,
            params: tests::server::optix_strategy(),
        })
        .await
        .unwrap();
    state
        .queue
        .enqueue(platform::queue::JobMessage {
            trace: None,
            ..platform::queue::JobMessage::for_task(&third)
        })
        .await
        .unwrap();
    let xray = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";

    let mut work = Function::new(&worker, "worker", 2048, &env)
        .await
        .keep_lines();
    let mut ran = 0;
    for _ in 0..30 {
        if ran == 3 {
            break;
        }
        let Some((mut event, handles)) = receive_batch(&c, &names.queue_url).await else {
            continue;
        };
        for r in &mut event.records {
            if r.body
                .as_deref()
                .is_some_and(|b| b.contains(&third.id.to_string()))
            {
                r.attributes.insert("AWSTraceHeader".into(), xray.into());
            }
        }
        ran += event.records.len();
        let answer = work.invoke(serde_json::to_value(&event).unwrap()).await;
        let answer = serde_json::from_value(answer.answer).unwrap();
        assert_eq!(
            settle_batch(&c, &names.queue_url, &handles, &answer).await,
            0
        );
    }
    assert_eq!(ran, 3, "{}", work.log_tail());
    tasks.push((
        third.id.to_string(),
        "5759e988bd862e3fe1be46a994272793".into(),
    ));
    for (id, _) in &tasks {
        let t = state.tasks.get(id.parse().unwrap()).await.unwrap().unwrap();
        assert_eq!(t.status, platform::tasks::TaskStatus::Success, "{t:?}");
    }

    // EMF: valid documents, the mix counted, low-cardinality dimensions.
    let api = emf::read(&http.lines());
    let jobs = emf::read(&work.lines());
    assert!(!api.is_empty() && !jobs.is_empty());
    for d in api.iter().chain(&jobs) {
        assert_eq!(d.namespace, "MarketLab");
        assert!(
            d.dimensions.values().all(|v| !v.contains('@')),
            "no account in a dimension: {d:?}"
        );
    }
    let backtest = [("service", "backtest")];
    let requests = |route: &str, method: &str, status: &str| {
        sum(
            &api,
            "http_requests_total",
            &[
                ("service", "backtest"),
                ("route", route),
                ("method", method),
                ("status", status),
            ],
        )
    };
    assert_eq!(requests("/backtest/start_backtest", "POST", "2xx"), 2.0);
    assert_eq!(requests("/backtest/start_backtest", "POST", "4xx"), 1.0);
    assert_eq!(requests("/health", "GET", "2xx"), 1.0);
    assert_eq!(requests("unmatched", "GET", "4xx"), 1.0);
    assert_eq!(sum(&api, "http_requests_total", &backtest), 5.0);
    assert_eq!(
        count(
            &api,
            "http_request_duration_seconds",
            &[("route", "/backtest/start_backtest"), ("method", "POST")]
        ),
        3
    );
    assert_eq!(sum(&api, "cold_starts_total", &backtest), 1.0);
    let unit = |data: &[emf::Datum], name: &str| {
        data.iter()
            .find(|d| d.name == name)
            .and_then(|d| d.unit.clone())
            .unwrap_or_default()
    };
    assert_eq!(unit(&api, "http_requests_total"), "Count");
    assert_eq!(unit(&api, "http_request_duration_seconds"), "Seconds");

    let worker_dim = [("service", "worker")];
    assert_eq!(
        sum(
            &jobs,
            "tasks_total",
            &[
                ("service", "worker"),
                ("kind", "strategy_backtest"),
                ("outcome", "success")
            ]
        ),
        3.0
    );
    assert_eq!(count(&jobs, "task_run_seconds", &worker_dim), 3);
    assert_eq!(count(&jobs, "task_queue_wait_seconds", &worker_dim), 3);
    assert_eq!(unit(&jobs, "task_run_seconds"), "Seconds");
    assert_eq!(sum(&jobs, "cold_starts_total", &worker_dim), 1.0);
    assert_eq!(last(&jobs, "queue_depth", &[("queue", "jobs")]), Some(0.0));
    assert_eq!(last(&jobs, "dlq_depth", &[("queue", "jobs")]), Some(0.0));
    assert!(last(&jobs, "queue_oldest_age_seconds", &[("queue", "jobs")]).is_some());

    // One trace per task, from the request's lines to the worker's.
    let api_logs = log_lines(&http.lines());
    let worker_logs = log_lines(&work.lines());
    for (i, (id, trace)) in tasks.iter().enumerate() {
        if i < 2 {
            assert!(
                api_logs
                    .iter()
                    .any(|l| in_request(l) && trace_ids(l).contains(trace)),
                "the submit logged under {trace}"
            );
        }
        let lines = task_lines(&worker_logs, id);
        assert!(lines.iter().any(|(m, _)| m == "job finished"), "{lines:?}");
        for (message, ids) in &lines {
            assert_eq!(ids, &vec![trace.clone()], "{message}");
        }
    }

    // With a collector set, each invocation sends its spans before it is
    // answered: the caller's trace has the request and its task as parent
    // and child, from the two functions.
    let spans = spans_of(&got, theirs);
    let request = spans
        .iter()
        .find(|(service, s)| service == "backtest" && s["name"] == "POST /backtest/start_backtest")
        .map(|(_, s)| s)
        .expect("the backtest function's request span");
    let task = spans
        .iter()
        .find(|(service, s)| service == "worker" && s["name"] == "task strategy_backtest")
        .map(|(_, s)| s)
        .expect("the worker's task span");
    assert_eq!(request["parentSpanId"], "00f067aa0ba902b7");
    assert_eq!(task["parentSpanId"], request["spanId"]);
}
