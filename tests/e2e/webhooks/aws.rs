//! The AWS path on the emulator: the backtest function registers an
//! endpoint and takes a task, the worker function runs it and records the
//! event, and the delivery function sends it from the webhook queue,
//! retrying through the queue after a failed attempt.

use super::receiver::{Answer, Receiver};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::json;
use std::time::{Duration, Instant};
use tests::emulator::{function_env, receive_batch, settle_batch};
use tests::runtime_api::{Function, answer_json, basic, http_event, workspace_binaries};

/// Hands the queue's messages to `function` as the event source mapping
/// does, until `done` holds (or `timeout`).
async fn drain(
    c: &aws_adapters::Clients,
    queue_url: &str,
    function: &mut Function,
    timeout: Duration,
    mut done: impl AsyncFnMut() -> bool,
) -> bool {
    let started = Instant::now();
    while started.elapsed() < timeout {
        if done().await {
            return true;
        }
        if let Some((event, handles)) = receive_batch(c, queue_url).await {
            let answer = function.invoke(serde_json::to_value(&event).unwrap()).await;
            let answer = serde_json::from_value(answer.answer).unwrap();
            settle_batch(c, queue_url, &handles, &answer).await;
        }
    }
    done().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finished_task_s_webhook_is_delivered_by_the_delivery_function_with_a_retry_through_the_queue()
 {
    let tests::emulator::Deployment {
        clients: c,
        names,
        state,
    } = tests::emulator::deployment().await;
    let [backtest, worker, webhooks] = workspace_binaries(["backtest", "worker", "webhooks"]).await;
    let mut env = function_env(&names);
    env.push((
        "MARKETLAB_WEBHOOK_KEY",
        platform::webhooks::signing::Keyring::new([5; 32]).encode(),
    ));
    env.push(("MARKETLAB_WEBHOOKS_ALLOW_LOOPBACK", "1".into()));
    env.push(("MARKETLAB_WEBHOOK_RETRY_SECONDS", "1".into()));
    let rx = Receiver::start(vec![Answer::Status(503)], None).await;
    let auth = basic(DEMO_EMAIL, DEMO_PASSWORD);

    let mut http = Function::new(&backtest, "backtest", 1024, &env).await;
    let made = http
        .invoke(http_event(
            "POST",
            "/webhooks",
            Some(&json!({"url": rx.url("/aws"), "events": ["task.finished"]})),
            Some(&auth),
        ))
        .await
        .answer;
    assert_eq!(made["statusCode"], 201, "{made}");
    let endpoint = answer_json(&made);
    let (id, secret) = (
        endpoint["id"].as_str().unwrap().to_string(),
        endpoint["secret"].as_str().unwrap().to_string(),
    );
    let sub = http
        .invoke(http_event(
            "POST",
            "/backtest/start_backtest",
            Some(&tests::server::optix_strategy()),
            Some(&auth),
        ))
        .await
        .answer;
    assert_eq!(sub["statusCode"], 202, "{sub}");
    let task: uuid::Uuid = answer_json(&sub)["task_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    let mut work = Function::new(&worker, "worker", 2048, &env).await;
    let tasks = state.tasks.clone();
    let finished = drain(
        &c,
        &names.queue_url,
        &mut work,
        Duration::from_secs(60),
        async || {
            tasks
                .get(task)
                .await
                .unwrap()
                .is_some_and(|t| t.status.is_finished())
        },
    )
    .await;
    assert!(finished, "{}", work.log_tail());

    let mut deliver = Function::new(&webhooks, "webhooks", 256, &env).await;
    let delivered = drain(
        &c,
        &names.webhook_queue_url,
        &mut deliver,
        Duration::from_secs(30),
        async || rx.got().len() >= 2,
    )
    .await;
    assert!(delivered, "{:?} {}", rx.got(), deliver.log_tail());
    let got = rx.got();
    assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"));
    assert_eq!(got[0].body, got[1].body);
    let payload = got[1].json();
    assert_eq!(payload["type"], "task.finished");
    assert_eq!(payload["data"]["task_id"], json!(task.to_string()));
    assert_eq!(payload["data"]["status"], "SUCCESS");
    let checks = super::verify(vec![(secret, &got[1], None, None)]);
    assert_eq!(checks[0]["ok"], true, "{checks:?}");

    let log = http
        .invoke(http_event(
            "GET",
            &format!("/webhooks/{id}/deliveries"),
            None,
            Some(&auth),
        ))
        .await
        .answer;
    let log = answer_json(&log);
    let d = &log["deliveries"][0];
    assert_eq!(d["status"], "delivered", "{log}");
    let statuses: Vec<_> = d["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].clone())
        .collect();
    assert_eq!(statuses, [json!(503), json!(200)]);
}
