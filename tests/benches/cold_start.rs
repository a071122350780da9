//! Cold starts of the release Lambda binaries:
//! `cargo build --release -p backtest-lambda -p analytics-lambda -p data-lambda -p worker --bins`,
//! then `cargo bench -p tests --bench cold_start`.
//!
//! Each binary runs as Lambda runs it: against a Runtime API (served here,
//! on 127.0.0.1, as Lambda's documented endpoints: `invocation/next`, the
//! response and error posts) with its tables, queue and bucket on the
//! emulator. Timed from the process's spawn to its first response, then a
//! second (warm) invocation; for the HTTP functions the first event is
//! `/health`, and an authenticated request follows (the password check, the
//! plan's limits).

use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc};

/// What the Runtime API hands out and what comes back.
#[derive(Clone)]
struct Runtime {
    events: Arc<tokio::sync::Mutex<mpsc::Receiver<(String, Value)>>>,
    answers: Arc<Mutex<Vec<(String, Value)>>>,
    answered: Arc<Notify>,
}

async fn next(State(rt): State<Runtime>) -> impl IntoResponse {
    let (id, event) = rt.events.lock().await.recv().await.expect("an event");
    let mut headers = HeaderMap::new();
    headers.insert("lambda-runtime-aws-request-id", id.parse().unwrap());
    let deadline = chrono::Utc::now().timestamp_millis() + 60_000;
    headers.insert(
        "lambda-runtime-deadline-ms",
        deadline.to_string().parse().unwrap(),
    );
    headers.insert(
        "lambda-runtime-invoked-function-arn",
        "arn:aws:lambda:us-east-1:000000000000:function:bench"
            .parse()
            .unwrap(),
    );
    headers.insert(
        "lambda-runtime-trace-id",
        "Root=1-00000000-000000000000000000000000".parse().unwrap(),
    );
    (headers, axum::Json(event))
}

async fn respond(State(rt): State<Runtime>, Path(id): Path<String>, body: axum::body::Bytes) {
    let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
    rt.answers.lock().unwrap().push((id, v));
    rt.answered.notify_waiters();
}

async fn failed(State(rt): State<Runtime>, Path(id): Path<String>, body: axum::body::Bytes) {
    let v = json!({"error": String::from_utf8_lossy(&body)});
    rt.answers.lock().unwrap().push((id, v));
    rt.answered.notify_waiters();
}

async fn init_failed(body: axum::body::Bytes) {
    panic!("init error: {}", String::from_utf8_lossy(&body));
}

/// An HTTP API (payload 2.0) request.
fn http_event(path: &str, auth: Option<&str>) -> Value {
    let mut headers =
        json!({"host": "bench.execute-api.us-east-1.amazonaws.com", "user-agent": "bench"});
    if let Some(a) = auth {
        headers["authorization"] = json!(a);
    }
    json!({
        "version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "",
        "headers": headers,
        "requestContext": {"accountId": "000000000000", "apiId": "bench", "domainName": "bench.execute-api.us-east-1.amazonaws.com",
            "domainPrefix": "bench", "http": {"method": "GET", "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": "bench"},
            "requestId": "bench", "routeKey": "$default", "stage": "$default", "time": "24/Nov/2026:00:00:00 +0000", "timeEpoch": 0},
        "isBase64Encoded": false
    })
}

fn release_dir() -> PathBuf {
    // target/release/deps/cold_start-... -> target/release
    std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(|p| p.parent())
        .unwrap()
        .to_path_buf()
}

struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let tests::emulator::Deployment { names, .. } = tests::emulator::deployment().await;
        let env = tests::emulator::function_env(&names);
        let basic = format!(
            "Basic {}",
            base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                format!("{}:{}", api::server::DEMO_EMAIL, api::server::DEMO_PASSWORD)
            )
        );
        println!("cold starts of the release Lambda binaries (Runtime API on 127.0.0.1, AWS on the emulator)");
        println!("| binary | size MB | spawn to first response ms | warm ms | first authenticated ms | warm authenticated ms |");
        println!("|---|---|---|---|---|---|");
        let functions: [(&str, Vec<Value>); 5] = [
            ("backtest", vec![http_event("/health", None), http_event("/health", None), http_event("/backtest/tasks", Some(&basic)), http_event("/backtest/tasks", Some(&basic))]),
            ("analytics", vec![http_event("/health", None), http_event("/health", None), http_event("/cpm/get-predefined-patterns", Some(&basic)), http_event("/cpm/get-predefined-patterns", Some(&basic))]),
            ("data", vec![http_event("/ws/health", None), http_event("/ws/health", None), http_event("/ws/getAllSymbols", Some(&basic)), http_event("/ws/getAllSymbols", Some(&basic))]),
            ("worker", vec![json!({"Records": []}), json!({"Records": []})]),
            // A scheduled run scans the latest session of the emulator's
            // sample set (12 stocks): its time is mostly the scan's.
            ("scanner-nightly", vec![json!({}), json!({})]),
        ];
        for (binary, events) in functions {
            let path = release_dir().join(binary);
            assert!(path.exists(), "{} is missing: build the release binaries first", path.display());
            let size = std::fs::metadata(&path).unwrap().len() as f64 / 1e6;
            let (tx, rx) = mpsc::channel(8);
            let runtime = Runtime {
                events: Arc::new(tokio::sync::Mutex::new(rx)),
                answers: Arc::new(Mutex::new(Vec::new())),
                answered: Arc::new(Notify::new()),
            };
            let app = Router::new()
                .route("/2018-06-01/runtime/invocation/next", get(next))
                .route("/2018-06-01/runtime/invocation/{id}/response", post(respond))
                .route("/2018-06-01/runtime/invocation/{id}/error", post(failed))
                .route("/2018-06-01/runtime/init/error", post(init_failed))
                .with_state(runtime.clone());
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = tokio::spawn(async move { axum::serve(listener, app).await });
            let mut times = Vec::new();
            let mut child: Option<Proc> = None;
            for (k, event) in events.into_iter().enumerate() {
                let id = format!("request-{k}");
                let t = Instant::now();
                tx.send((id.clone(), event)).await.unwrap();
                if child.is_none() {
                    child = Some(Proc(
                        Command::new(&path)
                            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
                            .env("AWS_LAMBDA_RUNTIME_API", addr.to_string())
                            .env("AWS_LAMBDA_FUNCTION_NAME", format!("marketlab-{binary}"))
                            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024")
                            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
                            .env("AWS_LAMBDA_LOG_STREAM_NAME", "bench")
                            .env("AWS_LAMBDA_LOG_GROUP_NAME", "bench")
                            .stdout(Stdio::null())
                            .stderr(Stdio::null())
                            .spawn()
                            .unwrap(),
                    ));
                }
                loop {
                    let notified = runtime.answered.notified();
                    if let Some((_, v)) = runtime.answers.lock().unwrap().iter().find(|(i, _)| *i == id) {
                        let status = v.get("statusCode").and_then(Value::as_u64);
                        assert!(
                            v.get("error").is_none() && status.is_none_or(|s| s == 200),
                            "{binary} {id}: {v}"
                        );
                        break;
                    }
                    assert!(t.elapsed() < Duration::from_secs(60), "{binary}: no answer to {id}");
                    let _ = tokio::time::timeout(Duration::from_millis(50), notified).await;
                }
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let cell = |k: usize| times.get(k).map_or("-".to_string(), |t| format!("{t:.1}"));
            println!("| {binary} | {size:.1} | {} | {} | {} | {} |", cell(0), cell(1), cell(2), cell(3));
            drop(child);
            server.abort();
        }
    });
}
