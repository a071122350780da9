//! A fault to try recovery with: jobs that stall for good, as a computation
//! that never returns does, so an operator (and the tests) can see a stuck
//! worker give its message back and another run the task.

use async_trait::async_trait;
use platform::tasks::Task;
use platform::worker::{JobError, JobHandler, JobRegistry, Progress};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The first `n` jobs of this process stall for good
/// (`MARKETLAB_FAULT_STALL_JOBS`, none by default).
#[derive(Debug, Clone, Default)]
pub struct StallFirst(Arc<AtomicUsize>);

impl StallFirst {
    pub fn new(n: usize) -> Self {
        StallFirst(Arc::new(AtomicUsize::new(n)))
    }

    pub fn from_env() -> Self {
        Self::new(
            std::env::var("MARKETLAB_FAULT_STALL_JOBS")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
        )
    }

    /// Each of `registry`'s handlers, the first jobs stalling.
    pub fn wrap(&self, registry: JobRegistry) -> JobRegistry {
        if self.0.load(Ordering::SeqCst) == 0 {
            return registry;
        }
        registry.wrapped(|inner| {
            Arc::new(Stalling {
                left: self.clone(),
                inner,
            }) as Arc<dyn JobHandler>
        })
    }

    /// Whether the next job is one to stall (counting it).
    fn take(&self) -> bool {
        self.0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }
}

struct Stalling {
    left: StallFirst,
    inner: Arc<dyn JobHandler>,
}

#[async_trait]
impl JobHandler for Stalling {
    async fn run(&self, task: Task, progress: Progress) -> Result<Value, JobError> {
        if self.left.take() {
            tracing::warn!(task_id = %task.id, "fault drill: this job stalls for good (MARKETLAB_FAULT_STALL_JOBS)");
            // Holds its thread without yielding, as a stuck computation
            // does: aborting the job cannot end it. block_in_place hands
            // the runtime's other work on this thread to another.
            tokio::task::block_in_place(|| {
                loop {
                    std::thread::park();
                }
            })
        }
        self.inner.run(task, progress).await
    }

    fn reserved(&self, task: &Task) -> platform::metering::Reserved {
        self.inner.reserved(task)
    }
}
