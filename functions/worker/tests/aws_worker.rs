//! The AWS path on the emulator: the backtest router over DynamoDB, SQS and
//! S3, and the worker's SQS batch handler fed from the real queue.

use api::routes::{Group, service};
use aws_adapters::SqsQueue;
use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use chrono::TimeDelta;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::queue::JobMessage;
use platform::tasks::{Claim, NewTask, Outcome, TaskKind, TaskStatus, now};
use serde_json::{Value, json};
use tests::server::TestServer;

/// Receives what the queue holds and hands it over as one Lambda batch.
/// A strategy backtest of the demo account, stored but not queued.
async fn backtest_task(state: &api::state::AppState, params: Value) -> platform::tasks::Task {
    let new = NewTask {
        owner: DEMO_EMAIL.into(),
        kind: TaskKind::StrategyBacktest,
        params,
    };
    state.tasks.create(new).await.unwrap()
}

/// Queues `task`'s message.
async fn send(state: &api::state::AppState, task: &platform::tasks::Task) {
    state
        .queue
        .enqueue(JobMessage::for_task(task))
        .await
        .unwrap();
}

async fn deliver(queue: &SqsQueue, deps: &platform::worker::WorkerDeps) -> (usize, Vec<String>) {
    let got = queue.receive(10, 1).await.unwrap();
    let mut event = SqsEvent::default();
    for r in &got {
        let mut m = SqsMessage::default();
        m.message_id = Some(r.receipt_handle.clone());
        m.body = Some(serde_json::to_string(&r.message).unwrap());
        event.records.push(m);
    }
    let response = worker::handle_batch(deps, None, None, event).await;
    let failed: Vec<String> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.clone())
        .collect();
    // What Lambda does with the answer: delete the successes, leave the failures.
    for r in &got {
        if !failed.contains(&r.receipt_handle) {
            queue.delete(&r.receipt_handle).await.unwrap();
        }
    }
    (got.len(), failed)
}

#[tokio::test(flavor = "multi_thread")]
async fn strategy_runs_on_the_aws_path_like_embedded() {
    let tests::emulator::Deployment {
        clients: c,
        names,
        state,
    } = tests::emulator::deployment().await;
    let deps = worker::deps(&c, &names, std::time::Duration::from_secs(30));
    let queue = SqsQueue::new(c.sqs.clone(), &names.queue_url);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        axum::serve(listener, service(&state, Group::Backtest))
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .into_future(),
    );
    let http = reqwest::Client::new();
    let get = |path: String, user: (&'static str, &'static str)| {
        let req = http
            .get(format!("{base}{path}"))
            .basic_auth(user.0, Some(user.1));
        async move {
            let r = req.send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };

    let strategy = json!({
        "symbol": "SPX", "start_date": "2005-01-01", "risk_control": "-8//63",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossAbove", "comparison_value": "70"}}}
    });
    let submitted: Value = http
        .post(format!("{base}/backtest/start_backtest"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .json(&strategy)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = submitted["task_id"]
        .as_str()
        .expect("202 with a task id")
        .to_string();
    assert_eq!(
        get(
            format!("/backtest/status/{id}"),
            (DEMO_EMAIL, DEMO_PASSWORD)
        )
        .await
        .1["status"],
        "PENDING"
    );
    let (n, failed) = deliver(&queue, &deps).await;
    assert_eq!((n, failed.len()), (1, 0));
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

    // The same strategy on the embedded default gives the same result.
    let (embedded, _dir) = TestServer::fresh().await;
    let (_, r) = embedded
        .post(
            "/backtest/start_backtest",
            Some((DEMO_EMAIL, DEMO_PASSWORD)),
            &strategy,
        )
        .await;
    let path = format!("/backtest/status/{}", r["task_id"].as_str().unwrap());
    tests::server::eventually(std::time::Duration::from_secs(30), || async {
        embedded
            .get(&path, Some((DEMO_EMAIL, DEMO_PASSWORD)))
            .await
            .1["status"]
            == "SUCCESS"
    })
    .await;
    assert_eq!(
        embedded
            .get(&path, Some((DEMO_EMAIL, DEMO_PASSWORD)))
            .await
            .1["result"],
        task["result"]
    );
    embedded.stop().await;

    // Unknown and foreign ids are 404; the list holds the caller's tasks only.
    assert_eq!(
        get(
            format!("/backtest/status/{}", uuid_v4()),
            (DEMO_EMAIL, DEMO_PASSWORD)
        )
        .await
        .0,
        404
    );
    assert_eq!(
        get(
            format!("/backtest/status/{id}"),
            ("other@example.test", "other-password")
        )
        .await
        .0,
        404
    );
    assert_eq!(
        get(
            "/backtest/tasks".into(),
            ("other@example.test", "other-password")
        )
        .await
        .1["total"],
        json!(0)
    );

    // A job that can never succeed is FAILED and its message acknowledged.
    let bad = backtest_task(
        &state,
        json!({"symbol": "NOPE", "entry": strategy["entry"], "exit": strategy["exit"]}),
    )
    .await;
    send(&state, &bad).await;
    assert_eq!(deliver(&queue, &deps).await, (1, vec![]));
    let t = state.tasks.get(bad.id).await.unwrap().unwrap();
    assert_eq!(
        (t.status, t.error.as_deref()),
        (
            TaskStatus::Failed,
            Some("parameter 'symbol': 'NOPE' is not a known symbol")
        )
    );

    // Redelivery of a finished task changes nothing.
    let before = state.tasks.get(bad.id).await.unwrap().unwrap();
    send(&state, &bad).await;
    assert_eq!(deliver(&queue, &deps).await, (1, vec![]));
    assert_eq!(state.tasks.get(bad.id).await.unwrap().unwrap(), before);

    // A task another worker holds is handed back to the queue.
    let held = backtest_task(&state, strategy.clone()).await;
    assert!(matches!(
        state
            .tasks
            .claim(held.id, now(), TimeDelta::minutes(10))
            .await
            .unwrap(),
        Claim::Claimed(_)
    ));
    send(&state, &held).await;
    let (n, failed) = deliver(&queue, &deps).await;
    assert_eq!(
        (n, failed.len()),
        (1, 1),
        "reported as a batch item failure"
    );

    // A worker that died mid-job: once its lease has passed, the redelivered
    // message runs the task again, and it finishes exactly once.
    let crashed = backtest_task(&state, strategy.clone()).await;
    let Claim::Claimed(first) = state
        .tasks
        .claim(
            crashed.id,
            now() - TimeDelta::hours(1),
            TimeDelta::minutes(16),
        )
        .await
        .unwrap()
    else {
        panic!()
    };
    send(&state, &crashed).await;
    assert_eq!(deliver(&queue, &deps).await, (1, vec![]));
    let done = state.tasks.get(crashed.id).await.unwrap().unwrap();
    assert_eq!((done.status, done.attempts), (TaskStatus::Success, 2));
    assert_eq!(done.result, task["result"].clone().into());
    assert_eq!(
        state
            .tasks
            .finish(
                crashed.id,
                platform::tasks::Finished {
                    attempt: first.attempts,
                    outcome: Outcome::Success(json!("late")),
                    at: now()
                }
            )
            .await
            .unwrap(),
        None
    );

    let _ = tx.send(());
    server.await.unwrap().unwrap();
}

fn uuid_v4() -> String {
    uuid::Uuid::new_v4().to_string()
}
