//! Runs queued tasks from SQS batches, reporting partial batch failures.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    platform::logging::init();
    platform::memory::return_large_blocks();
    let clients = aws_adapters::Clients::from_env().await;
    let names = aws_adapters::Names::from_env();
    let deps = worker::deps(&clients, &names);
    let inbox = worker::BucketInbox::new(&clients, &names, deps.metering.clone());
    run(service_fn(|event: LambdaEvent<SqsEvent>| {
        let (deps, inbox) = (deps.clone(), &inbox);
        async move {
            Ok::<SqsBatchResponse, Error>(
                worker::handle_batch(&deps, Some(inbox), event.payload).await,
            )
        }
    }))
    .await
}
