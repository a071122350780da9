//! Long-running worker for jobs longer than a Lambda may run (ECS, Fargate, a
//! plain host): long-polls SQS for one message at a time, runs its job,
//! deletes it when done and leaves it to reappear otherwise. A message is
//! kept hidden only while its job reports (a heartbeat from the job, every
//! third of the visibility timeout), so a job may run for hours while a
//! crashed poller's work comes back within one visibility timeout, and a
//! job that stops reporting, or never starts, is given back at once.

use platform::worker::{Disposition, Progress, run_job_watched};
use std::time::Duration;

const HELP: &str = "\
poller: runs queued tasks from the SQS job queue until SIGTERM or Ctrl-C.

Usage: poller [--help]

Settings (environment; localstack/start writes them for the emulator):
  MARKETLAB_QUEUE_URL                 the job queue (required)
  MARKETLAB_TASKS_TABLE, MARKETLAB_ACCOUNTS_TABLE, MARKETLAB_LIMITS_TABLE,
  MARKETLAB_USAGE_TABLE, MARKETLAB_BUCKET, MARKETLAB_WEBHOOKS_TABLE,
  MARKETLAB_WEBHOOK_QUEUE_URL         the other resources (infra/names.env)
  AWS_REGION, AWS_ENDPOINT_URL, credentials   the standard AWS environment
  MARKETLAB_JOB_TIMEOUT_SECONDS       the longest a claim's lease may be (120; the
                                      lease is a third of the queue's visibility
                                      timeout, renewed while the job runs)
  MARKETLAB_POLL_WAIT_SECONDS         a receive's long-poll wait (20, at most 20)
  MARKETLAB_JOB_STALL_SECONDS         silence after which a job is given back
                                      (the job timeout)
  MARKETLAB_AWS_OPERATION_TIMEOUT_MS  one AWS call's bound (6000; see docs/deploy.md)
  MARKETLAB_FAULT_STALL_JOBS          the first n jobs stall for good (recovery drills)
  RUST_LOG                            log level (info)

A job that stops reporting is given back; if it cannot be stopped (stuck on
its thread) the poller exits with status 1 for its supervisor to start a
clean one.
";

/// How long a stalled job, aborted, may take to end before the process
/// exits instead: an aborted job ends at its next await at once.
const ABORT_GRACE: Duration = Duration::from_secs(5);

#[tokio::main]
async fn main() {
    match std::env::args().nth(1).as_deref() {
        None => {}
        Some("-h" | "--help") => {
            print!("{HELP}");
            return;
        }
        Some(other) => {
            eprintln!("poller: unknown argument '{other}' (see poller --help)");
            std::process::exit(2);
        }
    }
    if std::env::var("MARKETLAB_QUEUE_URL")
        .unwrap_or_default()
        .is_empty()
    {
        eprintln!(
            "poller: MARKETLAB_QUEUE_URL is not set: source the environment file localstack/start writes, or see poller --help"
        );
        std::process::exit(2);
    }
    platform::logging::init();
    platform::memory::return_large_blocks();
    let (clients, names) = (
        aws_adapters::Clients::from_env().await,
        aws_adapters::Names::from_env(),
    );
    let queue = aws_adapters::SqsQueue::new(clients.sqs.clone(), &names.queue_url);
    let visibility = match queue.visibility().await {
        Ok(v) => v,
        Err(e) => {
            eprintln!(
                "poller: cannot read the job queue {}: {e} (check AWS_ENDPOINT_URL, AWS_REGION and the credentials)",
                names.queue_url
            );
            std::process::exit(1);
        }
    };
    let deps = worker::deps(&clients, &names, visibility);
    let heartbeat = worker::keeper::Heartbeat {
        queue: queue.clone(),
        visibility,
        stall: deps.stall,
    };
    let wait = worker::poll_wait();
    let inbox = worker::BucketInbox::new(&clients, &names, deps.metering.clone());
    let _spans = platform::telemetry::otlp::install("poller")
        .then(|| AbortOnDrop(tokio::spawn(platform::telemetry::otlp::export_forever())));
    tracing::info!(queue = %names.queue_url, visibility_s = visibility.as_secs_f64(), lease_s = deps.lease.as_seconds_f64(), wait_s = wait, stall_s = deps.stall.as_secs_f64(), "poller started");
    let stop = platform::worker::shutdown_signal();
    tokio::pin!(stop);
    loop {
        let batch = tokio::select! {
            _ = &mut stop => break,
            b = queue.receive_any(1, wait) => b,
        };
        let received = match batch {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "receive failed; retrying shortly");
                tokio::time::sleep(Duration::from_secs(5)).await;
                continue;
            }
        };
        let ran = !received.is_empty();
        for delivery in received {
            let r = match delivery.job() {
                Ok(r) => r,
                // The bucket's event about a batch file: the inbox is swept
                // as the worker function sweeps it.
                Err(_) if worker::inbox_event(&delivery.body) => {
                    sweep(&inbox, &queue, &delivery.receipt_handle).await;
                    continue;
                }
                Err(e) => {
                    tracing::error!(error = %e, receives = delivery.receives, "a message that is not a job message; left for the dead-letter queue");
                    continue;
                }
            };
            let task_id = r.message.task_id;
            tracing::info!(%task_id, kind = %r.message.kind, receives = r.receives, "message received");
            let progress = Progress::default();
            let held = worker::keeper::Held::new([r.receipt_handle.clone()]);
            held.running(progress.clone());
            let keeper = heartbeat.keep(held);
            let done = run_job_watched(&deps, &r.message, progress.clone()).await;
            drop(keeper);
            match done {
                Ok(Disposition::Done | Disposition::Waiting) => {
                    if let Err(e) = queue.delete(&r.receipt_handle).await {
                        tracing::warn!(%task_id, error = %e, "could not delete a finished message; its redelivery is a no-op");
                    }
                }
                Ok(Disposition::Stalled(reason)) => {
                    match queue.give_back(&r.receipt_handle).await {
                        Ok(()) => tracing::warn!(%task_id, %reason, "message given back"),
                        Err(e) => {
                            tracing::warn!(%task_id, %reason, error = %e, "message not given back; it comes back after the visibility timeout")
                        }
                    }
                    if tokio::time::timeout(ABORT_GRACE, progress.ended())
                        .await
                        .is_err()
                    {
                        tracing::error!(%task_id, "a stalled job could not be stopped; exiting so that a clean poller takes over");
                        flush(&deps).await;
                        std::process::exit(1);
                    }
                }
                Ok(Disposition::Retry(reason)) => {
                    tracing::warn!(%task_id, %reason, "message left to come back");
                }
                Err(e) => {
                    tracing::warn!(%task_id, error = %e, "message left to come back");
                }
            }
        }
        // The task's compute is written before the next (long) receive.
        if ran {
            flush(&deps).await;
        }
    }
    flush(&deps).await;
}

/// Sweeps the batch inbox for a bucket event and acknowledges it; a sweep
/// that failed leaves the event to come back.
async fn sweep(inbox: &worker::BucketInbox, queue: &aws_adapters::SqsQueue, handle: &str) {
    match inbox.sweep().await {
        Ok(s) => {
            tracing::info!(
                submitted = s.submitted,
                refused = s.refused,
                written = s.written,
                "batch inbox swept"
            );
            if let Err(e) = queue.delete(handle).await {
                tracing::warn!(error = %e, "could not delete a swept event; its redelivery sweeps again");
            }
        }
        Err(e) => tracing::warn!(error = %e, "batch inbox sweep failed; the event comes again"),
    }
}

/// Writes the compute counted so far; what fails is kept for the next try.
async fn flush(deps: &platform::worker::WorkerDeps) {
    if let Some(m) = &deps.metering
        && let Err(e) = m.flush().await
    {
        tracing::warn!(error = %e, "task compute not written; kept for the next flush");
    }
}

/// Aborts the task it holds when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
