//! Runs queued tasks on AWS: the SQS batch handler of the worker Lambda and
//! the settings the long-running poller shares with it.

use aws_adapters::{Clients, Names, wiring};
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use chrono::TimeDelta;
use platform::queue::JobMessage;
use platform::worker::{Disposition, WorkerDeps, run_job};
use std::sync::Arc;

/// Worker settings over the AWS ports: the lease outlives the worker
/// Lambda's 15-minute limit; three attempts, then FAILED.
pub fn deps(clients: &Clients, names: &Names) -> WorkerDeps {
    let tasks: Arc<dyn platform::tasks::TaskStore> = Arc::new(wiring::task_store(clients, names));
    WorkerDeps {
        tasks: tasks.clone(),
        handlers: Arc::new(services::jobs::registry(
            Arc::new(wiring::market_data(clients, names)),
            Arc::new(wiring::scanner_store(clients, names)),
            tasks,
            // A batch's job queues its chunks.
            Arc::new(aws_adapters::SqsQueue::new(
                clients.sqs.clone(),
                &names.queue_url,
            )),
        )),
        lease: TimeDelta::minutes(16),
        max_attempts: 3,
    }
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

/// One run of the nightly scanner for a scheduled event: the date the event
/// names (`{"date": "YYYY-MM-DD"}`), else the latest session. An event with
/// `"from"` records the history of the sessions from then to `date` (a
/// backfill, invoked by hand). Answers what it wrote; a failure is an
/// error, so the schedule's retries apply.
pub async fn scan(
    market: &dyn platform::marketdata::MarketData,
    store: &dyn platform::scanner::ScannerStore,
    event: &serde_json::Value,
) -> Result<serde_json::Value, lambda_runtime::Error> {
    use services::analytics::scanner::nightly;
    let field = |name: &str| -> Result<Option<chrono::NaiveDate>, String> {
        match event.get(name).and_then(|d| d.as_str()) {
            Some(d) => d
                .parse::<chrono::NaiveDate>()
                .map(Some)
                .map_err(|e| format!("event '{name}' {d:?}: {e}")),
            None => Ok(None),
        }
    };
    let date = field("date")?;
    let started = std::time::Instant::now();
    if let Some(from) = field("from")? {
        use services::analytics::scanner::history::backfill;
        let s = backfill(
            market,
            store,
            from,
            date,
            &platform::worker::Progress::default(),
        )
        .await
        .map_err(|e| e.to_string())?;
        let seconds = started.elapsed().as_secs_f64();
        tracing::info!(from = %s.from, to = %s.to, sessions = s.sessions, items = s.items, seconds, "scanner: history recorded");
        return Ok(serde_json::json!({
            "from": s.from.to_string(),
            "to": s.to.to_string(),
            "sessions": s.sessions,
            "months": s.months,
            "items": s.items,
            "seconds": seconds,
        }));
    }
    let s = nightly::run(market, store, date, &platform::worker::Progress::default())
        .await
        .map_err(|e| e.to_string())?;
    let seconds = started.elapsed().as_secs_f64();
    tracing::info!(date = %s.date, stocks = s.stocks, items = s.items, seconds, "scanner: day scanned");
    Ok(serde_json::json!({
        "date": s.date.to_string(),
        "stocks": s.stocks,
        "items": s.items,
        "key": platform::scanner::key(s.date),
        "seconds": seconds,
    }))
}
