//! `marketlab`: the embedded server and its tools.

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    api::logging::init();
    api::cli::run(api::cli::Cli::parse()).await
}
