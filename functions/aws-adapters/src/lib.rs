//! AWS adapters of the platform's ports. They pass the same contract suites as
//! the embedded adapters (tests/e2e/contract), run against an AWS emulator.

mod accounts;
mod blobs;
pub mod breaker;
mod config;
pub mod dead_letters;
mod keyed;
mod keys;
mod limits;
pub mod provision;
mod queue;
mod quota;
mod tasks;
mod usage;
mod webhooks;
pub mod wiring;

pub use accounts::DynamoAccountStore;
/// The SQS client the adapters take, for crates that do not link the SDK themselves.
pub use aws_sdk_sqs::Client as SqsClient;
pub use blobs::S3Blobs;
pub use config::{Clients, Names};
pub use keys::{ACCOUNT_INDEX, DynamoKeyStore};
pub use limits::DynamoFailureLog;
pub use queue::{SqsQueue, TRACEPARENT, is_s3_test_event, trace_of};
pub use quota::DynamoQuotaStore;
pub use tasks::{DAMAGED, DynamoTaskStore};
pub use usage::DynamoUsageStore;
pub use webhooks::{DynamoWebhooks, KIND_INDEX, SqsOutbox};

use platform::PortError;

/// Maps an SDK failure: throttling, timeouts, transport errors and a call
/// an open [`breaker`] did not make are retryable; everything else is an
/// adapter fault.
pub(crate) fn sdk_error<E: std::error::Error + Send + Sync + 'static>(
    what: &str,
    e: aws_sdk_dynamodb::error::SdkError<E>,
) -> PortError {
    use aws_sdk_dynamodb::error::SdkError;
    match &e {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            PortError::unavailable_by(what, e)
        }
        SdkError::ServiceError(s) if matches!(s.raw().status().as_u16(), 429 | 500..=599) => {
            PortError::unavailable_by(what, e)
        }
        _ if breaker::NotCalled::caused(&e) => PortError::unavailable_by(what, e),
        _ => PortError::fault(what, e),
    }
}

/// Whether a DynamoDB call failed only because its condition did not hold
/// (an answer, not a fault).
pub(crate) fn conditional<E: aws_sdk_dynamodb::error::ProvideErrorMetadata>(
    e: &aws_sdk_dynamodb::error::SdkError<E>,
) -> bool {
    e.as_service_error()
        .and_then(|s| s.code())
        .is_some_and(|c| c == "ConditionalCheckFailedException")
}

/// Whether a transaction was cancelled because a condition did not hold
/// (rather than by a conflict or an outage).
pub(crate) fn canceled_by_condition(
    e: &aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
    >,
) -> bool {
    use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
    match e.as_service_error() {
        Some(TransactWriteItemsError::TransactionCanceledException(c)) => c
            .cancellation_reasons()
            .iter()
            .any(|r| r.code() == Some("ConditionalCheckFailed")),
        _ => false,
    }
}

/// Whether a conditional write went through: its condition not holding is
/// an answer (false), not a fault.
pub(crate) fn written<T, E>(
    result: Result<T, aws_sdk_dynamodb::error::SdkError<E>>,
    what: &str,
) -> Result<bool, PortError>
where
    E: aws_sdk_dynamodb::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match result {
        Ok(_) => Ok(true),
        Err(e) if conditional(&e) => Ok(false),
        Err(e) => Err(sdk_error(what, e)),
    }
}

/// Every item a scan finds, page after page.
pub(crate) async fn scan_all(
    scan: aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder,
    what: &str,
) -> Result<Vec<keyed::Item>, PortError> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let page = scan
            .clone()
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| sdk_error(what, e))?;
        items.extend(page.items.unwrap_or_default());
        match page.last_evaluated_key {
            Some(k) if !k.is_empty() => start = Some(k),
            _ => return Ok(items),
        }
    }
}

/// Every item a query finds, page after page.
pub(crate) async fn query_all(
    query: aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder,
    what: &str,
) -> Result<Vec<keyed::Item>, PortError> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let page = query
            .clone()
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| sdk_error(what, e))?;
        items.extend(page.items.unwrap_or_default());
        match page.last_evaluated_key {
            Some(k) if !k.is_empty() => start = Some(k),
            _ => return Ok(items),
        }
    }
}
