//! Long-running worker for jobs longer than a Lambda may run (ECS, Fargate, a
//! plain host): long-polls SQS, runs each job, deletes what is done and leaves
//! the rest to reappear after the visibility timeout.

use platform::worker::{Disposition, run_job};

#[tokio::main]
async fn main() {
    platform::logging::init();
    let (clients, names) = (
        aws_adapters::Clients::from_env().await,
        aws_adapters::Names::from_env(),
    );
    let deps = worker::deps(&clients, &names);
    let queue = aws_adapters::SqsQueue::new(clients.sqs.clone(), &names.queue_url);
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
        for r in received {
            if let Ok(Disposition::Done | Disposition::Waiting) = run_job(&deps, &r.message).await
                && let Err(e) = queue.delete(&r.receipt_handle).await
            {
                tracing::warn!(error = %e, "could not delete a finished message; its redelivery is a no-op");
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
