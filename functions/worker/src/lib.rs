//! Runs queued tasks on AWS: the SQS batch handler of the worker Lambda and
//! the settings the long-running poller shares with it.

use aws_adapters::{Clients, Names, wiring};
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use chrono::TimeDelta;
use platform::queue::JobMessage;
use platform::worker::{Disposition, WorkerDeps, run_job};
use std::sync::Arc;

pub mod fault;

/// How long one job may hold its task without a heartbeat: the worker
/// function's timeout (`MARKETLAB_JOB_TIMEOUT_SECONDS`, the template's
/// `WorkerTimeout`, 120 s by default). The queue's visibility timeout is six
/// times it, so a batch whose worker died is delivered again, and its tasks
/// claimed again, within that (docs/deploy.md#recovery).
pub fn job_timeout() -> std::time::Duration {
    std::env::var("MARKETLAB_JOB_TIMEOUT_SECONDS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .map_or(
            std::time::Duration::from_secs(120),
            std::time::Duration::from_secs_f64,
        )
}

/// How long a running job may report nothing before its task and message
/// are given back (`MARKETLAB_JOB_STALL_SECONDS`, the job timeout by
/// default: a job that may run longer reports its progress).
pub fn stall_bound() -> std::time::Duration {
    std::env::var("MARKETLAB_JOB_STALL_SECONDS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .map_or_else(job_timeout, std::time::Duration::from_secs_f64)
}

/// Worker settings over the AWS ports: a claim's lease is the job timeout
/// (renewed while the job runs and reports); three attempts, then FAILED.
/// `MARKETLAB_FAULT_STALL_JOBS=n` makes the first `n` jobs stall for good
/// ([`fault::StallFirst`]), for trying recovery.
pub fn deps(clients: &Clients, names: &Names) -> WorkerDeps {
    let tasks: Arc<dyn platform::tasks::TaskStore> = Arc::new(wiring::task_store(clients, names));
    let returns =
        platform::returns::ReturnStore::new(wiring::uploads(clients, names).blobs().clone());
    WorkerDeps {
        tasks: tasks.clone(),
        // A batch dropped as a file gets its table beside the file; then
        // the owner's webhooks are told.
        after: Some(Arc::new(platform::worker::AfterEach(
            [Arc::new(services::backtest::batch_files::FileResults {
                files: Arc::new(aws_adapters::S3Blobs::new(
                    clients.s3.clone(),
                    &names.bucket,
                )),
                prefix: BATCH_PREFIX.into(),
                tasks: tasks.clone(),
                returns: Some(returns.clone()),
            }) as Arc<dyn platform::worker::AfterJob>]
            .into_iter()
            .chain(wiring::webhooks(clients, names).map(|hooks| {
                Arc::new(services::webhooks::TaskEvents {
                    events: hooks.events(),
                    tasks: tasks.clone(),
                    returns: Some(returns.clone()),
                }) as Arc<dyn platform::worker::AfterJob>
            }))
            .collect(),
        ))),
        handlers: Arc::new(fault::StallFirst::from_env().wrap(services::jobs::registry(
            Arc::new(wiring::market_data(clients, names)),
            Arc::new(wiring::scanner_store(clients, names)),
            tasks,
            // A batch's job queues its chunks.
            Arc::new(aws_adapters::SqsQueue::new(
                clients.sqs.clone(),
                &names.queue_url,
            )),
            wiring::uploads(clients, names),
            Some({
                let (market, scanner) = wiring::test_data(clients, names);
                services::jobs::TestPorts {
                    market: Arc::new(market),
                    scanner: Arc::new(scanner),
                }
            }),
        ))),
        lease: TimeDelta::from_std(job_timeout()).unwrap_or(TimeDelta::minutes(2)),
        stall: stall_bound(),
        max_attempts: 3,
        metering: Some(Arc::new(wiring::metering(clients, names))),
        // A task waiting for a slot goes back to the queue, delayed.
        queue: Arc::new(aws_adapters::SqsQueue::new(
            clients.sqs.clone(),
            &names.queue_url,
        )),
        // The HTTP functions' long-polls read the counts.
        count_ends: true,
    }
}

/// Where batch files are dropped in the bucket: `batches/<e-mail>/<name>.jsonl`.
pub const BATCH_PREFIX: &str = "batches/";

/// The bucket's batch inbox and what a sweep of it needs.
pub struct BucketInbox {
    files: aws_adapters::S3Blobs,
    market: platform::marketdata::ParquetMarketData,
    tasks: aws_adapters::DynamoTaskStore,
    queue: aws_adapters::SqsQueue,
    accounts: aws_adapters::DynamoAccountStore,
    metering: Option<Arc<platform::metering::Metering>>,
    returns: platform::returns::ReturnStore,
}

impl BucketInbox {
    /// `metering` admits each file's batch against its tenant's month, as
    /// an HTTP submit is (the worker's own, so its ledger is shared).
    pub fn new(
        clients: &Clients,
        names: &Names,
        metering: Option<Arc<platform::metering::Metering>>,
    ) -> Self {
        BucketInbox {
            files: aws_adapters::S3Blobs::new(clients.s3.clone(), &names.bucket),
            market: wiring::market_data(clients, names),
            tasks: wiring::task_store(clients, names),
            queue: aws_adapters::SqsQueue::new(clients.sqs.clone(), &names.queue_url),
            accounts: aws_adapters::DynamoAccountStore::new(
                clients.dynamodb.clone(),
                &names.accounts_table,
            ),
            metering,
            returns: platform::returns::ReturnStore::new(
                wiring::uploads(clients, names).blobs().clone(),
            ),
        }
    }

    /// Submits the new files and writes the finished batches' tables.
    pub async fn sweep(&self) -> Result<services::backtest::batch_files::Swept, services::Error> {
        use services::backtest::batch_files::{Inbox, sweep};
        sweep(&Inbox {
            files: &self.files,
            prefix: BATCH_PREFIX,
            market: &self.market,
            tasks: &self.tasks,
            queue: &self.queue,
            accounts: &self.accounts,
            metering: self.metering.as_deref(),
            returns: Some(&self.returns),
        })
        .await
    }
}

/// Whether a message body is an S3 event (or its test event) about the
/// batch inbox.
fn inbox_event(body: &str) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
        return false;
    };
    if v.get("Event").and_then(|e| e.as_str()) == Some("s3:TestEvent") {
        return true;
    }
    v.get("Records")
        .and_then(|r| r.as_array())
        .is_some_and(|records| {
            records.iter().any(|r| {
                r.pointer("/s3/object/key")
                    .and_then(|k| k.as_str())
                    .is_some_and(|k| k.starts_with(BATCH_PREFIX))
            })
        })
}

/// Runs each message of a batch; messages to deliver again are reported as
/// batch item failures, everything else is acknowledged. An S3 event about
/// the batch inbox sweeps it (when `inbox` is given); any other body that is
/// not a job message can never succeed: it is logged and reported failed,
/// so it ends in the dead-letter queue.
pub async fn handle_batch(
    deps: &WorkerDeps,
    inbox: Option<&BucketInbox>,
    event: SqsEvent,
) -> SqsBatchResponse {
    let mut response = SqsBatchResponse::default();
    for record in event.records {
        let id = record.message_id.clone().unwrap_or_default();
        let body = record.body.as_deref().unwrap_or_default();
        if let Some(inbox) = inbox
            && inbox_event(body)
        {
            match inbox.sweep().await {
                Ok(s) => tracing::info!(
                    submitted = s.submitted,
                    refused = s.refused,
                    written = s.written,
                    "batch inbox swept"
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "batch inbox sweep failed; the event comes again");
                    let mut failure = BatchItemFailure::default();
                    failure.item_identifier = id;
                    response.batch_item_failures.push(failure);
                }
            }
            continue;
        }
        // Not a job: reported failed each time, so the queue's redrive moves
        // it to the dead-letter queue, where an operator can read it.
        let Some(mut message) = serde_json::from_str::<JobMessage>(body).ok() else {
            tracing::error!(message_id = %id, "a message that is not a job message; left for the dead-letter queue");
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = id;
            response.batch_item_failures.push(failure);
            continue;
        };
        message.trace = aws_adapters::trace_of(
            record
                .message_attributes
                .get(aws_adapters::TRACEPARENT)
                .and_then(|a| a.string_value.as_deref()),
            record.attributes.get("AWSTraceHeader").map(String::as_str),
        );
        let retry = match run_job(deps, &message).await {
            Ok(Disposition::Done | Disposition::Waiting) => false,
            Ok(Disposition::Retry(reason) | Disposition::Stalled(reason)) => {
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
    // The instance may freeze after this batch: its tasks' compute is written now.
    if let Some(m) = &deps.metering
        && let Err(e) = m.flush().await
    {
        tracing::warn!(error = %e, "task compute not written; kept for the next batch");
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
    events: Option<&platform::webhooks::emit::Events>,
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
    // The schedule's run is the deadline for a session the data never
    // completed: a session already scanned (as its data completed) is not
    // scanned again.
    if date.is_none() && event.get("unless_scanned").and_then(|v| v.as_bool()) == Some(true) {
        let latest = market.latest_date().await.map_err(|e| e.to_string())?;
        if store
            .dates()
            .await
            .map_err(|e| e.to_string())?
            .contains(&latest)
        {
            tracing::info!(%latest, "scanner: the latest session was scanned already");
            return Ok(serde_json::json!({"date": latest.to_string(), "scanned_already": true}));
        }
    }
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
    if let Some(events) = events {
        nightly::tell(events, store, s.date).await;
    }
    Ok(serde_json::json!({
        "date": s.date.to_string(),
        "stocks": s.stocks,
        "items": s.items,
        "key": platform::scanner::key(s.date),
        "seconds": seconds,
    }))
}

/// The delivery function's settings: the ports of [`wiring::webhooks`],
/// the schedule, the default timeouts. None without a webhook key.
pub fn deliverer(clients: &Clients, names: &Names) -> Option<deliveries::Deliverer> {
    let hooks = wiring::webhooks(clients, names)?;
    Some(deliveries::Deliverer {
        store: hooks.store,
        outbox: hooks.outbox,
        keys: hooks.keys,
        policy: hooks.policy,
        schedule: wiring::webhook_schedule(),
        timeouts: Default::default(),
    })
}

/// Runs a batch of the webhook queue: each message one scheduled attempt.
/// One not yet due (a wait longer than SQS's 15-minute delay) goes back
/// with the rest of its wait. A store or queue failure reports the message
/// failed, so SQS hands it out again (and, after its receives, to the
/// webhook dead-letter queue); a receiver's failure is not one: it is
/// recorded and retried on the schedule.
pub async fn deliver_batch(deliverer: &deliveries::Deliverer, event: SqsEvent) -> SqsBatchResponse {
    use platform::webhooks::DeliveryJob;
    let mut response = SqsBatchResponse::default();
    for record in event.records {
        let id = record.message_id.clone().unwrap_or_default();
        let body = record.body.as_deref().unwrap_or_default();
        let done = match serde_json::from_str::<DeliveryJob>(body) {
            Err(e) => Err(format!("not a delivery job: {e}")),
            Ok(job) => {
                let wait = (job.not_before - platform::tasks::now())
                    .to_std()
                    .unwrap_or_default();
                if wait > std::time::Duration::from_secs(1) {
                    deliverer.outbox.schedule(job, wait).await
                } else {
                    deliverer.run(&job).await
                }
                .map_err(|e| e.to_string())
            }
        };
        if let Err(e) = done {
            tracing::error!(message_id = %id, error = %e, "webhook job not run; the queue hands it out again");
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = id;
            response.batch_item_failures.push(failure);
        }
    }
    response
}

/// The depth of a queue and of its dead-letter queue as gauges, read from
/// SQS at most once per interval per instance (`MARKETLAB_QUEUE_SAMPLE_SECONDS`,
/// 60 by default): the service's own view beside the task metrics. The
/// alarms read SQS's metrics, which come even when no worker runs.
pub struct QueueGauges {
    sqs: aws_adapters::SqsClient,
    queue_url: String,
    label: &'static str,
    every: std::time::Duration,
    dead_letters: tokio::sync::OnceCell<Option<String>>,
    last: parking_lot::Mutex<Option<std::time::Instant>>,
}

impl QueueGauges {
    pub fn new(clients: &Clients, queue_url: &str, label: &'static str) -> Self {
        QueueGauges {
            sqs: clients.sqs.clone(),
            queue_url: queue_url.to_string(),
            label,
            every: std::env::var("MARKETLAB_QUEUE_SAMPLE_SECONDS")
                .ok()
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|s| *s >= 0.0)
                .map_or(
                    std::time::Duration::from_secs(60),
                    std::time::Duration::from_secs_f64,
                ),
            dead_letters: tokio::sync::OnceCell::new(),
            last: parking_lot::Mutex::new(None),
        }
    }

    /// Samples both depths when the last sample is an interval old.
    pub async fn sample_if_due(&self) {
        {
            let mut last = self.last.lock();
            if last.is_some_and(|t| t.elapsed() < self.every) {
                return;
            }
            *last = Some(std::time::Instant::now());
        }
        use aws_adapters::dead_letters;
        match dead_letters::depth(&self.sqs, &self.queue_url).await {
            Ok(n) => platform::telemetry::queue(self.label, n, None),
            Err(e) => tracing::warn!(error = %e, "queue depth not read"),
        }
        let dlq = self
            .dead_letters
            .get_or_init(|| async {
                dead_letters::dead_letter_url(&self.sqs, &self.queue_url)
                    .await
                    .inspect_err(|e| tracing::warn!(error = %e, "no dead-letter queue found"))
                    .ok()
            })
            .await;
        if let Some(url) = dlq {
            match dead_letters::depth(&self.sqs, url).await {
                Ok(n) => platform::telemetry::dead_letters(self.label, n),
                Err(e) => tracing::warn!(error = %e, "dead-letter queue depth not read"),
            }
        }
    }
}

/// The oldest message of a batch, by SQS's `SentTimestamp`: how long work
/// waited in the queue, a floor of the queue's oldest age.
pub fn oldest_in(event: &SqsEvent) -> Option<std::time::Duration> {
    let now = chrono::Utc::now().timestamp_millis();
    event
        .records
        .iter()
        .filter_map(|r| r.attributes.get("SentTimestamp")?.parse::<i64>().ok())
        .map(|sent| std::time::Duration::from_millis((now - sent).max(0) as u64))
        .max()
}

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
/// decoded (S3 sends keys URL-encoded, spaces as `+`).
fn incoming_keys(body: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
        return Vec::new();
    };
    v.get("Records")
        .and_then(|r| r.as_array())
        .map(|records| {
            records
                .iter()
                .filter_map(|r| r.pointer("/s3/object/key").and_then(|k| k.as_str()))
                .map(|k| {
                    // Form encoding: `+` a space, `%XX` a byte.
                    form_urlencoded::parse(format!("k={k}").as_bytes())
                        .next()
                        .map_or_else(|| k.to_string(), |(_, v)| v.into_owned())
                })
                .filter(|k| k.starts_with(sample::import::inbox::INCOMING))
                .collect()
        })
        .unwrap_or_default()
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
        if keys.is_empty() && !body.contains("s3:TestEvent") {
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
