//! Sends webhook deliveries: each message of the webhook queue is one
//! scheduled attempt (`worker::deliver_batch`), reporting partial batch
//! failures.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    platform::logging::init();
    let clients = aws_adapters::Clients::from_env().await;
    let names = aws_adapters::Names::from_env();
    let deliverer = worker::deliverer(&clients, &names)
        .ok_or("MARKETLAB_WEBHOOK_KEY is not set (or unusable): nothing can be signed")?;
    run(service_fn(|event: LambdaEvent<SqsEvent>| {
        let deliverer = &deliverer;
        async move {
            Ok::<SqsBatchResponse, Error>(worker::deliver_batch(deliverer, event.payload).await)
        }
    }))
    .await
}
