//! The runtime the `marketlab` binary runs on (and its benches, to measure
//! what it does).

/// Threads for blocking work (SQLite, file reads, decoding, the engine's
/// chunks): tokio's own bound is 512, and each thread that ever ran keeps
/// the allocator's memory of its own for a while.
pub const BLOCKING_THREADS: usize = 64;

/// A multi-threaded runtime, one worker per core, its blocking pool
/// bounded by [`BLOCKING_THREADS`].
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .thread_keep_alive(std::time::Duration::from_millis(500))
        .build()
}
