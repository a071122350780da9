//! In-process queue: an unbounded channel feeding the embedded worker pool.
//! Durability comes from the task store, which re-queues unfinished tasks on start.

use super::{JobMessage, JobQueue};
use crate::PortError;
use async_trait::async_trait;
use std::sync::Arc;
use tokio::sync::{Mutex, mpsc};

#[derive(Clone)]
pub struct LocalQueue {
    tx: mpsc::UnboundedSender<JobMessage>,
}

/// The consuming end, shared by the pool's workers.
#[derive(Clone)]
pub struct LocalReceiver {
    rx: Arc<Mutex<mpsc::UnboundedReceiver<JobMessage>>>,
}

impl LocalQueue {
    pub fn new() -> (LocalQueue, LocalReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            LocalQueue { tx },
            LocalReceiver {
                rx: Arc::new(Mutex::new(rx)),
            },
        )
    }
}

impl LocalReceiver {
    /// The next message; `None` once every sender is gone and the queue is drained.
    pub async fn recv(&self) -> Option<JobMessage> {
        self.rx.lock().await.recv().await
    }
}

#[async_trait]
impl JobQueue for LocalQueue {
    async fn enqueue(&self, message: JobMessage) -> Result<(), PortError> {
        self.tx
            .send(message)
            .map_err(|_| PortError::Unavailable("job queue".into()))
    }
}
