//! The local stand-in for Lambda's SQS event source mapping, on the
//! emulator: the records carry what Lambda fills, a message the function
//! reports failed comes back and the rest are deleted, a failed invocation
//! leaves its whole batch, a function not reached gets its batch given back
//! at once, and `event-source` keeps N invocations in flight.

use aws_lambda_events::event::sqs::SqsEvent;
use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tests::emulator::{clients, dead_letter_depth, endpoint};
use worker::event_source::{Error, EventSource, InProcess, Invoke, Settings};

const GUARD: Duration = Duration::from_secs(60);

async fn queue(c: &aws_adapters::Clients, visibility: u32) -> String {
    let name = format!("event-source-{}", uuid::Uuid::new_v4().simple());
    aws_adapters::provision::queue(c, &name, 2, visibility)
        .await
        .unwrap()
}

async fn send(c: &aws_adapters::Clients, url: &str, body: &str) {
    c.sqs
        .send_message()
        .queue_url(url)
        .message_body(body)
        .message_attributes(
            "traceparent",
            MessageAttributeValue::builder()
                .data_type("String")
                .string_value(format!("trace-of-{body}"))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
}

/// Messages visible plus in flight.
async fn depth(c: &aws_adapters::Clients, url: &str) -> u64 {
    let a = c
        .sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
        .send()
        .await
        .unwrap();
    let a = a.attributes().unwrap();
    [
        QueueAttributeName::ApproximateNumberOfMessages,
        QueueAttributeName::ApproximateNumberOfMessagesNotVisible,
    ]
    .iter()
    .map(|k| a[k].parse::<u64>().unwrap())
    .sum()
}

fn settings(url: &str, batch_size: i32) -> Settings {
    Settings {
        queue_url: url.to_string(),
        batch_size,
        concurrency: 1,
        wait_seconds: 1,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_is_handed_on_and_settled_as_lambda_settles_it() {
    let c = clients().await;
    let url = queue(&c, 2).await;
    for body in ["a", "b", "c"] {
        send(&c, &url, body).await;
    }
    let source = EventSource::new(c.sqs.clone(), settings(&url, 10))
        .await
        .unwrap();
    let seen: Arc<Mutex<Vec<SqsEvent>>> = Arc::default();
    // The function fails "b" each time.
    let handler = InProcess({
        let seen = seen.clone();
        move |event: SqsEvent| {
            seen.lock().unwrap().push(event.clone());
            async move {
                let failed: Vec<Value> = event
                    .records
                    .iter()
                    .filter(|r| r.body.as_deref() == Some("b"))
                    .map(|r| json!({"itemIdentifier": r.message_id}))
                    .collect();
                json!({"batchItemFailures": failed})
            }
        }
    });
    let started = Instant::now();
    let mut handed = 0;
    while handed < 3 {
        assert!(started.elapsed() < GUARD, "{handed} of 3 handed on");
        let messages = source.receive().await.unwrap();
        if !messages.is_empty() {
            let h = source.hand(&handler, &messages).await.unwrap();
            assert_eq!(
                h.left,
                usize::from(bodies_of(&messages).contains(&"b".into()))
            );
            handed += h.messages;
        }
    }
    {
        let seen = seen.lock().unwrap();
        let records: Vec<_> = seen.iter().flat_map(|e| e.records.iter()).collect();
        for r in &records {
            assert!(r.message_id.as_ref().is_some_and(|i| !i.is_empty()));
            assert!(r.receipt_handle.as_ref().is_some_and(|h| !h.is_empty()));
            assert_eq!(r.attributes["ApproximateReceiveCount"], "1");
            assert!(r.attributes["SentTimestamp"].parse::<i64>().unwrap() > 0);
            assert_eq!(
                r.message_attributes["traceparent"].string_value,
                Some(format!("trace-of-{}", r.body.as_deref().unwrap()))
            );
            assert_eq!(r.event_source.as_deref(), Some("aws:sqs"));
            assert_eq!(r.event_source_arn.as_deref(), Some(source.arn()));
            assert_eq!(r.aws_region.as_deref(), Some("us-east-1"));
        }
        assert!(source.arn().ends_with(url.rsplit('/').next().unwrap()));
    }
    // "b" comes back after the visibility timeout, received a second time;
    // "a" and "c" were deleted.
    let again = loop {
        assert!(
            started.elapsed() < GUARD,
            "the failed message did not come back"
        );
        let messages = source.receive().await.unwrap();
        if !messages.is_empty() {
            break messages;
        }
    };
    assert_eq!(bodies_of(&again), ["b"]);
    seen.lock().unwrap().clear();
    let h = source.hand(&handler, &again).await.unwrap();
    assert_eq!((h.messages, h.left), (1, 1));
    assert_eq!(
        seen.lock().unwrap()[0].records[0].attributes["ApproximateReceiveCount"],
        "2"
    );
    // Its second failure was its last receive: the redrive moves it on.
    while dead_letter_depth(&c, &url).await < 1 {
        assert!(started.elapsed() < GUARD, "not in the dead-letter queue");
        source.receive().await.unwrap();
    }
    assert_eq!(depth(&c, &url).await, 0);
}

fn bodies_of(messages: &[aws_sdk_sqs::types::Message]) -> Vec<String> {
    let mut b: Vec<String> = messages
        .iter()
        .map(|m| m.body().unwrap().to_string())
        .collect();
    b.sort();
    b
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_invocation_leaves_its_batch_and_an_absent_function_gets_it_back_at_once() {
    let c = clients().await;
    // Long enough that a message seen again at once was given back.
    let url = queue(&c, 300).await;
    send(&c, &url, "x").await;
    let source = EventSource::new(c.sqs.clone(), settings(&url, 10))
        .await
        .unwrap();
    // Nothing listens on a port just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let absent = Invoke::new(
        &format!("http://127.0.0.1:{port}/2015-03-31/functions/worker/invocations"),
        Duration::from_secs(5),
    )
    .unwrap();
    let started = Instant::now();
    let messages = loop {
        assert!(started.elapsed() < GUARD);
        let m = source.receive().await.unwrap();
        if !m.is_empty() {
            break m;
        }
    };
    let e = source.hand(&absent, &messages).await.unwrap_err();
    assert!(matches!(e, Error::Unreachable { .. }), "{e}");
    let back = source.receive().await.unwrap();
    assert_eq!(bodies_of(&back), ["x"], "given back at once");

    // A function that fails: the whole batch stays (hidden for the
    // visibility timeout), nothing is deleted.
    let failing = InProcess(|_event: SqsEvent| async { json!({"batchItemFailures": "?"}) });
    let h = source.hand(&failing, &back).await.unwrap();
    assert_eq!((h.messages, h.left), (1, 1));
    assert_eq!(depth(&c, &url).await, 1);
}

/// An HTTP function that holds each invocation until `hold` are in flight
/// at once (or a hang guard passes), records the most in flight and the
/// bodies, fails a message whose body is "fail" and the whole invocation
/// for "error".
#[derive(Clone, Default)]
struct Function {
    in_flight: Arc<Mutex<(usize, usize)>>,
    bodies: Arc<Mutex<Vec<String>>>,
    reached: Arc<tokio::sync::Notify>,
}

async fn function(
    axum::extract::State((f, hold)): axum::extract::State<(Function, usize)>,
    axum::Json(event): axum::Json<SqsEvent>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let reached = {
        let mut n = f.in_flight.lock().unwrap();
        n.0 += 1;
        n.1 = n.1.max(n.0);
        n.1 >= hold
    };
    if reached {
        f.reached.notify_waiters();
    } else {
        let _ = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                let notified = f.reached.notified();
                if f.in_flight.lock().unwrap().1 >= hold {
                    return;
                }
                notified.await;
            }
        })
        .await;
    }
    f.in_flight.lock().unwrap().0 -= 1;
    let mut failed = Vec::new();
    for r in &event.records {
        let body = r.body.clone().unwrap_or_default();
        f.bodies.lock().unwrap().push(body.clone());
        if body == "error" {
            return (
                [("x-amz-function-error", "Unhandled")],
                axum::Json(json!({"errorType": "Boom", "errorMessage": "boom"})),
            )
                .into_response();
        }
        if body == "fail" {
            failed.push(json!({"itemIdentifier": r.message_id}));
        }
    }
    axum::Json(json!({"batchItemFailures": failed})).into_response()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_event_source_binary_keeps_n_invocations_in_flight() {
    const N: usize = 4;
    let c = clients().await;
    let url = queue(&c, 5).await;
    let f = Function::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new()
        .route(
            "/2015-03-31/functions/worker/invocations",
            axum::routing::post(function),
        )
        .with_state((f.clone(), N));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let mut sent: Vec<String> = (0..8).map(|i| format!("ok-{i}")).collect();
    sent.extend(["fail".to_string(), "error".to_string()]);
    for body in &sent {
        send(&c, &url, body).await;
    }
    let mut source = std::process::Command::new(env!("CARGO_BIN_EXE_event-source"))
        .args([
            "--queue-url",
            &url,
            "--invoke",
            &format!("http://127.0.0.1:{port}/2015-03-31/functions/worker/invocations"),
            "--batch-size",
            "1",
            "--concurrency",
            &N.to_string(),
            "--wait-seconds",
            "1",
        ])
        .env("AWS_ENDPOINT_URL", endpoint())
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env("RUST_LOG", "warn")
        .spawn()
        .unwrap();
    // Done when the two that fail have used their two receives.
    let started = Instant::now();
    while dead_letter_depth(&c, &url).await < 2 || depth(&c, &url).await > 0 {
        assert!(
            started.elapsed() < GUARD,
            "bodies so far: {:?}",
            f.bodies.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _ = source.kill();
    let _ = source.wait();
    assert_eq!(
        f.in_flight.lock().unwrap().1,
        N,
        "the most in flight at once"
    );
    let mut bodies = f.bodies.lock().unwrap().clone();
    bodies.sort();
    let mut want: Vec<String> = (0..8).map(|i| format!("ok-{i}")).collect();
    want.extend(["error", "error", "fail", "fail"].map(String::from));
    want.sort();
    assert_eq!(
        bodies, want,
        "each deleted once handed on; the failed twice"
    );
}
