//! Sends webhook deliveries: each message of the webhook queue is one
//! scheduled attempt (`worker::deliver_batch`), reporting partial batch
//! failures; each invocation's metrics go out as EMF lines.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::{Error, LambdaEvent, run, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    platform::logging::init();
    let emf = platform::telemetry::emf::Emf::install("webhooks");
    let clients = aws_adapters::Clients::from_env().await;
    let names = aws_adapters::Names::from_env();
    let deliverer = worker::deliverer(&clients, &names)
        .ok_or("MARKETLAB_WEBHOOK_KEY is not set (or unusable): nothing can be signed")?;
    let gauges = worker::QueueGauges::new(&clients, &names.webhook_queue_url, "webhooks");
    run(service_fn(|event: LambdaEvent<SqsEvent>| {
        let (deliverer, gauges) = (&deliverer, &gauges);
        async move {
            if let Some(e) = emf {
                e.invoked();
            }
            let answer = worker::deliver_batch(deliverer, event.payload).await;
            gauges.sample_if_due().await;
            if let Some(e) = emf {
                e.flush();
            }
            Ok::<SqsBatchResponse, Error>(answer)
        }
    }))
    .await
}
