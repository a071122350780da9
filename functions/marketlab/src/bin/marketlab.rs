//! `marketlab`: the embedded server and its tools.

use clap::Parser;

/// mimalloc: a batch allocates and frees small blocks from many threads at
/// once (a strategy's parse, its rows, its returns): with glibc's allocator a
/// million-strategy batch took a third more CPU.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    marketlab::runtime::return_memory_soon();
    match marketlab::runtime::build() {
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
