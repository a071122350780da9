//! Metrics, traces and logs as an operator reads them: the embedded
//! server's `/metrics` parsed by the Prometheus client library, the Lambda
//! functions' EMF lines on the emulator, and one trace id from a submit's
//! request to the worker that runs its task, in both runtimes.

mod aws;
mod embedded;
mod fresh_start;
mod secrets;

use serde_json::{Value, json};

/// The trace ids of a JSON log line's spans (the request's, the task's).
fn trace_ids(line: &Value) -> Vec<String> {
    let mut ids: Vec<String> = line["spans"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(std::iter::once(&line["span"]))
        .filter_map(|s| s["trace_id"].as_str().map(str::to_string))
        .collect();
    ids.dedup();
    ids
}

/// Whether a log line was written inside an HTTP request's span.
fn in_request(line: &Value) -> bool {
    line["spans"]
        .as_array()
        .is_some_and(|s| s.iter().any(|s| s["name"] == "request"))
}

/// The JSON log lines among `lines` (EMF documents and others are left out).
fn log_lines(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("level").is_some())
        .collect()
}

/// Lines logged inside the span of `task_id`'s run, with their trace ids.
fn task_lines(logs: &[Value], task_id: &str) -> Vec<(String, Vec<String>)> {
    logs.iter()
        .filter(|l| {
            l["spans"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["name"] == "task" && s["task_id"] == task_id)
        })
        .map(|l| {
            (
                l["fields"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                trace_ids(l),
            )
        })
        .collect()
}

/// An OTLP collector on 127.0.0.1: what was posted to `/v1/traces`.
pub(crate) async fn collector() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    use axum::routing::post;
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = got.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let into = into.clone();
                async move {
                    assert_eq!(headers["content-type"], "application/json");
                    into.lock()
                        .unwrap()
                        .push(serde_json::from_slice::<Value>(&body).unwrap());
                    axum::Json(json!({}))
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

/// The spans of trace `id` the collector got, each resource's `service.name` beside it.
fn spans_of(got: &std::sync::Mutex<Vec<Value>>, id: &str) -> Vec<(String, Value)> {
    got.lock()
        .unwrap()
        .iter()
        .flat_map(|b| b["resourceSpans"].as_array().unwrap().clone())
        .flat_map(|r| {
            let service = r["resource"]["attributes"][0]["value"]["stringValue"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            r["scopeSpans"][0]["spans"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| (service.clone(), s.clone()))
                .collect::<Vec<_>>()
        })
        .filter(|(_, s)| s["traceId"] == id)
        .collect()
}
