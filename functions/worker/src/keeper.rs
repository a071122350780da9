//! The message heartbeat: received job messages stay hidden only while their
//! job reports. The queue's visibility timeout is short (30 s deployed), so
//! a message whose receiver is gone (a receive answered to nobody, a killed
//! poller, a worker instance that died) is handed out again within it; a
//! live worker extends what it holds every third of it instead.

use aws_adapters::SqsQueue;
use parking_lot::Mutex;
use platform::worker::Progress;
use std::sync::Arc;
use std::time::Duration;

/// What a worker holds of the queue: the receipt handles of the messages it
/// has received and not yet finished, and the progress of the job it runs
/// now. Shared between the worker's loop and its [`keep_while_reporting`].
#[derive(Clone, Default)]
pub struct Held(Arc<Mutex<Inner>>);

#[derive(Default)]
struct Inner {
    handles: Vec<String>,
    running: Option<Progress>,
}

impl Held {
    pub fn new(handles: impl IntoIterator<Item = String>) -> Self {
        Held(Arc::new(Mutex::new(Inner {
            handles: handles.into_iter().collect(),
            running: None,
        })))
    }

    /// The job that runs now: its silence stops the heartbeat.
    pub fn running(&self, progress: Progress) {
        self.0.lock().running = Some(progress);
    }

    /// A message deleted or given back: no longer kept.
    pub fn done(&self, handle: &str) {
        self.0.lock().handles.retain(|h| h != handle);
    }

    fn snapshot(&self) -> (Vec<String>, Option<Progress>) {
        let inner = self.0.lock();
        (inner.handles.clone(), inner.running.clone())
    }
}

/// The visibility timeout a worker extends by: the queue's own.
#[derive(Clone)]
pub struct Heartbeat {
    pub queue: SqsQueue,
    pub visibility: Duration,
    /// Silence after which a job is taken to have stopped (the stall bound).
    pub stall: Duration,
}

impl Heartbeat {
    /// Keeps `held` hidden until dropped (the task it runs is aborted).
    pub fn keep(&self, held: Held) -> Keeping {
        Keeping(tokio::spawn(keep_while_reporting(self.clone(), held)))
    }
}

/// Aborts the heartbeat when dropped.
pub struct Keeping(tokio::task::JoinHandle<()>);

impl Drop for Keeping {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Every third of the visibility timeout, hides what is held for another
/// whole one, while the running job reports (or none runs yet). A job
/// silent for the stall bound is not extended: if it never started, what
/// is held is given back now (the worker is stuck before the job, e.g. on
/// a claim); if it started, `run_job` releases its task and its caller
/// gives the message back. Ends once nothing is held.
async fn keep_while_reporting(beat: Heartbeat, held: Held) {
    let extend_every = beat.visibility / 3;
    let tick = extend_every
        .min(beat.stall / 4)
        .max(Duration::from_millis(10));
    let mut extended = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(tick).await;
        let (handles, running) = held.snapshot();
        if handles.is_empty() {
            return;
        }
        if let Some(progress) = running
            && progress.silent_for() >= beat.stall
        {
            if progress.has_started() {
                continue;
            }
            for handle in &handles {
                match beat.queue.give_back(handle).await {
                    Ok(()) => {
                        tracing::warn!(
                            stall_s = beat.stall.as_secs_f64(),
                            "job not started within the stall bound; message given back"
                        )
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "message not given back; it comes back after the visibility timeout")
                    }
                }
                held.done(handle);
            }
            return;
        }
        // A tick that wakes a little early still extends: waiting for the
        // next would leave a third of the timeout less slack.
        if extended.elapsed() + tick / 2 < extend_every {
            continue;
        }
        match beat.queue.keep(&handles, beat.visibility).await {
            // A message finished meanwhile is not found: the others were kept.
            Ok(missed) => {
                extended = tokio::time::Instant::now();
                tracing::debug!(messages = handles.len(), missed, "visibility extended")
            }
            Err(e) => tracing::warn!(error = %e, "visibility not extended"),
        }
    }
}
