//! The command line: the embedded server (every service on one port, a
//! SQLite file, an in-process queue and the sample data set) and the
//! operator's commands. It links no AWS SDK: the AWS tools are the
//! `aws-tools` package, and the HTTP Lambda functions do not link this one.

pub mod cli;
pub mod metrics;
pub mod operator;
pub mod server;

/// Threads for blocking work (file and database reads, the engine's
/// runs), at most: tokio's default of 512 let the start-up's reads of
/// every symbol make two hundred threads, each then holding memory of its
/// own for as long as it lived.
pub const BLOCKING_THREADS: usize = 32;

/// The runtime the `marketlab` binary runs on (and the benches that run
/// it as it runs).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
}
