//! Submitting work: the one path for every HTTP submit, the batch-file inbox
//! (a directory or the bucket's drop) and a batch's chunks. Compute is
//! reserved first, so a tenant whose month is used up is refused before
//! anything is stored; a key makes the submit idempotent; a task whose
//! message the queue refuses is marked failed rather than left waiting.

use platform::PortError;
use platform::metering::{Metering, OverLimit};
use platform::queue::{JobMessage, JobQueue};
use platform::tasks::{Claim, Created, Finished, NewTask, Outcome, Task, TaskStatus, TaskStore};

/// What a submit needs.
#[derive(Clone, Copy)]
pub struct Submitter<'a> {
    pub tasks: &'a dyn TaskStore,
    pub queue: &'a dyn JobQueue,
    /// Admission against the month's compute; none where limits are off.
    pub metering: Option<&'a Metering>,
}

/// A stored and queued task; `replayed` when an earlier submit with the same
/// key created it.
#[derive(Debug)]
pub struct Submitted {
    pub task: Task,
    pub replayed: bool,
}

/// Why a task was not submitted.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The tenant's month of compute is used up; nothing was stored.
    #[error(transparent)]
    OverLimit(#[from] OverLimit),
    /// The key was first used for a request with other parameters.
    #[error(
        "Idempotency-Key '{key}' was used for a different request (task {task}); use a new key for a new request"
    )]
    KeyReused { key: String, task: uuid::Uuid },
    /// The task store could not take the task; nothing was queued.
    #[error("the task store is unavailable; the task was not queued")]
    StoreUnavailable(#[source] PortError),
    /// The task was stored but the queue refused its message; it is marked
    /// failed so nothing waits for it.
    #[error("the message broker did not accept the task; submit it again")]
    NotQueued(#[source] PortError),
    /// A fault in the task store.
    #[error(transparent)]
    Store(PortError),
}

impl From<PortError> for SubmitError {
    fn from(e: PortError) -> Self {
        match e {
            PortError::Unavailable { .. } | PortError::NotFound(_) | PortError::Invalid(_) => {
                SubmitError::StoreUnavailable(e)
            }
            internal => SubmitError::Store(internal),
        }
    }
}

impl Submitter<'_> {
    /// Reserves `new`'s estimated compute for its owner on `plan`, stores it
    /// (under `key` when given) and queues it. A reservation whose task is
    /// not created (a replay, a failure) is given back. A replayed key's
    /// task is queued again while still PENDING: its first message may have
    /// been lost with a crashed instance, and a second message is harmless
    /// (claims are conditional).
    pub async fn submit(
        &self,
        plan: &str,
        new: NewTask,
        key: Option<&str>,
    ) -> Result<Submitted, SubmitError> {
        let now = chrono::Utc::now();
        let owner = new.owner.clone();
        let reserved = match self.metering {
            Some(m) => {
                let ms = crate::compute::reserved(new.kind, &new.params, now.date_naive()).total();
                m.reserve_compute(&owner, plan, ms, now).await?;
                ms
            }
            None => 0,
        };
        let stored = self.store_and_queue(new, key).await;
        if let Some(m) = self.metering
            && reserved > 0
            && !matches!(
                stored,
                Ok(Submitted {
                    replayed: false,
                    ..
                })
            )
        {
            m.release_compute(&owner, reserved, now.date_naive()).await;
        }
        stored
    }

    /// A task a running job creates under `key` (a batch's chunk): no
    /// admission (its parent reserved for it), queued again while not
    /// finished, and an error is the parent's to retry.
    pub async fn submit_child(&self, new: NewTask, key: &str) -> Result<Task, PortError> {
        let task = self.tasks.create_idempotent(new, key).await?.task().clone();
        if !task.status.is_finished() {
            self.queue.enqueue(JobMessage::for_task(&task)).await?;
        }
        Ok(task)
    }

    async fn store_and_queue(
        &self,
        new: NewTask,
        key: Option<&str>,
    ) -> Result<Submitted, SubmitError> {
        let (task, replayed) = match key {
            None => (self.tasks.create(new).await?, false),
            Some(key) => {
                let params = new.params.clone();
                match self.tasks.create_idempotent(new, key).await? {
                    Created::New(t) => (t, false),
                    Created::Existing(t) if t.params != params => {
                        return Err(SubmitError::KeyReused {
                            key: key.to_string(),
                            task: t.id,
                        });
                    }
                    Created::Existing(t) if t.status != TaskStatus::Pending => {
                        return Ok(Submitted {
                            task: t,
                            replayed: true,
                        });
                    }
                    Created::Existing(t) => (t, true),
                }
            }
        };
        if let Err(e) = self.queue.enqueue(JobMessage::for_task(&task)).await {
            tracing::error!(task_id = %task.id, error = %platform::error::chain(&e), "enqueue failed");
            self.fail_unqueued(&task).await;
            return Err(SubmitError::NotQueued(e));
        }
        Ok(Submitted { task, replayed })
    }

    /// Leaves no orphan behind: a stored task that was never queued is failed.
    async fn fail_unqueued(&self, task: &Task) {
        let now = platform::tasks::now();
        if let Ok(Claim::Claimed(t)) = self
            .tasks
            .claim(task.id, now, chrono::TimeDelta::minutes(1))
            .await
        {
            let _ = self
                .tasks
                .finish(
                    t.id,
                    Finished {
                        attempt: t.attempts,
                        outcome: Outcome::Failed(
                            "the task could not be queued; submit it again".into(),
                        ),
                        at: now,
                    },
                )
                .await;
        }
    }
}
