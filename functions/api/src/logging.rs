//! JSON logs through `tracing`, with a request id and the trace id on
//! every request span.

use axum::http::Request;
use tower_http::request_id::{
    MakeRequestUuid, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

pub use platform::logging::init;

/// Adds request-id, tracing and id propagation layers to a router.
pub fn layer<S: Clone + Send + Sync + 'static>(router: axum::Router<S>) -> axum::Router<S> {
    router
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
            let id = req
                .extensions()
                .get::<RequestId>()
                .and_then(|id| id.header_value().to_str().ok())
                .unwrap_or("-");
            let trace = req
                .extensions()
                .get::<platform::telemetry::trace::Trace>()
                .map(|t| t.id())
                .unwrap_or_default();
            tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id, trace_id = %trace)
        })
        .on_response(DefaultOnResponse::new().level(Level::INFO)))
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .layer(axum::middleware::from_fn(crate::telemetry::observe))
}
