//! Runs queued tasks from SQS batches, reporting partial batch failures.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    api::logging::init();
    let state = lambda_functions::aws_state().await;
    let deps = lambda_functions::worker_deps(&state);
    run(service_fn(|event: LambdaEvent<SqsEvent>| {
        let deps = deps.clone();
        async move {
            Ok::<SqsBatchResponse, Error>(
                lambda_functions::handle_batch(&deps, event.payload).await,
            )
        }
    }))
    .await
}
