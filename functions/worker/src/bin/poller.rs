//! Long-running worker for jobs longer than a Lambda may run (ECS, Fargate, a
//! plain host): long-polls SQS, runs each job, deletes what is done and leaves
//! the rest to reappear after the visibility timeout. While a batch runs its
//! messages are kept hidden (a heartbeat every third of the visibility
//! timeout) and each job renews its task's lease, so a job may run for hours
//! while a crashed poller's work comes back within one visibility timeout.

use platform::worker::{Disposition, run_job};

#[tokio::main]
async fn main() {
    platform::logging::init();
    platform::memory::return_large_blocks();
    let (clients, names) = (
        aws_adapters::Clients::from_env().await,
        aws_adapters::Names::from_env(),
    );
    let deps = worker::deps(&clients, &names);
    let _spans = platform::telemetry::otlp::install("poller")
        .then(|| AbortOnDrop(tokio::spawn(platform::telemetry::otlp::export_forever())));
    let queue = aws_adapters::SqsQueue::new(clients.sqs.clone(), &names.queue_url);
    let visibility = match queue.visibility().await {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "visibility timeout unknown; assuming 12 minutes");
            std::time::Duration::from_secs(720)
        }
    };
    let stop = platform::worker::shutdown_signal();
    tokio::pin!(stop);
    loop {
        let batch = tokio::select! {
            _ = &mut stop => break,
            b = queue.receive(10, 20) => b,
        };
        let received = match batch {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "receive failed; retrying shortly");
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                continue;
            }
        };
        let ran = !received.is_empty();
        let _keeper = AbortOnDrop(tokio::spawn(keep_hidden(
            queue.clone(),
            received.iter().map(|r| r.receipt_handle.clone()).collect(),
            visibility,
        )));
        for r in received {
            let task_id = r.message.task_id;
            match run_job(&deps, &r.message).await {
                Ok(Disposition::Done | Disposition::Waiting) => {
                    if let Err(e) = queue.delete(&r.receipt_handle).await {
                        tracing::warn!(error = %e, "could not delete a finished message; its redelivery is a no-op");
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
        // The batch's compute is written before the next (long) receive.
        if ran
            && let Some(m) = &deps.metering
            && let Err(e) = m.flush().await
        {
            tracing::warn!(error = %e, "task compute not written; kept for the next batch");
        }
    }
    if let Some(m) = &deps.metering
        && let Err(e) = m.flush().await
    {
        tracing::warn!(error = %e, "task compute not written at shutdown");
    }
}

/// Aborts the task it holds when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Keeps a batch's messages hidden while it runs: every third of the
/// visibility timeout, all are hidden for another whole one. A message
/// already deleted is not found; that is expected and ignored.
async fn keep_hidden(
    queue: aws_adapters::SqsQueue,
    handles: Vec<String>,
    visibility: std::time::Duration,
) {
    loop {
        tokio::time::sleep(visibility / 3).await;
        match queue.keep(&handles, visibility).await {
            Ok(0) => {}
            Ok(missed) => {
                tracing::debug!(missed, "visibility not extended (the messages may be done)")
            }
            Err(e) => tracing::warn!(error = %e, "visibility not extended"),
        }
    }
}
