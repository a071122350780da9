//! In-process queue feeding the embedded worker pool, with a lane per task
//! owner served in turn: one tenant's thousands of queued tasks delay
//! another's next task by at most one task per busy worker.
//! Durability comes from the task store, which re-queues unfinished tasks on start.

use super::{JobMessage, JobQueue};
use crate::PortError;
use async_trait::async_trait;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

#[derive(Default)]
struct Lanes {
    /// Waiting messages per owner (`""` for messages without one).
    lanes: HashMap<String, VecDeque<(Instant, JobMessage)>>,
    /// Owners with waiting messages, in serving order.
    turn: VecDeque<String>,
}

impl Lanes {
    fn push(&mut self, m: JobMessage) {
        let owner = m.owner.clone().unwrap_or_default();
        let lane = self.lanes.entry(owner.clone()).or_default();
        if lane.is_empty() {
            self.turn.push_back(owner);
        }
        lane.push_back((Instant::now(), m));
    }

    /// The next owner's oldest message; the owner goes to the back of the turn.
    fn pop(&mut self) -> Option<JobMessage> {
        let owner = self.turn.pop_front()?;
        let lane = self.lanes.get_mut(&owner)?;
        let m = lane.pop_front().map(|(_, m)| m);
        if lane.is_empty() {
            self.lanes.remove(&owner);
        } else {
            self.turn.push_back(owner);
        }
        m
    }

    /// Waiting messages and how long the oldest has waited.
    fn depth(&self) -> (u64, Option<Duration>) {
        let n = self.lanes.values().map(VecDeque::len).sum::<usize>();
        let oldest = self
            .lanes
            .values()
            .filter_map(|l| l.front().map(|(at, _)| at.elapsed()))
            .max();
        (n as u64, oldest)
    }
}

struct Shared {
    lanes: Mutex<Lanes>,
    ready: Notify,
    /// Live `LocalQueue` handles; none left and nothing waiting ends `recv`.
    senders: AtomicUsize,
    /// Live receivers; with none, nothing would ever run a message: refused.
    receivers: AtomicUsize,
}

pub struct LocalQueue {
    shared: Arc<Shared>,
}

/// The consuming end, shared by the pool's workers.
pub struct LocalReceiver {
    shared: Arc<Shared>,
}

impl Clone for LocalReceiver {
    fn clone(&self) -> Self {
        self.shared.receivers.fetch_add(1, Ordering::SeqCst);
        LocalReceiver {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for LocalReceiver {
    fn drop(&mut self) {
        self.shared.receivers.fetch_sub(1, Ordering::SeqCst);
    }
}

impl LocalQueue {
    pub fn new() -> (LocalQueue, LocalReceiver) {
        let shared = Arc::new(Shared {
            lanes: Mutex::new(Lanes::default()),
            ready: Notify::new(),
            senders: AtomicUsize::new(1),
            receivers: AtomicUsize::new(1),
        });
        (
            LocalQueue {
                shared: shared.clone(),
            },
            LocalReceiver { shared },
        )
    }

    /// Sets the queue's depth and oldest-age gauges (`jobs`), read when
    /// the metrics are: an idle queue reports zero, a stuck one its age.
    pub fn observe(&self) {
        let (depth, oldest) = self.shared.lanes.lock().depth();
        crate::telemetry::queue("jobs", depth, Some(oldest.unwrap_or_default()));
    }

    fn send(&self, message: JobMessage) -> Result<(), PortError> {
        if self.shared.receivers.load(Ordering::SeqCst) == 0 {
            return Err(PortError::unavailable("job queue"));
        }
        self.shared.lanes.lock().push(message);
        self.shared.ready.notify_one();
        Ok(())
    }
}

impl Clone for LocalQueue {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::SeqCst);
        LocalQueue {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for LocalQueue {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.shared.ready.notify_waiters();
        }
    }
}

impl LocalReceiver {
    /// The next message, owners in turn; `None` once every sender is gone
    /// and the queue is drained.
    pub async fn recv(&self) -> Option<JobMessage> {
        loop {
            let notified = self.shared.ready.notified();
            {
                let mut lanes = self.shared.lanes.lock();
                if let Some(m) = lanes.pop() {
                    if !lanes.turn.is_empty() {
                        // Pass the wake-up on: more is waiting.
                        self.shared.ready.notify_one();
                    }
                    return Some(m);
                }
            }
            if self.shared.senders.load(Ordering::SeqCst) == 0 {
                return None;
            }
            notified.await;
        }
    }
}

#[async_trait]
impl JobQueue for LocalQueue {
    async fn enqueue(&self, message: JobMessage) -> Result<(), PortError> {
        self.send(message)
    }

    async fn enqueue_after(&self, message: JobMessage, delay: Duration) -> Result<(), PortError> {
        let queue = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = queue.send(message);
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::TaskKind;

    fn message(owner: &str) -> JobMessage {
        JobMessage {
            task_id: uuid::Uuid::new_v4(),
            kind: TaskKind::StrategyBacktest,
            owner: Some(owner.into()),
            trace: None,
        }
    }

    #[tokio::test]
    async fn owners_are_served_in_turn_and_each_in_order() {
        let (q, rx) = LocalQueue::new();
        let a: Vec<_> = (0..5).map(|_| message("a")).collect();
        for m in &a {
            q.enqueue(m.clone()).await.unwrap();
        }
        let b = message("b");
        q.enqueue(b.clone()).await.unwrap();
        let got: Vec<JobMessage> = [(); 6]
            .iter()
            .map(|_| rx.shared.lanes.lock().pop().unwrap())
            .collect();
        assert_eq!(got[0], a[0]);
        assert_eq!(got[1], b, "b's one message comes second, not sixth");
        assert_eq!(&got[2..], &a[1..]);
        drop(q);
        assert_eq!(rx.recv().await, None, "no senders, nothing waiting");
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_for_a_later_message() {
        let (q, rx) = LocalQueue::new();
        let waiting = tokio::spawn(async move { rx.recv().await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let m = message("a");
        q.enqueue_after(m.clone(), Duration::from_millis(10))
            .await
            .unwrap();
        assert_eq!(waiting.await.unwrap(), Some(m));
    }
}
