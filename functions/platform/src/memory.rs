//! How the process hands freed memory back to the system.

/// Large blocks (request bodies, uploaded bars, answers) are mapped and
/// unmapped on their own, so memory returns to the system when a burst of
/// them is over. glibc otherwise raises its mapping threshold to the largest
/// block freed so far (up to 32 MiB) and keeps later such blocks in its
/// heaps, which it rarely shrinks: a few large uploads would leave the
/// process hundreds of MiB larger for good. Call once, at start-up.
pub fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called before
    // the process allocates large blocks, and any value is valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 4 * 1024 * 1024);
    }
}

/// Hands the free pages inside glibc's heaps back to the system (blocks
/// under the mapping threshold, freed in a burst of work, stay there
/// otherwise). Takes about a millisecond per hundred MB of heap: call it off
/// the request path, when work has stopped.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory the allocator holds free.
    unsafe {
        libc::malloc_trim(0);
    }
}
