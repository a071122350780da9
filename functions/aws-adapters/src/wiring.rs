//! The ports over AWS as every function wires them, from the template's
//! environment: the HTTP functions and the worker share these.

use crate::{Clients, DynamoTaskStore, Names, S3Blobs};
use chrono::TimeDelta;
use platform::marketdata::ParquetMarketData;
use std::sync::Arc;

/// The task store; finished tasks expire after `MARKETLAB_TASK_TTL_DAYS`
/// (unset or 0: kept).
pub fn task_store(clients: &Clients, names: &Names) -> DynamoTaskStore {
    let ttl_days: Option<i64> = std::env::var("MARKETLAB_TASK_TTL_DAYS")
        .ok()
        .and_then(|d| d.parse().ok())
        .filter(|d| *d > 0);
    let spill = S3Blobs::new(clients.s3.clone(), &names.bucket);
    DynamoTaskStore::new(clients.dynamodb.clone(), &names.tasks_table, spill)
        .with_ttl(ttl_days.map(TimeDelta::days))
}

/// The scanner's day files, next to the market data in the bucket.
pub fn scanner_store(clients: &Clients, names: &Names) -> platform::scanner::ParquetScannerStore {
    platform::scanner::ParquetScannerStore::new(
        Arc::new(S3Blobs::new(clients.s3.clone(), &names.bucket)),
        platform::scanner::READ_TTL,
    )
}

/// CSV mode's uploaded bars, under `uploads/` in the bucket.
pub fn uploads(clients: &Clients, names: &Names) -> platform::uploads::Uploads {
    platform::uploads::Uploads::new(Arc::new(S3Blobs::new(clients.s3.clone(), &names.bucket)))
}

/// Market data: Parquet objects in the bucket, following the data
/// generation (`MARKETLAB_DATA_CHECK_SECONDS`, default 30), so a warm
/// instance serves an import within that bound.
pub fn market_data(clients: &Clients, names: &Names) -> ParquetMarketData {
    ParquetMarketData::new(Arc::new(S3Blobs::new(clients.s3.clone(), &names.bucket)))
        .checking(platform::marketdata::generation::check_from_env())
}

/// Where the test-mode sample set lives in the bucket.
pub const TEST_PREFIX: &str = "sample/";

/// Test mode's market data and scanner days: the sample set under
/// [`TEST_PREFIX`] in the bucket, read as the live data are.
pub fn test_data(
    clients: &Clients,
    names: &Names,
) -> (ParquetMarketData, platform::scanner::ParquetScannerStore) {
    let blobs: Arc<dyn platform::marketdata::BlobStore> =
        Arc::new(platform::marketdata::Under::new(
            Arc::new(S3Blobs::new(clients.s3.clone(), &names.bucket)),
            TEST_PREFIX,
        ));
    (
        ParquetMarketData::new(blobs.clone())
            .checking(platform::marketdata::generation::check_from_env()),
        platform::scanner::ParquetScannerStore::new(blobs, platform::scanner::READ_TTL),
    )
}

/// The pepper API keys are hashed with: `MARKETLAB_API_KEY_PEPPER` (the
/// template's generated secret); none without it, and keys are refused.
pub fn key_pepper() -> Option<platform::keys::Pepper> {
    let text = std::env::var("MARKETLAB_API_KEY_PEPPER").ok()?;
    platform::keys::Pepper::from_text(&text)
        .inspect_err(|e| {
            tracing::error!(error = %e, "MARKETLAB_API_KEY_PEPPER unusable: API keys are off");
        })
        .ok()
}

/// API keys over DynamoDB, hashed with `pepper`.
pub fn keys(
    clients: &Clients,
    names: &Names,
    pepper: platform::keys::Pepper,
) -> platform::keys::KeyChecker {
    platform::keys::KeyChecker::new(
        Arc::new(crate::DynamoKeyStore::new(
            clients.dynamodb.clone(),
            &names.keys_table,
        )),
        pepper,
    )
}

/// Usage counters and plan quotas over DynamoDB, shared by every instance.
pub fn metering(clients: &Clients, names: &Names) -> platform::metering::Metering {
    platform::metering::Metering::new(
        Arc::new(crate::DynamoUsageStore::new(
            clients.dynamodb.clone(),
            names.usage_table.clone(),
        )),
        Arc::new(crate::DynamoQuotaStore::new(
            clients.dynamodb.clone(),
            &names.limits_table,
        )),
        Arc::new(crate::DynamoAccountStore::new(
            clients.dynamodb.clone(),
            &names.accounts_table,
        )),
    )
}

/// Webhooks over DynamoDB and the webhook queue, signing with the operator
/// key `MARKETLAB_WEBHOOK_KEY` (the template's generated secret); none
/// without a key, and the webhook routes then answer 404.
pub fn webhooks(clients: &Clients, names: &Names) -> Option<platform::webhooks::Hooks> {
    use platform::webhooks::signing::Keyring;
    let text = std::env::var("MARKETLAB_WEBHOOK_KEY").ok()?;
    let keys = match Keyring::from_text(&text) {
        Ok(k) => k,
        Err(e) => {
            tracing::error!(error = %e, "MARKETLAB_WEBHOOK_KEY unusable: webhooks are off");
            return None;
        }
    };
    Some(platform::webhooks::Hooks {
        store: Arc::new(crate::DynamoWebhooks::new(
            clients.dynamodb.clone(),
            &names.webhooks_table,
        )),
        outbox: Arc::new(crate::SqsOutbox::new(
            clients.sqs.clone(),
            &names.webhook_queue_url,
        )),
        keys,
        policy: platform::webhooks::address::Policy {
            allow_loopback: std::env::var("MARKETLAB_WEBHOOKS_ALLOW_LOOPBACK")
                .is_ok_and(|v| v == "1" || v == "true"),
            ..Default::default()
        },
    })
}

/// The retry schedule, `MARKETLAB_WEBHOOK_RETRY_SECONDS` (seconds,
/// comma-separated) or Standard Webhooks' default.
pub fn webhook_schedule() -> platform::webhooks::RetrySchedule {
    std::env::var("MARKETLAB_WEBHOOK_RETRY_SECONDS")
        .ok()
        .and_then(|v| match v.parse() {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::error!(error = %e, "MARKETLAB_WEBHOOK_RETRY_SECONDS unusable: the default schedule");
                None
            }
        })
        .unwrap_or_default()
}
