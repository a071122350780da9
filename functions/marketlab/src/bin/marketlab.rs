//! `marketlab`: the embedded server and its tools.

use clap::Parser;

/// mimalloc rather than the C library's: a batch allocates and frees
/// millions of small series, strings and maps across its workers' threads,
/// where glibc's arenas cost a fifth of the CPU and leave memory behind
/// (docs/batches.md#speed).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    match marketlab::runtime() {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("Error: the runtime did not start: {e}");
            std::process::ExitCode::FAILURE
        }
    }
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
