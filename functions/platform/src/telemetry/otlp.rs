//! Spans to an OpenTelemetry collector over OTLP/HTTP with the JSON
//! encoding, when `MARKETLAB_OTLP_ENDPOINT` names one (`http://127.0.0.1:4318`:
//! the Collector's default, and the ADOT Lambda layer's). Two kinds of span
//! tell a task's story under the trace id the logs carry: the request
//! (`POST /backtest/start_backtest`, kind server) and each attempt that runs
//! its task (`task strategy_backtest`, kind consumer, the request's child).
//! Plain http to a collector beside the process, which forwards wherever it
//! is told (X-Ray, Tempo, Honeycomb ...). Spans wait in a bounded buffer
//! (more are dropped and counted) and go out every second, or at the end of
//! a Lambda invocation; an export that fails is logged and not retried.
//!
//! Written against the OTLP specification rather than with the
//! opentelemetry crates: those bring a protobuf toolchain (prost) into
//! every binary's build for two span kinds.

use super::trace::Trace;
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Spans held between exports; past it new ones are dropped.
const BUFFER: usize = 2048;
/// How long an export may take.
const TIMEOUT: Duration = Duration::from_secs(2);

/// What kind of work a span is (OTLP's `SpanKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Server = 2,
    Consumer = 5,
}

/// An attribute's value.
#[derive(Debug, Clone)]
pub enum Attr {
    Str(String),
    Int(i64),
}

#[derive(Debug, Clone)]
pub struct Span {
    pub name: String,
    pub kind: Kind,
    /// Its trace, its own span id and its parent's.
    pub trace: Trace,
    pub start: SystemTime,
    pub end: SystemTime,
    pub attributes: Vec<(&'static str, Attr)>,
    pub error: bool,
}

struct Exporter {
    host: String,
    port: u16,
    path: String,
    service: String,
    buffer: Mutex<Vec<Span>>,
    dropped: AtomicU64,
}

static EXPORTER: OnceLock<Exporter> = OnceLock::new();

/// Starts exporting when `MARKETLAB_OTLP_ENDPOINT` is set and not empty (`http://host:port`,
/// an optional base path before `/v1/traces`); `service` is the resource's
/// `service.name`. An endpoint that is not plain http is refused with a log
/// line, and nothing is exported.
pub fn install(service: &str) -> bool {
    let endpoint = std::env::var("MARKETLAB_OTLP_ENDPOINT").unwrap_or_default();
    if endpoint.is_empty() {
        return false;
    }
    let url = match url::Url::parse(&endpoint) {
        Ok(u) if u.scheme() == "http" && u.host_str().is_some() => u,
        _ => {
            tracing::warn!(%endpoint, "MARKETLAB_OTLP_ENDPOINT is not an http:// URL: no spans are exported");
            return false;
        }
    };
    let exporter = Exporter {
        host: url
            .host_str()
            .unwrap_or_default()
            .trim_matches(['[', ']'])
            .to_string(),
        port: url.port().unwrap_or(4318),
        path: format!("{}/v1/traces", url.path().trim_end_matches('/')),
        service: service.to_string(),
        buffer: Mutex::new(Vec::new()),
        dropped: AtomicU64::new(0),
    };
    EXPORTER.set(exporter).is_ok()
}

/// Whether spans are exported (callers skip building them otherwise).
pub fn enabled() -> bool {
    EXPORTER.get().is_some()
}

/// Holds `span` for the next export.
pub fn record(span: Span) {
    let Some(e) = EXPORTER.get() else { return };
    let mut buffer = e.buffer.lock();
    if buffer.len() >= BUFFER {
        e.dropped.fetch_add(1, Ordering::Relaxed);
    } else {
        buffer.push(span);
    }
}

/// Sends what is held; answers how many spans went out.
pub async fn flush() -> usize {
    let Some(e) = EXPORTER.get() else { return 0 };
    let spans = std::mem::take(&mut *e.buffer.lock());
    let dropped = e.dropped.swap(0, Ordering::Relaxed);
    if dropped > 0 {
        tracing::warn!(dropped, "spans dropped: the export buffer was full");
    }
    if spans.is_empty() {
        return 0;
    }
    let body = request_body(&e.service, &spans).to_string();
    match tokio::time::timeout(TIMEOUT, post(e, body)).await {
        Ok(Ok(status)) if (200..300).contains(&status) => spans.len(),
        Ok(Ok(status)) => {
            tracing::warn!(
                status,
                spans = spans.len(),
                "the collector refused the spans"
            );
            0
        }
        Ok(Err(error)) => {
            tracing::warn!(%error, spans = spans.len(), "spans not exported");
            0
        }
        Err(_) => {
            tracing::warn!(
                spans = spans.len(),
                "spans not exported: the collector did not answer in time"
            );
            0
        }
    }
}

/// Exports every second until dropped (a spawned task's body).
pub async fn export_forever() {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        flush().await;
    }
}

async fn post(e: &Exporter, body: String) -> Result<u16, Box<dyn std::error::Error + Send + Sync>> {
    use http_body_util::Full;
    use hyper::Request;
    use hyper::header::{CONTENT_TYPE, HOST};
    let stream = tokio::net::TcpStream::connect((e.host.as_str(), e.port)).await?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    let connection = tokio::spawn(conn);
    let request = Request::post(e.path.as_str())
        .header(HOST, format!("{}:{}", e.host, e.port))
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(bytes::Bytes::from(body)))?;
    let status = sender.send_request(request).await?.status().as_u16();
    connection.abort();
    Ok(status)
}

fn nanos(t: SystemTime) -> String {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
        .to_string()
}

/// An `ExportTraceServiceRequest` in OTLP's JSON encoding: ids in hex,
/// times as decimal strings of nanoseconds, enums as numbers.
pub fn request_body(service: &str, spans: &[Span]) -> Value {
    let spans: Vec<Value> = spans
        .iter()
        .map(|s| {
            let mut span = json!({
                "traceId": s.trace.id(),
                "spanId": format!("{:016x}", s.trace.span_id),
                "name": s.name,
                "kind": s.kind as i32,
                "startTimeUnixNano": nanos(s.start),
                "endTimeUnixNano": nanos(s.end),
                "attributes": s.attributes.iter().map(|(k, v)| json!({
                    "key": k,
                    "value": match v {
                        Attr::Str(s) => json!({"stringValue": s}),
                        Attr::Int(i) => json!({"intValue": i.to_string()}),
                    },
                })).collect::<Vec<_>>(),
                // STATUS_CODE_ERROR = 2, else unset.
                "status": if s.error { json!({"code": 2}) } else { json!({}) },
            });
            if let Some(parent) = s.trace.parent {
                span["parentSpanId"] = json!(format!("{parent:016x}"));
            }
            span
        })
        .collect();
    json!({
        "resourceSpans": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
            "scopeSpans": [{"scope": {"name": "marketlab"}, "spans": spans}],
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_encodes_as_otlp_json() {
        let parent =
            Trace::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                .unwrap();
        let trace = parent.child();
        let at = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
        let body = request_body(
            "backtest",
            &[Span {
                name: "POST /backtest/start_backtest".into(),
                kind: Kind::Server,
                trace,
                start: at,
                end: at + Duration::from_millis(2),
                attributes: vec![
                    ("http.route", Attr::Str("/backtest/start_backtest".into())),
                    ("http.response.status_code", Attr::Int(202)),
                ],
                error: false,
            }],
        );
        let span = &body["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(
            body["resourceSpans"][0]["resource"]["attributes"][0],
            json!({"key": "service.name", "value": {"stringValue": "backtest"}})
        );
        assert_eq!(span["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(span["parentSpanId"], "00f067aa0ba902b7");
        assert_eq!(span["spanId"], format!("{:016x}", trace.span_id));
        assert_eq!(span["kind"], 2);
        assert_eq!(span["startTimeUnixNano"], "1700000000123456789");
        assert_eq!(span["endTimeUnixNano"], "1700000000125456789");
        assert_eq!(span["attributes"][1]["value"], json!({"intValue": "202"}));
        assert_eq!(span["status"], json!({}));
    }
}
