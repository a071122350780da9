//! One bounded pool for the CPU work a request does while its client waits
//! (correlations, Monte Carlo, batch statistics): rayon's global pool, one
//! thread per core, beside the threads that answer requests, so a cheap
//! request is answered while the pool is busy. The engine's parallel parts
//! run on the same threads.
//!
//! Admission bounds what waits for it: each tenant may have
//! [`PoolLimits::per_tenant`] computations running or queued, and everyone
//! together [`PoolLimits::overall`]; past the first the request is refused
//! as the tenant's (429), past the second as the server's (503), both with
//! a `Retry-After`. A computation whose client has gone is dropped before it
//! starts, and one that runs is told to stop ([`Stop`]) at its next part.

pub use crate::shares::{Limits, Refused};
use crate::shares::{Share, Shares};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the pool admits: per tenant twice its threads (one running on each
/// core, one more waiting each), eight times for all (a queue of a few
/// seconds).
pub type PoolLimits = Limits;

impl Limits {
    pub fn for_threads(threads: usize) -> Limits {
        let threads = threads.max(1);
        Limits {
            per_tenant: 2 * threads,
            overall: 8 * threads,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::for_threads(rayon::current_num_threads())
    }
}

/// Why a computation gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ComputeError {
    #[error("{0}")]
    Refused(#[from] Refused),
    /// The computation panicked: a bug, answered as a server fault.
    #[error("the computation failed: {0}")]
    Panicked(String),
}

/// Set once the computation's client has gone: long work checks it
/// between parts and gives up.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    pub fn stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Sets the stop when the waiting request is dropped (client gone, timed
/// out) before the answer came.
struct StopOnDrop(Option<Stop>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(stop) = self.0.take() {
            stop.set();
        }
    }
}

/// A finished computation: its value and the time it ran (not waited).
#[derive(Debug)]
pub struct Done<R> {
    pub value: R,
    pub took: Duration,
}

/// The admission side of the pool; cheap to clone, one per server.
#[derive(Debug, Clone)]
pub struct ComputePool {
    shares: Shares,
}

impl Default for ComputePool {
    fn default() -> Self {
        ComputePool::new(PoolLimits::default())
    }
}

impl ComputePool {
    pub fn new(limits: PoolLimits) -> ComputePool {
        ComputePool {
            shares: Shares::new("computations", limits),
        }
    }

    pub fn limits(&self) -> PoolLimits {
        self.shares.limits()
    }

    /// Computations running or waiting: of `tenant`, and of everyone.
    pub fn in_use(&self, tenant: &str) -> (usize, usize) {
        self.shares.in_use(tenant)
    }

    /// A place on the pool for `tenant`, taken before the computation's
    /// inputs are read (so a refused flood reads nothing); held until the
    /// computation given it ends.
    pub fn admit(&self, tenant: &str) -> Result<Share, Refused> {
        self.shares.admit(tenant)
    }

    /// Runs `f` on the pool for `tenant`, once admitted. Dropping the
    /// returned future (the client left) stops it: before it starts it is
    /// skipped, while it runs `f`'s [`Stop`] is set.
    pub async fn run<R, F>(&self, tenant: &str, f: F) -> Result<Done<R>, ComputeError>
    where
        R: Send + 'static,
        F: FnOnce(&Stop) -> R + Send + 'static,
    {
        let ticket = self.shares.admit(tenant)?;
        Self::run_admitted(ticket, f).await
    }

    /// [`ComputePool::run`] on a place [`ComputePool::admit`] gave.
    pub async fn run_admitted<R, F>(ticket: Share, f: F) -> Result<Done<R>, ComputeError>
    where
        R: Send + 'static,
        F: FnOnce(&Stop) -> R + Send + 'static,
    {
        let stop = Stop::default();
        let mut on_drop = StopOnDrop(Some(stop.clone()));
        let (tx, rx) = tokio::sync::oneshot::channel();
        rayon::spawn(move || {
            if stop.stopped() || tx.is_closed() {
                return;
            }
            let started = Instant::now();
            let value = std::panic::catch_unwind(AssertUnwindSafe(|| f(&stop)));
            // The place is free before the answer is: whoever reads the
            // answer may start another.
            drop(ticket);
            let _ = tx.send((value, started.elapsed()));
        });
        let answer = rx.await;
        on_drop.0 = None;
        match answer {
            Ok((Ok(value), took)) => Ok(Done { value, took }),
            Ok((Err(panic), _)) => Err(ComputeError::Panicked(panic_text(&*panic))),
            // The job was dropped without an answer: only a stop does that,
            // and a stopped future is not polled again.
            Err(_) => Err(ComputeError::Panicked("the computation was dropped".into())),
        }
    }
}

/// What a caught panic says (its `&str` or `String` payload).
pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Sets up rayon's global pool as the compute pool: one thread per core
/// (or `threads`), named. Called once at a server's start; a pool already
/// set up (a second server in one process) is kept. Its threads keep the
/// normal priority: the threads that answer requests mostly sleep, and the
/// scheduler runs a thread that wakes ahead of one that has been busy, so
/// a cheap request is answered while the pool is full (measured in the
/// soak test) without slowing the pool's work under outside load.
pub fn init(threads: Option<usize>) {
    let mut builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("compute-{i}"));
    if let Some(n) = threads {
        builder = builder.num_threads(n.max(1));
    }
    if builder.build_global().is_err() {
        tracing::debug!("the compute pool was already set up");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    #[tokio::test]
    async fn a_tenant_past_its_share_is_refused_and_others_are_not() {
        let pool = ComputePool::new(PoolLimits {
            per_tenant: 2,
            overall: 3,
        });
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let hold = Arc::new(Mutex::new(hold));
        let blocked = |pool: &ComputePool, tenant: &str| {
            let (pool, tenant, hold) = (pool.clone(), tenant.to_string(), hold.clone());
            tokio::spawn(async move {
                pool.run(&tenant, move |_| {
                    let _ = hold.lock().recv();
                })
                .await
            })
        };
        let a1 = blocked(&pool, "a");
        let a2 = blocked(&pool, "a");
        while pool.in_use("a").0 < 2 {
            tokio::task::yield_now().await;
        }
        let refused = pool.run("a", |_| ()).await.unwrap_err();
        assert!(matches!(
            refused,
            ComputeError::Refused(Refused::Tenant { limit: 2, .. })
        ));
        let b = blocked(&pool, "b");
        while pool.in_use("b").0 < 1 {
            tokio::task::yield_now().await;
        }
        let full = pool.run("c", |_| ()).await.unwrap_err();
        assert!(matches!(
            full,
            ComputeError::Refused(Refused::Full { limit: 3, .. })
        ));
        for _ in 0..3 {
            release.send(()).unwrap();
        }
        for h in [a1, a2, b] {
            assert!(h.await.unwrap().is_ok());
        }
        assert_eq!(pool.in_use("a"), (0, 0), "every place given back");
        assert_eq!(pool.run("a", |_| 7).await.unwrap().value, 7);
    }

    #[tokio::test]
    async fn a_dropped_request_stops_its_computation_and_gives_its_place_back() {
        let pool = ComputePool::new(PoolLimits {
            per_tenant: 1,
            overall: 1,
        });
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (seen_tx, seen_rx) = tokio::sync::oneshot::channel();
        let running = {
            let pool = pool.clone();
            tokio::spawn(async move {
                pool.run("a", move |stop| {
                    let _ = started_tx.send(());
                    while !stop.stopped() {
                        std::thread::yield_now();
                    }
                    let _ = seen_tx.send(());
                })
                .await
            })
        };
        started_rx.await.unwrap();
        running.abort();
        seen_rx.await.expect("the computation saw its stop");
        // Its place is back once the job returns.
        while pool.in_use("a").1 > 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(pool.run("a", |_| 1).await.unwrap().value, 1);
    }

    #[tokio::test]
    async fn a_panic_is_an_error_and_the_pool_goes_on() {
        let pool = ComputePool::new(PoolLimits::for_threads(1));
        let e = pool
            .run("a", |_| -> u8 { panic!("a bug") })
            .await
            .unwrap_err();
        assert!(
            matches!(e, ComputeError::Panicked(ref m) if m == "a bug"),
            "{e}"
        );
        assert_eq!(pool.run("a", |_| 2).await.unwrap().value, 2);
        assert_eq!(pool.in_use("a"), (0, 0));
    }
}
