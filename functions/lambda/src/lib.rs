//! What the Lambda binaries share: the ports wired to AWS, HTTP serving that
//! picks Lambda or a local socket at start-up, and the SQS batch handler.

use api::AppState;
use aws_adapters::{
    Clients, DynamoAccountStore, DynamoFailureLog, DynamoTaskStore, Names, S3Blobs, SqsQueue,
};
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use chrono::TimeDelta;
use platform::accounts::Authenticator;
use platform::marketdata::ParquetMarketData;
use platform::queue::JobMessage;
use platform::worker::{Disposition, WorkerDeps, run_job};
use std::sync::Arc;
use std::time::Duration;

/// The ports over DynamoDB, SQS and S3, named by the template's environment.
pub async fn aws_state() -> AppState {
    let (clients, names) = (Clients::from_env().await, Names::from_env());
    state_from(&clients, &names)
}

pub fn state_from(clients: &Clients, names: &Names) -> AppState {
    let accounts = Arc::new(DynamoAccountStore::new(
        clients.dynamodb.clone(),
        &names.accounts_table,
    ));
    // Finished tasks expire after MARKETLAB_TASK_TTL_DAYS (unset or 0: kept).
    let ttl_days: Option<i64> = std::env::var("MARKETLAB_TASK_TTL_DAYS")
        .ok()
        .and_then(|d| d.parse().ok())
        .filter(|d| *d > 0);
    let spill = S3Blobs::new(clients.s3.clone(), &names.bucket);
    AppState {
        tasks: Arc::new(
            DynamoTaskStore::new(clients.dynamodb.clone(), &names.tasks_table, spill)
                .with_ttl(ttl_days.map(TimeDelta::days)),
        ),
        queue: Arc::new(SqsQueue::new(clients.sqs.clone(), &names.queue_url)),
        market: Arc::new(ParquetMarketData::new(Arc::new(S3Blobs::new(
            clients.s3.clone(),
            &names.bucket,
        )))),
        auth: Arc::new(
            Authenticator::new(
                accounts,
                Duration::from_secs(300),
                Arc::new(DynamoFailureLog::new(
                    clients.dynamodb.clone(),
                    &names.limits_table,
                )),
            )
            .expect("authenticator"),
        ),
        data_legacy_json: std::env::var("MARKETLAB_DATA_LEGACY_JSON")
            .is_ok_and(|v| v == "1" || v == "true"),
        limits: Default::default(),
    }
}

/// Worker settings: the lease outlives the worker Lambda's 15-minute limit.
pub fn worker_deps(state: &AppState) -> WorkerDeps {
    WorkerDeps {
        tasks: state.tasks.clone(),
        handlers: Arc::new(api::jobs::registry(state)),
        lease: TimeDelta::minutes(16),
        max_attempts: 3,
    }
}

/// Serves a router on Lambda when the runtime API is present, else on
/// 127.0.0.1:`$PORT` (default 9000) for local runs.
pub async fn serve_http(app: axum::Router) -> Result<(), lambda_http::Error> {
    if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        return lambda_http::run(app.layer(axum::middleware::map_request(client_ip))).await;
    }
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
        api::server::shutdown_signal(),
    )
    .await?;
    Ok(())
}

/// The caller's address from the API Gateway request context, for the
/// failed-login limits per client address.
async fn client_ip(mut request: axum::extract::Request) -> axum::extract::Request {
    use lambda_http::RequestExt;
    use lambda_http::request::RequestContext;
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

/// Runs each message of a batch; messages to deliver again are reported as
/// batch item failures, everything else is acknowledged. A body that is not a
/// job message can never succeed: it is logged and acknowledged.
pub async fn handle_batch(deps: &WorkerDeps, event: SqsEvent) -> SqsBatchResponse {
    let mut response = SqsBatchResponse::default();
    for record in event.records {
        let id = record.message_id.clone().unwrap_or_default();
        let Some(message) = record
            .body
            .as_deref()
            .and_then(|b| serde_json::from_str::<JobMessage>(b).ok())
        else {
            tracing::error!(message_id = %id, "dropping a message that is not a job message");
            continue;
        };
        let retry = match run_job(deps, &message).await {
            Ok(Disposition::Done) => false,
            Ok(Disposition::Retry(reason)) => {
                tracing::warn!(task_id = %message.task_id, %reason, "returning the message to the queue");
                true
            }
            Err(e) => {
                tracing::error!(task_id = %message.task_id, error = %e, "job failed on a dependency");
                true
            }
        };
        if retry {
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = id;
            response.batch_item_failures.push(failure);
        }
    }
    response
}
