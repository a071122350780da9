//! Every request measured under its route template, and run as part of one
//! trace: the caller's `traceparent`, else the X-Ray header Lambda was
//! invoked with, else a new one. The trace id is answered in `x-trace-id`
//! (what a tenant quotes to support) and logged on every line of the request;
//! with an OTLP collector set, the request is also exported as a span.

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use platform::telemetry::{self, otlp, trace::Trace};
use std::time::{Instant, SystemTime};

/// The header the trace id is answered in.
pub const TRACE_HEADER: &str = "x-trace-id";

/// The trace a request continues, if its headers name one.
pub fn incoming(headers: &HeaderMap) -> Option<Trace> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    header("traceparent")
        .and_then(Trace::from_traceparent)
        .or_else(|| header("x-amzn-trace-id").and_then(Trace::from_xray))
}

/// The outermost layer of every route: picks the trace (kept in the
/// request's extensions for the log span), runs the request in it, then
/// counts it under its template, method and status class.
pub async fn observe(mut request: Request, next: Next) -> Response {
    let trace = incoming(request.headers())
        .map(|t| t.child())
        .unwrap_or_default();
    request.extensions_mut().insert(trace);
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned());
    // Methods outside HTTP's own share one label: the set stays bounded.
    let method = match *request.method() {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    };
    let (started, wall) = (Instant::now(), SystemTime::now());
    let mut response = telemetry::trace::scope(trace, next.run(request)).await;
    let (route, status) = (
        route.as_deref().unwrap_or("unmatched"),
        response.status().as_u16(),
    );
    telemetry::request(route, method, status, started.elapsed());
    if otlp::enabled() {
        otlp::record(otlp::Span {
            name: format!("{method} {route}"),
            kind: otlp::Kind::Server,
            trace,
            start: wall,
            end: SystemTime::now(),
            attributes: vec![
                ("http.request.method", otlp::Attr::Str(method.into())),
                ("http.route", otlp::Attr::Str(route.into())),
                ("http.response.status_code", otlp::Attr::Int(status.into())),
            ],
            error: status >= 500,
        });
    }
    if let Ok(v) = HeaderValue::from_str(&trace.id()) {
        response.headers_mut().insert(TRACE_HEADER, v);
    }
    response
}
