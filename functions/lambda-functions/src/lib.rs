//! What the HTTP Lambda functions share: the ports wired to AWS, and HTTP
//! serving that picks Lambda or a local socket at start-up. The worker and
//! the poller live in `functions/worker`, which links no HTTP crate.

use api::AppState;
use aws_adapters::{Clients, DynamoAccountStore, DynamoFailureLog, Names, SqsQueue, wiring};
use platform::accounts::Authenticator;
use std::sync::Arc;
use std::time::Duration;

/// The ports over DynamoDB, SQS and S3, named by the template's environment.
pub async fn aws_state() -> AppState {
    let (clients, names) = (Clients::from_env().await, Names::from_env());
    state_from(&clients, &names)
}

pub fn state_from(clients: &Clients, names: &Names) -> AppState {
    state_with(clients, names, wiring::key_pepper())
}

/// The ports as [`state_from`] wires them, API keys hashed with `pepper`
/// (none: keys are refused).
pub fn state_with(
    clients: &Clients,
    names: &Names,
    pepper: Option<platform::keys::Pepper>,
) -> AppState {
    let accounts = Arc::new(DynamoAccountStore::new(
        clients.dynamodb.clone(),
        &names.accounts_table,
    ));
    AppState {
        tasks: Arc::new(wiring::task_store(clients, names)),
        queue: Arc::new(SqsQueue::new(clients.sqs.clone(), &names.queue_url)),
        market: Arc::new(wiring::market_data(clients, names)),
        scanner: Arc::new(wiring::scanner_store(clients, names)),
        auth: Arc::new({
            let auth = Authenticator::new(
                accounts,
                Duration::from_secs(300),
                Arc::new(DynamoFailureLog::new(
                    clients.dynamodb.clone(),
                    &names.limits_table,
                )),
            )
            .expect("authenticator");
            match pepper {
                Some(p) => auth.with_keys(wiring::keys(clients, names, p)),
                None => auth,
            }
        }),
        data_legacy_json: std::env::var("MARKETLAB_DATA_LEGACY_JSON")
            .is_ok_and(|v| v == "1" || v == "true"),
        limits: Default::default(),
        metering: Some(Arc::new(wiring::metering(clients, names))),
        uploads: wiring::uploads(clients, names),
        webhooks: wiring::webhooks(clients, names),
        compute: Default::default(),
        long_polls: api::state::long_polls(&Default::default()),
        batch_reads: Default::default(),
        test_data: Some({
            let (market, scanner) = wiring::test_data(clients, names);
            api::state::TestData {
                market: Arc::new(market),
                scanner: Arc::new(scanner),
            }
        }),
    }
}

/// One service group as its Lambda function: logging, the AWS adapters
/// from the environment, and the group's routes served by [`serve_http`].
pub async fn serve_group(group: api::routes::Group) -> Result<(), lambda_http::Error> {
    api::logging::init();
    platform::pool::init(None);
    let state = aws_state().await;
    serve_http(&state, group.name(), api::routes::service(&state, group)).await
}

/// Serves a router on Lambda when the runtime API is present, else on
/// 127.0.0.1:`$PORT` (default 9000) for local runs. Usage counts are written
/// at the end of a request once [`platform::metering::FLUSH_EVERY`] has
/// passed on Lambda (a frozen instance runs nothing between requests), and
/// by a background task locally. On Lambda the invocation's metrics are
/// written as EMF lines (`service` is their dimension), and its spans sent
/// when a collector is set, before it is answered.
pub async fn serve_http(
    state: &AppState,
    service: &'static str,
    app: axum::Router,
) -> Result<(), lambda_http::Error> {
    platform::memory::return_large_blocks();
    let metering = state.metering.clone();
    platform::telemetry::otlp::install(service);
    if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        let emf = platform::telemetry::emf::Emf::install(service);
        let app = app
            .layer(axum::middleware::map_request(lambda_context))
            .layer(axum::middleware::from_fn(move |request, next| {
                flush_after(metering.clone(), emf, request, next)
            }));
        return lambda_http::run(app).await;
    }
    let _flusher = metering.map(|m| api::serve::AbortOnDrop(tokio::spawn(m.flush_forever())));
    let _spans = api::serve::AbortOnDrop(tokio::spawn(platform::telemetry::otlp::export_forever()));
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(9000);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    tracing::info!(addr = %listener.local_addr()?, "serving locally (no Lambda runtime)");
    api::serve::serve(
        listener,
        app,
        api::serve::ConnectionLimits::default(),
        platform::worker::shutdown_signal(),
    )
    .await?;
    Ok(())
}

/// The caller's address from the API Gateway request context, for the
/// failed-login limits per client address; and the X-Ray trace Lambda was
/// invoked in, for a request that names no trace of its own.
async fn lambda_context(mut request: axum::extract::Request) -> axum::extract::Request {
    use lambda_http::RequestExt;
    use lambda_http::request::RequestContext;
    if !request.headers().contains_key("traceparent")
        && let Some(xray) = request
            .lambda_context_ref()
            .and_then(|c| c.xray_trace_id.as_deref())
            .and_then(|x| axum::http::HeaderValue::from_str(x).ok())
    {
        request.headers_mut().insert("x-amzn-trace-id", xray);
    }
    let ip = match request.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(c)) => {
            c.http.source_ip.as_deref().and_then(|s| s.parse().ok())
        }
        _ => None,
    };
    if let Some(ip) = ip {
        request.extensions_mut().insert(api::serve::ClientIp(ip));
    }
    request
}

/// Runs the request, then writes the usage counts if they are due, and the
/// invocation's metrics.
async fn flush_after(
    metering: Option<Arc<platform::metering::Metering>>,
    emf: Option<&'static platform::telemetry::emf::Emf>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if let Some(e) = emf {
        e.invoked();
    }
    let response = next.run(request).await;
    if let Some(m) = metering {
        m.flush_if_due().await;
    }
    if let Some(e) = emf {
        e.flush();
    }
    platform::telemetry::otlp::flush().await;
    response
}
