//! Runs queued tasks on AWS: the SQS batch handler of the worker Lambda and
//! the settings the long-running poller shares with it.

use aws_adapters::{Clients, Names, wiring};
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use chrono::TimeDelta;
use platform::queue::JobMessage;
use platform::worker::{Disposition, WorkerDeps, run_job_watched};
use std::sync::Arc;
use std::time::Duration;

pub mod event_source;
pub mod fault;
pub mod ingest;
pub mod keeper;

pub use ingest::{Ingest, ingest};

/// How long one job may run in the worker function: its timeout
/// (`MARKETLAB_JOB_TIMEOUT_SECONDS`, the template's `WorkerTimeout`, 120 s
/// by default); the stall bound by default. A claim's lease is shorter
/// ([`lease`]).
pub fn job_timeout() -> Duration {
    seconds_from_env("MARKETLAB_JOB_TIMEOUT_SECONDS").unwrap_or(Duration::from_secs(120))
}

/// How long a running job may report nothing before its task and message
/// are given back (`MARKETLAB_JOB_STALL_SECONDS`, the job timeout by
/// default: a job that may run longer reports its progress).
pub fn stall_bound() -> Duration {
    seconds_from_env("MARKETLAB_JOB_STALL_SECONDS").unwrap_or_else(job_timeout)
}

fn seconds_from_env(name: &str) -> Option<Duration> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .map(Duration::from_secs_f64)
}

/// The job queue's visibility timeout: `MARKETLAB_QUEUE_VISIBILITY_SECONDS`
/// (the template sets it to the queue's, so a new instance makes no call
/// for it), else read from the queue, else the deployed 30 s.
pub async fn visibility(queue: &aws_adapters::SqsQueue) -> Duration {
    if let Some(v) = seconds_from_env("MARKETLAB_QUEUE_VISIBILITY_SECONDS") {
        return v;
    }
    queue.visibility().await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the queue's visibility timeout not read; taking the deployed one");
        Duration::from_secs(aws_adapters::provision::VISIBILITY_SECONDS.into())
    })
}

/// A poller's long-poll wait per receive (`MARKETLAB_POLL_WAIT_SECONDS`,
/// SQS's longest, 20 s, by default): an empty queue costs a request per wait.
pub fn poll_wait() -> i32 {
    seconds_from_env("MARKETLAB_POLL_WAIT_SECONDS").map_or(20, |w| w.as_secs().clamp(1, 20) as i32)
}

/// A claim's lease: a third of the visibility timeout (at most the job
/// timeout), renewed every third of itself while the job runs. A message
/// hidden by the heartbeat comes back at the earliest a third of the
/// visibility after its worker died, by when the lease has run out: the
/// worker that receives it again claims the task at once instead of
/// finding it busy and waiting another visibility timeout.
pub fn lease(visibility: Duration, job_timeout: Duration) -> TimeDelta {
    let lease = (visibility / 3).min(job_timeout);
    TimeDelta::from_std(lease).unwrap_or(TimeDelta::seconds(10))
}

/// Worker settings over the AWS ports: a claim's lease from the queue's
/// visibility timeout ([`lease`]); three attempts, then FAILED.
/// `MARKETLAB_FAULT_STALL_JOBS=n` makes the first `n` jobs stall for good
/// ([`fault::StallFirst`]), for trying recovery.
pub fn deps(clients: &Clients, names: &Names, visibility: Duration) -> WorkerDeps {
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
        lease: lease(visibility, job_timeout()),
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
/// batch inbox: what the worker function and the poller sweep it for.
pub fn inbox_event(body: &str) -> bool {
    aws_adapters::is_s3_test_event(body)
        || object_keys(body)
            .iter()
            .any(|k| k.starts_with(BATCH_PREFIX))
}

/// The object keys an S3 event (a queue message's body) names, decoded: S3
/// sends each key form-encoded (`+` a space, `%XX` a byte, `/` as `%2F` from
/// some senders).
pub(crate) fn object_keys(body: &str) -> Vec<String> {
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
                    form_urlencoded::parse(format!("k={k}").as_bytes())
                        .next()
                        .map_or_else(|| k.to_string(), |(_, v)| v.into_owned())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Runs each message of a batch; messages to deliver again are reported as
/// batch item failures, everything else is acknowledged. An S3 event about
/// the batch inbox sweeps it (when `inbox` is given); any other body that is
/// not a job message can never succeed: it is logged and reported failed,
/// so it ends in the dead-letter queue. With a `heartbeat`, the messages not
/// yet done stay hidden while the running job reports (the queue's
/// visibility timeout is short: a batch whose instance died comes back
/// within it), and a job that stalls has its message given back at once.
pub async fn handle_batch(
    deps: &WorkerDeps,
    inbox: Option<&BucketInbox>,
    heartbeat: Option<&keeper::Heartbeat>,
    event: SqsEvent,
) -> SqsBatchResponse {
    let mut response = SqsBatchResponse::default();
    let held = keeper::Held::new(
        event
            .records
            .iter()
            .filter_map(|r| r.receipt_handle.clone()),
    );
    let _keeping = heartbeat.map(|h| h.keep(held.clone()));
    for record in event.records {
        let id = record.message_id.clone().unwrap_or_default();
        // A finished message stays held: the event source deletes the
        // batch's successes only once the invocation answers.
        let retry = run_record(deps, inbox, heartbeat, &held, &record).await;
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

/// One message of a batch; answers whether it is to be delivered again.
async fn run_record(
    deps: &WorkerDeps,
    inbox: Option<&BucketInbox>,
    heartbeat: Option<&keeper::Heartbeat>,
    held: &keeper::Held,
    record: &aws_lambda_events::event::sqs::SqsMessage,
) -> bool {
    let id = record.message_id.as_deref().unwrap_or_default();
    let body = record.body.as_deref().unwrap_or_default();
    if let Some(inbox) = inbox
        && inbox_event(body)
    {
        return match inbox.sweep().await {
            Ok(s) => {
                tracing::info!(
                    submitted = s.submitted,
                    refused = s.refused,
                    written = s.written,
                    "batch inbox swept"
                );
                false
            }
            Err(e) => {
                tracing::warn!(error = %e, "batch inbox sweep failed; the event comes again");
                true
            }
        };
    }
    // Not a job: reported failed each time, so the queue's redrive moves
    // it to the dead-letter queue, where an operator can read it.
    let Some(mut message) = serde_json::from_str::<JobMessage>(body).ok() else {
        tracing::error!(message_id = %id, "a message that is not a job message; left for the dead-letter queue");
        return true;
    };
    message.trace = aws_adapters::trace_of(
        record
            .message_attributes
            .get(aws_adapters::TRACEPARENT)
            .and_then(|a| a.string_value.as_deref()),
        record.attributes.get("AWSTraceHeader").map(String::as_str),
    );
    let progress = platform::worker::Progress::default();
    held.running(progress.clone());
    match run_job_watched(deps, &message, progress).await {
        Ok(Disposition::Done | Disposition::Waiting) => false,
        Ok(Disposition::Stalled(reason)) => {
            // Its task is released: another worker may run it now.
            if let (Some(beat), Some(handle)) = (heartbeat, &record.receipt_handle) {
                held.done(handle);
                match beat.queue.give_back(handle).await {
                    Ok(()) => {
                        tracing::warn!(task_id = %message.task_id, %reason, "message given back")
                    }
                    Err(e) => tracing::warn!(task_id = %message.task_id, %reason, error = %e,
                        "message not given back; it comes back after the visibility timeout"),
                }
            }
            true
        }
        Ok(Disposition::Retry(reason)) => {
            tracing::warn!(task_id = %message.task_id, %reason, "returning the message to the queue");
            true
        }
        Err(e) => {
            tracing::error!(task_id = %message.task_id, error = %e, "job failed on a dependency");
            true
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The deployed lease is a third of the 30 s visibility timeout; a
    /// shorter job timeout (scaled-down drills) bounds it.
    #[test]
    fn a_lease_is_a_third_of_the_visibility_timeout_at_most_the_job_timeout() {
        let s = Duration::from_secs;
        assert_eq!(lease(s(30), s(120)), TimeDelta::seconds(10));
        assert_eq!(lease(s(3), s(1)), TimeDelta::seconds(1));
        assert_eq!(lease(s(30), s(2)), TimeDelta::seconds(2));
    }

    /// A batch file's event is told apart however its key is encoded (moto
    /// encodes the slashes too), and an event about market data is not one.
    #[test]
    fn a_batch_file_s_event_is_an_inbox_event_whatever_its_key_s_encoding() {
        let event =
            |key: &str| format!(r#"{{"Records":[{{"s3":{{"object":{{"key":"{key}"}}}}}}]}}"#);
        assert!(inbox_event(&event(
            "batches/demo%40marketlab.local/periods.jsonl"
        )));
        assert!(inbox_event(&event(
            "batches%2Fdemo%40marketlab.local%2Fperiods.jsonl"
        )));
        assert!(inbox_event(
            r#"{"Service":"Amazon S3","Event":"s3:TestEvent"}"#
        ));
        assert!(!inbox_event(&event("incoming%2FAAPL.csv")));
        assert!(!inbox_event("not a job"));
        assert_eq!(
            ingest::incoming_keys(&event("incoming%2FA+B.csv")),
            ["incoming/A B.csv"]
        );
    }
}
