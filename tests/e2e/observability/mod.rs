//! Metrics, traces and logs as an operator reads them: the embedded
//! server's `/metrics` parsed by the Prometheus client library, the Lambda
//! functions' EMF lines on the emulator, and one trace id from a submit's
//! request to the worker that runs its task, in both runtimes.

mod aws;
mod embedded;

use serde_json::Value;

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
