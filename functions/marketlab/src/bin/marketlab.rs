//! `marketlab`: the embedded server and its tools.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run().await
}

async fn run() -> std::process::ExitCode {
    api::logging::init();
    match marketlab::cli::run(marketlab::cli::Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // A reader that stopped early (`marketlab usage --csv | head`) is
        // not a failure of the command.
        Err(e) if marketlab::cli::closed_pipe(&e) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:?}");
            std::process::ExitCode::FAILURE
        }
    }
}
