//! The ingest function: files put under the bucket's `incoming/` imported
//! as their events arrive, the completed session scanned, the data's lag
//! measured.

use aws_adapters::{Clients, Names, wiring};
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse};

/// The ingest function's ports: the market data it merges into, the
/// scanner it runs once a session is complete, and the allowance past which
/// the data are stale.
pub struct Ingest {
    pub market: platform::marketdata::ParquetMarketData,
    pub scanner: platform::scanner::ParquetScannerStore,
    pub events: Option<platform::webhooks::emit::Events>,
}

impl Ingest {
    pub fn new(clients: &Clients, names: &Names) -> Self {
        Ingest {
            market: wiring::market_data(clients, names),
            scanner: wiring::scanner_store(clients, names),
            events: wiring::webhooks(clients, names).map(|h| h.events()),
        }
    }
}

/// The keys under `incoming/` an S3 event (a queue message's body) names,
/// decoded.
pub(crate) fn incoming_keys(body: &str) -> Vec<String> {
    crate::object_keys(body)
        .into_iter()
        .filter(|k| k.starts_with(sample::import::inbox::INCOMING))
        .collect()
}

/// One invocation of the ingest function. An SQS batch of S3 events: each
/// file named under `incoming/` is imported and moved with its report
/// (a message whose import failed on a dependency comes again; one that
/// names no incoming file is left for the dead-letter queue); then the
/// latest session is scanned if it is complete and was not. Any other
/// event (the hourly schedule) only measures the lag. Both record the
/// data's lag as a metric.
pub async fn ingest(ctx: &Ingest, event: serde_json::Value) -> serde_json::Value {
    let mut response = SqsBatchResponse::default();
    let records = event
        .get("Records")
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default();
    let mut taken = 0;
    // One ingest runs at a time (reserved concurrency 1): an import a
    // stopped instance left aside is finished or removed first.
    if !records.is_empty()
        && let Err(e) = sample::import::recover(&ctx.market).await
    {
        tracing::warn!(error = %e, "market data: imports cut short were not recovered");
    }
    for record in &records {
        let id = record
            .get("messageId")
            .and_then(|i| i.as_str())
            .unwrap_or_default()
            .to_string();
        let body = record
            .get("body")
            .and_then(|b| b.as_str())
            .unwrap_or_default();
        let keys = incoming_keys(body);
        if keys.is_empty() && !aws_adapters::is_s3_test_event(body) {
            tracing::error!(message_id = %id, "not an S3 event about incoming/; left for the dead-letter queue");
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = id;
            response.batch_item_failures.push(failure);
            continue;
        }
        for key in keys {
            let inbox = sample::import::inbox::BlobInbox::new(ctx.market.blobs().clone());
            let name = &key[sample::import::inbox::INCOMING.len()..];
            let options = sample::import::Options::default();
            let limit = sample::import::inbox::max_bytes_from_env();
            match sample::import::inbox::take(&ctx.market, &inbox, name, limit, &options).await {
                Ok(Some(t)) => {
                    taken += 1;
                    let outcome = if t.report.refused() {
                        "rejected"
                    } else {
                        "ingested"
                    };
                    platform::telemetry::data_import(outcome);
                    tracing::info!(file = %t.name, moved_to = %t.moved_to, errors = t.report.errors,
                        warnings = t.report.warnings, sessions = t.added, "market data: {outcome}");
                }
                Ok(None) => tracing::info!(%key, "market data: already taken"),
                Err(e) => {
                    tracing::warn!(%key, error = %e, "market data: not imported; the event comes again");
                    let mut failure = BatchItemFailure::default();
                    failure.item_identifier = id.clone();
                    response.batch_item_failures.push(failure);
                }
            }
        }
    }
    let mut scanned = serde_json::Value::Null;
    if taken > 0 {
        match services::analytics::scanner::follow::follow(
            &ctx.market,
            &ctx.scanner,
            ctx.events.as_ref(),
        )
        .await
        {
            Ok(Some(s)) => scanned = serde_json::json!(s.date.to_string()),
            Ok(None) => {}
            Err(e) => tracing::error!(error = %e, "scanner: the completed session was not scanned"),
        }
    }
    use platform::marketdata::MarketData;
    let lag = match ctx.market.latest_date().await {
        Ok(latest) => {
            let lag = services::analytics::scanner::follow::lag(latest, chrono::Utc::now());
            platform::telemetry::data_lag(lag);
            Some(lag.as_secs())
        }
        Err(e) => {
            tracing::warn!(error = %e, "market data: the latest session is unknown");
            None
        }
    };
    if records.is_empty() {
        return serde_json::json!({"lag_seconds": lag});
    }
    let mut answer = serde_json::to_value(&response).unwrap_or_default();
    answer["scanned"] = scanned;
    answer
}
