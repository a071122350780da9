//! The embedded server's metrics as Prometheus text at `/metrics`, on a
//! listen address of its own (`--metrics-addr`): operators scrape it, the
//! tenants' port never serves it. Names and units are those of
//! `platform::telemetry`, which the Lambda functions export as CloudWatch EMF.

use anyhow::{Context, Result};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use platform::telemetry;
use std::sync::Arc;

/// Seconds buckets: a cached answer (a millisecond) to a long batch (minutes).
const SECONDS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];

/// Installs the Prometheus recorder for this process (once; a second call fails).
pub fn install() -> Result<PrometheusHandle> {
    let recorder = recorder()?;
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).context("installing the metrics recorder")?;
    telemetry::describe();
    Ok(handle)
}

/// The Prometheus recorder with the service's histogram buckets, not installed.
pub fn recorder() -> Result<PrometheusRecorder> {
    Ok(PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)?
        .set_buckets_for_metric(
            Matcher::Full(telemetry::TASK_ATTEMPTS.into()),
            &[1.0, 2.0, 3.0, 4.0, 5.0],
        )?
        .set_buckets_for_metric(
            Matcher::Full(telemetry::BATCH_ROWS_PER_SECOND.into()),
            &[100.0, 1e3, 1e4, 1e5, 1e6, 1e7],
        )?
        .build_recorder())
}

/// Gauges read when scraped (the job queue's depth and oldest age).
pub type Observe = Arc<dyn Fn() + Send + Sync>;

/// Readiness: the task store answers a read, the market data its symbol
/// list, and the job queue has workers. Unlike `/health` (the process
/// answers), a load balancer or supervisor may hold traffic back on a 503.
async fn ready(state: api::AppState, workers: usize) -> axum::response::Response {
    use axum::response::IntoResponse;
    let tasks = state.tasks.get(uuid::Uuid::nil()).await.map(|_| ());
    let market = state.market.symbols().await.map(|s| s.len());
    let checks = serde_json::json!({
        "task_store": tasks.as_ref().map_or_else(|e| e.to_string(), |_| "ok".into()),
        "market_data": market.as_ref().map_or_else(|e| e.to_string(), |n| format!("ok ({n} symbols)")),
        "workers": if workers > 0 { "ok".to_string() } else { "none: tasks wait for a start with workers".into() },
    });
    let ok = tasks.is_ok() && market.is_ok() && workers > 0;
    let status = if ok {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        axum::Json(serde_json::json!({"ready": ok, "checks": checks})),
    )
        .into_response()
}

/// The operators' router: `/metrics` refreshes the sampled gauges, then
/// renders; `/ready` checks what serving needs.
pub fn router(
    handle: PrometheusHandle,
    observe: Observe,
    state: api::AppState,
    workers: usize,
) -> axum::Router {
    use axum::http::header::CONTENT_TYPE;
    axum::Router::new()
        .route(
            "/ready",
            axum::routing::get(move || ready(state.clone(), workers)),
        )
        .route(
            "/metrics",
            axum::routing::get(move || {
                let (handle, observe) = (handle.clone(), observe.clone());
                async move {
                    observe();
                    handle.run_upkeep();
                    (
                        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
                        handle.render(),
                    )
                }
            }),
        )
}
