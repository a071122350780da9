//! What a running job tells its runtime: how far it has come and when it
//! last said anything, so a job that works is told from one that stopped.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// How far a running job has come, 0-100, and when it last reported: set
/// from any thread (the engine's blocking loops too) without waiting.
/// `run_job` copies the latest percent to the task store at most once per
/// [`super::PROGRESS_INTERVAL`]; a runtime reads [`Progress::silent_for`] to
/// keep a job's message and lease only while the job reports, and
/// [`Progress::ended`] to know that a job it gave up on has stopped.
#[derive(Debug, Clone)]
pub struct Progress(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    percent: AtomicU8,
    /// Milliseconds since [`START`] at the last report.
    beat: AtomicU64,
    started: AtomicBool,
    ended: AtomicBool,
    ending: tokio::sync::Notify,
}

/// The process's clock origin for reports: an atomic holds a number, not an `Instant`.
static START: LazyLock<Instant> = LazyLock::new(Instant::now);

fn now_ms() -> u64 {
    START.elapsed().as_millis() as u64
}

impl Default for Progress {
    /// A report made now: a job's silence counts from when its runtime got it.
    fn default() -> Self {
        Progress(Arc::new(Inner {
            percent: AtomicU8::new(0),
            beat: AtomicU64::new(now_ms()),
            started: AtomicBool::new(false),
            ended: AtomicBool::new(false),
            ending: tokio::sync::Notify::new(),
        }))
    }
}

impl Progress {
    pub fn set(&self, percent: u8) {
        self.0.percent.store(percent.min(100), Ordering::Relaxed);
        self.beat();
    }

    /// `done` of `total` steps, rounded down.
    pub fn steps(&self, done: usize, total: usize) {
        if let Some(percent) = (done.min(total) * 100).checked_div(total) {
            self.set(percent as u8);
        }
    }

    pub fn get(&self) -> u8 {
        self.0.percent.load(Ordering::Relaxed)
    }

    /// Says the job is working without a new percent.
    pub fn beat(&self) {
        self.0.beat.fetch_max(now_ms(), Ordering::Relaxed);
    }

    /// How long since the last report (or since this was made).
    pub fn silent_for(&self) -> Duration {
        self.silent_at(now_ms())
    }

    fn silent_at(&self, now_ms: u64) -> Duration {
        Duration::from_millis(now_ms.saturating_sub(self.0.beat.load(Ordering::Relaxed)))
    }

    /// Held by the job's future: its drop (the job returned, panicked or
    /// was aborted) marks the job ended. A job stuck on its thread never
    /// drops it.
    pub(crate) fn ending(&self) -> Ending {
        self.0.started.store(true, Ordering::SeqCst);
        Ending(self.clone())
    }

    /// Whether the job has started (its handler was called).
    pub fn has_started(&self) -> bool {
        self.0.started.load(Ordering::SeqCst)
    }

    /// Whether the job holding [`Progress::ending`] has ended.
    pub fn has_ended(&self) -> bool {
        self.0.ended.load(Ordering::SeqCst)
    }

    /// Resolves once the job holding [`Progress::ending`] has ended.
    pub async fn ended(&self) {
        loop {
            let woken = self.0.ending.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.has_ended() {
                return;
            }
            woken.await;
        }
    }
}

/// Marks its job ended when dropped.
pub(crate) struct Ending(Progress);

impl Drop for Ending {
    fn drop(&mut self) {
        self.0.0.ended.store(true, Ordering::SeqCst);
        self.0.0.ending.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_report_ends_the_silence_and_steps_round_down() {
        let p = Progress::default();
        p.0.beat.store(1_000, Ordering::Relaxed);
        assert_eq!(p.silent_at(3_500), Duration::from_millis(2_500));
        assert_eq!(p.silent_at(500), Duration::ZERO);
        let before = now_ms();
        p.0.beat.store(0, Ordering::Relaxed);
        p.steps(2, 3);
        assert_eq!(p.get(), 66);
        assert!(p.0.beat.load(Ordering::Relaxed) >= before);
        p.0.beat.store(0, Ordering::Relaxed);
        p.beat();
        assert!(p.0.beat.load(Ordering::Relaxed) >= before);
        assert_eq!(p.get(), 66);
    }

    #[tokio::test]
    async fn a_job_has_ended_once_its_future_is_dropped() {
        let p = Progress::default();
        assert!(!p.has_started());
        let ending = p.ending();
        let job = tokio::spawn(async move {
            let _ending = ending;
            std::future::pending::<()>().await
        });
        assert!(p.has_started() && !p.has_ended());
        job.abort();
        p.ended().await;
        assert!(p.has_ended());
    }
}
