//! `marketlab`: the embedded server and its tools.

use clap::Parser;

/// mimalloc: a batch allocates and frees small blocks from many threads at
/// once (a strategy's parse, its rows, its returns), and glibc's arenas
/// spent a fifth of a million-strategy batch's CPU on it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h's option list (the bindings name
/// the options around it, not it).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed memory goes back to the system after 250 ms, not mimalloc's 1 s:
/// a burst of uploads' memory is returned when the burst ends, within the
/// bounds the soak test holds the server to. mimalloc's own variable,
/// `MIMALLOC_PURGE_DELAY`, still decides when it is set.
fn purge_soon() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets an option before any thread but this one
        // allocates; every value is valid.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 250) }
    }
}

fn main() -> std::process::ExitCode {
    purge_soon();
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
