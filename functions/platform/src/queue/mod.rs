//! Job queue port. A message names a task and its kind only: the task record
//! holds the parameters, so messages stay far below any queue's size limit.

mod local;

pub use local::{LocalQueue, LocalReceiver};

use crate::PortError;
use crate::tasks::TaskKind;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobMessage {
    pub task_id: Uuid,
    pub kind: TaskKind,
}

#[async_trait]
pub trait JobQueue: Send + Sync {
    async fn enqueue(&self, message: JobMessage) -> Result<(), PortError>;
}
