//! `marketlab`: the embedded server and its tools.

use clap::Parser;

/// Threads a blocking read (files, the database) may take at most: the CPU
/// work of requests runs on the compute pool (`platform::pool`), not here.
const BLOCKING_THREADS: usize = 64;

fn main() -> std::process::ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
        .expect("a tokio runtime");
    runtime.block_on(run())
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
