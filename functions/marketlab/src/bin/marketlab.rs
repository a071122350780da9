//! `marketlab`: the embedded server and its tools.

use clap::Parser;

/// mimalloc rather than the C library's: a batch allocates and frees
/// millions of small series, strings and maps across its workers' threads,
/// where glibc's arenas cost a fifth of the CPU and leave memory behind
/// (docs/batches.md#speed).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Threads for blocking work (file and database reads, the engine's
/// runs), at most: tokio's default of 512 let the start-up's reads of
/// every symbol make two hundred threads, each then holding memory of its
/// own for as long as it lived.
const BLOCKING_THREADS: usize = 32;

fn main() -> std::process::ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
    {
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
