//! Runs queued tasks from SQS batches, reporting partial batch failures and
//! keeping the batch's messages hidden while its jobs report;
//! each invocation's metrics go out as EMF lines once it is answered.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    platform::logging::init();
    platform::memory::return_large_blocks();
    let emf = platform::telemetry::emf::Emf::install("worker");
    platform::telemetry::otlp::install("worker");
    let clients = aws_adapters::Clients::from_env().await;
    let names = aws_adapters::Names::from_env();
    let queue = aws_adapters::SqsQueue::new(clients.sqs.clone(), &names.queue_url);
    let visibility = worker::visibility(&queue).await;
    let deps = worker::deps(&clients, &names, visibility);
    // The batch's messages stay hidden while its jobs report: a batch
    // whose instance died comes back within the short visibility timeout.
    let heartbeat = worker::keeper::Heartbeat {
        queue,
        visibility,
        stall: deps.stall,
    };
    let inbox = worker::BucketInbox::new(&clients, &names, deps.metering.clone());
    let gauges = worker::QueueGauges::new(&clients, &names.queue_url, "jobs");
    run(service_fn(|event: LambdaEvent<SqsEvent>| {
        let (deps, inbox, gauges, heartbeat) = (deps.clone(), &inbox, &gauges, &heartbeat);
        async move {
            if let Some(e) = emf {
                e.invoked();
            }
            if let Some(age) = worker::oldest_in(&event.payload) {
                platform::telemetry::queue_oldest("jobs", age);
            }
            let answer =
                worker::handle_batch(&deps, Some(inbox), Some(heartbeat), event.payload).await;
            gauges.sample_if_due().await;
            if let Some(e) = emf {
                e.flush();
            }
            platform::telemetry::otlp::flush().await;
            Ok::<SqsBatchResponse, Error>(answer)
        }
    }))
    .await
}
