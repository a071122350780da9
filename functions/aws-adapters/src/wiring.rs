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

/// Market data: Parquet objects in the bucket.
pub fn market_data(clients: &Clients, names: &Names) -> ParquetMarketData {
    ParquetMarketData::new(Arc::new(S3Blobs::new(clients.s3.clone(), &names.bucket)))
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
