//! Imports the files put under `incoming/` in the market data bucket: the
//! bucket's events reach it through the ingest queue (one import at a
//! time: the function's reserved concurrency is 1). Each file is merged or
//! refused, then moved with its report to `ingested/` or `rejected/`; a
//! session whose data are complete is scanned once. The hourly schedule
//! measures the data's lag behind the calendar.
//!
//! `ingest --poll` runs the same function where Lambda's event source
//! mapping and schedule do not exist (the local stack): it reads the
//! ingest queue itself, one message per invocation, and measures the lag
//! at its start and hourly.

use lambda_runtime::{Error, LambdaEvent, run, service_fn};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

const HELP: &str = "\
ingest: the ingest function (market data imports from the bucket's incoming/).

Usage: ingest            under the Lambda runtime API (AWS, cargo lambda watch)
       ingest --poll     reads the ingest queue itself until SIGTERM or Ctrl-C,
                         as Lambda's event source mapping would (BatchSize 1,
                         one invocation at a time), and measures the lag hourly

Settings (environment; localstack/start writes them for the emulator):
  MARKETLAB_INGEST_QUEUE_URL   the ingest queue (required with --poll)
  MARKETLAB_BUCKET, MARKETLAB_WEBHOOKS_TABLE, MARKETLAB_WEBHOOK_QUEUE_URL
  AWS_REGION, AWS_ENDPOINT_URL, credentials   the standard AWS environment
  MARKETLAB_INBOX_MAX_BYTES    a file's size limit (64 MiB)
  RUST_LOG                     log level (info)
";

/// How often `--poll` measures the data's lag: the template's
/// `rate(1 hour)` schedule.
const LAG_EVERY: Duration = Duration::from_secs(3600);

#[tokio::main]
async fn main() -> Result<(), Error> {
    match std::env::args().nth(1).as_deref() {
        None => {}
        Some("--poll") => {
            poll().await;
            return Ok(());
        }
        Some("-h" | "--help") => {
            print!("{HELP}");
            return Ok(());
        }
        Some(other) => {
            eprintln!("ingest: unknown argument '{other}' (see ingest --help)");
            std::process::exit(2);
        }
    }
    platform::logging::init();
    let emf = platform::telemetry::emf::Emf::install("ingest");
    let clients = aws_adapters::Clients::from_env().await;
    let names = aws_adapters::Names::from_env();
    let ctx = worker::Ingest::new(&clients, &names);
    run(service_fn(|event: LambdaEvent<Value>| {
        let ctx = &ctx;
        async move {
            if let Some(e) = emf {
                e.invoked();
            }
            let answer = worker::ingest(ctx, event.payload).await;
            if let Some(e) = emf {
                e.flush();
            }
            Ok::<Value, Error>(answer)
        }
    }))
    .await
}

/// The function fed by the ingest queue in this process. Invocations take
/// turns (a lock), as the reserved concurrency of 1 makes them on AWS.
async fn poll() {
    let names = aws_adapters::Names::from_env();
    if names.ingest_queue_url.is_empty() {
        eprintln!(
            "ingest: MARKETLAB_INGEST_QUEUE_URL is not set: source the environment file localstack/start writes, or see ingest --help"
        );
        std::process::exit(2);
    }
    platform::logging::init();
    let clients = aws_adapters::Clients::from_env().await;
    let settings = worker::event_source::Settings {
        queue_url: names.ingest_queue_url.clone(),
        batch_size: 1,
        concurrency: 1,
        wait_seconds: 20,
    };
    let source = match worker::event_source::EventSource::new(clients.sqs.clone(), settings).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "ingest: cannot read the ingest queue: {e} (check AWS_ENDPOINT_URL, AWS_REGION and the credentials)"
            );
            std::process::exit(1);
        }
    };
    let ctx = Arc::new(worker::Ingest::new(&clients, &names));
    let turn = Arc::new(tokio::sync::Mutex::new(()));
    let lag = {
        let (ctx, turn) = (ctx.clone(), turn.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(LAG_EVERY);
            loop {
                every.tick().await;
                let _turn = turn.lock().await;
                worker::ingest(&ctx, serde_json::json!({"source": "ingest --poll"})).await;
            }
        })
    };
    tracing::info!(queue = %names.ingest_queue_url, "ingest polling");
    let handler = worker::event_source::InProcess(move |event| {
        let (ctx, turn) = (ctx.clone(), turn.clone());
        async move {
            let _turn = turn.lock().await;
            worker::ingest(&ctx, serde_json::to_value(event).unwrap_or_default()).await
        }
    });
    let ended = source
        .run(handler, platform::worker::shutdown_signal())
        .await;
    lag.abort();
    if let Err(e) = ended {
        tracing::error!(error = %e, "ingest stopped");
        std::process::exit(1);
    }
}
