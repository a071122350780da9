//! Job queue port. A message names a task, its kind and its owner only: the
//! task record holds the parameters, so messages stay far below any queue's
//! size limit. The owner lets a queue keep tenants apart (fair queueing).

mod local;

pub use local::{LocalQueue, LocalReceiver};

use crate::PortError;
use crate::tasks::{Task, TaskKind};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobMessage {
    pub task_id: Uuid,
    pub kind: TaskKind,
    /// The task's owner; messages sent before owners were carried have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The trace of the request that queued it. Not in the body: SQS
    /// carries it as the `traceparent` message attribute.
    #[serde(skip)]
    pub trace: Option<crate::telemetry::trace::Trace>,
}

impl JobMessage {
    /// The message that runs `task`, carrying on the current trace: the
    /// span that queues it is the parent of the span that runs it.
    pub fn for_task(task: &Task) -> Self {
        JobMessage {
            task_id: task.id,
            kind: task.kind,
            owner: Some(task.owner.clone()),
            trace: crate::telemetry::trace::current(),
        }
    }
}

#[async_trait]
pub trait JobQueue: Send + Sync {
    async fn enqueue(&self, message: JobMessage) -> Result<(), PortError>;

    /// Delivers `message` once `delay` has passed (a task waiting for a slot).
    async fn enqueue_after(&self, message: JobMessage, delay: Duration) -> Result<(), PortError>;
}
