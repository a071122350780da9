//! `marketlab`: the embedded server and its tools.

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    api::logging::init();
    marketlab::cli::run(marketlab::cli::Cli::parse()).await
}
