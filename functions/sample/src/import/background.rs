//! Import work (parsing a file, checking its rows, merging) on a thread of
//! its own at a lower scheduling priority: on a busy machine the server's
//! requests go first, and no async worker waits behind a large file.
//! Imports take turns (the import lock), so there is one such thread at a
//! time.

use platform::PortError;

/// The import thread's niceness: a tenth of a request thread's CPU share
/// when both want a core.
const NICE: libc::c_int = 10;

/// Runs `f` on the import thread; a panic in it is an internal error.
pub async fn run<R: Send + 'static>(
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<R, PortError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("import".into())
        .spawn(move || {
            lower_priority();
            let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
        })
        .map_err(|e| PortError::internal(format!("the import thread did not start: {e}")))?;
    match rx.await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(_)) => Err(PortError::internal("an import panicked")),
        Err(_) => Err(PortError::internal("the import thread stopped")),
    }
}

#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY: setpriority(2) on this thread's own id changes only its
    // niceness; a failure leaves it as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, NICE);
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn work_runs_at_a_lower_priority_and_a_panic_is_an_error() {
        let nice = super::run(|| {
            // SAFETY: getpriority(2) of this thread.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
        })
        .await
        .unwrap();
        assert!(nice >= super::NICE, "{nice}");
        let e = super::run(|| panic!("a bad file")).await.unwrap_err();
        assert!(e.to_string().contains("panicked"), "{e}");
    }
}
