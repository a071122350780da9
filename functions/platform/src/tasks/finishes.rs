//! Tasks that ended in this process, told to whoever waits on them: a
//! long-polled status answers the moment its task's outcome is stored by an
//! embedded worker. Waiters elsewhere (another process, a Lambda) re-read
//! the store on a tick instead; a notice with no waiter costs nothing.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Weak};
use tokio::sync::Notify;
use uuid::Uuid;

/// Waiters' wake-ups by task id; entries die with their last waiter.
#[derive(Default)]
pub struct Finishes {
    waiting: Mutex<HashMap<Uuid, Weak<Notify>>>,
}

/// Entries kept before dead ones are swept out.
const SWEEP_AT: usize = 4096;

impl Finishes {
    /// The wake-up of `id`'s end, shared by everyone waiting on it. Create
    /// its `notified()` future (and `enable` it) before reading the task, so
    /// an end between the read and the wait is not missed.
    pub fn subscribe(&self, id: Uuid) -> Arc<Notify> {
        let mut waiting = self.waiting.lock();
        if let Some(n) = waiting.get(&id).and_then(Weak::upgrade) {
            return n;
        }
        if waiting.len() >= SWEEP_AT {
            waiting.retain(|_, w| w.strong_count() > 0);
        }
        let n = Arc::new(Notify::new());
        waiting.insert(id, Arc::downgrade(&n));
        n
    }

    /// `id` has ended (its outcome is stored): wake its waiters.
    pub fn announce(&self, id: Uuid) {
        let waiter = self.waiting.lock().remove(&id);
        if let Some(n) = waiter.and_then(|w| w.upgrade()) {
            n.notify_waiters();
        }
    }

    /// Entries held, live or not yet swept (for tests).
    pub fn len(&self) -> usize {
        self.waiting.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// This process's hub: the embedded worker pool announces, status reads wait.
pub fn finishes() -> &'static Finishes {
    static HUB: LazyLock<Finishes> = LazyLock::new(Finishes::default);
    &HUB
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_waiter_wakes_on_its_task_only_and_its_entry_goes() {
        let hub = Finishes::default();
        let (mine, other) = (Uuid::new_v4(), Uuid::new_v4());
        let n = hub.subscribe(mine);
        let woken = n.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        hub.announce(other);
        assert!(
            tokio::time::timeout(Duration::from_millis(20), woken.as_mut())
                .await
                .is_err()
        );
        hub.announce(mine);
        tokio::time::timeout(Duration::from_millis(200), woken)
            .await
            .expect("woken by its own task's end");
        assert!(hub.is_empty(), "announced entries are removed");
        let gone = hub.subscribe(Uuid::new_v4());
        drop(gone);
        assert_eq!(hub.len(), 1, "a dead entry stays until swept or announced");
    }
}
