//! Ports (small async traits) and their embedded adapters; the sample data
//! generator and importers that fill the market data store are in `sample`.
//!
//! Everything that serves goes through these traits, so the embedded default and
//! the AWS deployment differ only in which adapters are wired in at start-up.

pub mod accounts;
pub mod clock;
pub mod error;
pub mod keys;
pub mod logging;
pub mod marketdata;
pub mod memo;
pub mod memory;
pub mod metering;
pub mod pool;
pub mod queue;
pub mod quota;
pub mod returns;
pub mod scanner;
pub mod shares;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod tasks;
pub mod telemetry;
pub mod uploads;
pub mod usage;
pub mod webhooks;
pub mod worker;

pub use error::{PortError, PortResult};

/// Two workers and two blocking threads: for tests of reads that must not
/// wait on a blocking thread for another (eight at once would hang).
#[cfg(test)]
pub(crate) fn two_blocking_threads() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}
