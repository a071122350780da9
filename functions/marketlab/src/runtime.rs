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

/// `mi_option_purge_delay` in mimalloc.h's option list (the bindings name
/// the options around it, not it).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed memory goes back to the system after 250 ms, not mimalloc's 1 s:
/// a burst of uploads' memory is returned when the burst ends, within the
/// bounds the soak test holds the server to. mimalloc's own variable,
/// `MIMALLOC_PURGE_DELAY`, still decides when it is set. Call first in
/// `main`, in a binary whose allocator is mimalloc.
pub fn return_memory_soon() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets an option before any thread but this one
        // allocates; every value is valid.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 250) }
    }
}
