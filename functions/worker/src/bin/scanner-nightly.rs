//! The smart stock scanner's nightly job, invoked by its EventBridge
//! schedule after the close: every stock's signals on the latest session
//! (or on `{"date": "YYYY-MM-DD"}` when the event names one), written as
//! that date's scanner file in the market data bucket; then its webhook
//! events (`scan.completed`, scanner alerts).

use lambda_runtime::{Error, LambdaEvent, run, service_fn};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    platform::logging::init();
    let emf = platform::telemetry::emf::Emf::install("scanner");
    let clients = aws_adapters::Clients::from_env().await;
    let names = aws_adapters::Names::from_env();
    let market = aws_adapters::wiring::market_data(&clients, &names);
    let store = aws_adapters::wiring::scanner_store(&clients, &names);
    let events = aws_adapters::wiring::webhooks(&clients, &names).map(|h| h.events());
    run(service_fn(|event: LambdaEvent<Value>| {
        let (market, store, events) = (&market, &store, events.as_ref());
        async move {
            if let Some(e) = emf {
                e.invoked();
            }
            let done = worker::scan(market, store, events, &event.payload).await;
            if let Some(e) = emf {
                e.flush();
            }
            done
        }
    }))
    .await
}
