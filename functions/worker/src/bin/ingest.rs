//! Imports the files put under `incoming/` in the market data bucket: the
//! bucket's events reach it through the ingest queue (one import at a
//! time: the function's reserved concurrency is 1). Each file is merged or
//! refused, then moved with its report to `ingested/` or `rejected/`; a
//! session whose data are complete is scanned once. The hourly schedule
//! measures the data's lag behind the calendar.

use lambda_runtime::{Error, LambdaEvent, run, service_fn};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
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
