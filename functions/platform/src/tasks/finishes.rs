//! Tasks that ended in this process, told to whoever waits on them: a
//! long-polled status answers the moment its task's outcome is stored by an
//! embedded worker. Waiters elsewhere (another process, a Lambda) re-read
//! the store on a tick instead; a notice with no waiter costs nothing.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Weak};
use tokio::sync::Notify;
use tokio::sync::futures::Notified;
use tokio::time::Instant;
use uuid::Uuid;

/// Waiters' wake-ups by task id; entries die with their last waiter.
#[derive(Default)]
pub struct Finishes {
    waiting: Mutex<HashMap<Uuid, Weak<Wake>>>,
}

/// The wake-up of one task's waiters, and when it was last announced: a
/// waiter needs what was stored by then, so a read another waiter started
/// after that instant answers it too.
#[derive(Default)]
pub struct Wake {
    notify: Notify,
    announced: Mutex<Option<Instant>>,
}

impl Wake {
    /// The next announcement (create and `enable` it before reading).
    pub fn notified(&self) -> Notified<'_> {
        self.notify.notified()
    }

    /// When the last announcement was made.
    pub fn announced(&self) -> Option<Instant> {
        *self.announced.lock()
    }
}

/// Entries kept before dead ones are swept out.
const SWEEP_AT: usize = 4096;

impl Finishes {
    /// The wake-up of `id`'s end, shared by everyone waiting on it. Create
    /// its `notified()` future (and `enable` it) before reading the task, so
    /// an end between the read and the wait is not missed.
    pub fn subscribe(&self, id: Uuid) -> Arc<Wake> {
        let mut waiting = self.waiting.lock();
        if let Some(n) = waiting.get(&id).and_then(Weak::upgrade) {
            return n;
        }
        if waiting.len() >= SWEEP_AT {
            waiting.retain(|_, w| w.strong_count() > 0);
        }
        let n = Arc::new(Wake::default());
        waiting.insert(id, Arc::downgrade(&n));
        n
    }

    /// `id` has ended, or a part of it has (a batch's chunk): wake its
    /// waiters. The entry stays while they live: a batch's waiters, woken
    /// by one chunk, wait again on the same wake-up for the next, and the
    /// last chunk must find them.
    pub fn announce(&self, id: Uuid) {
        let mut waiting = self.waiting.lock();
        match waiting.get(&id).map(Weak::upgrade) {
            Some(Some(n)) => {
                *n.announced.lock() = Some(Instant::now());
                n.notify.notify_waiters();
            }
            Some(None) => {
                waiting.remove(&id);
            }
            None => {}
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
        {
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
        }
        hub.announce(mine);
        assert!(hub.is_empty(), "an announced entry without waiters goes");
        let gone = hub.subscribe(Uuid::new_v4());
        drop(gone);
        assert_eq!(hub.len(), 1, "a dead entry stays until swept or announced");
    }

    /// A batch's waiter is woken by each chunk's end in turn: the first
    /// announcement must not take the wake-up away from the later ones.
    #[tokio::test]
    async fn a_waiter_woken_once_is_woken_again_by_the_next_announcement() {
        let hub = Finishes::default();
        let batch = Uuid::new_v4();
        let n = hub.subscribe(batch);
        for chunk in 0..3 {
            let woken = n.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            hub.announce(batch);
            tokio::time::timeout(Duration::from_millis(200), woken)
                .await
                .unwrap_or_else(|_| panic!("woken by chunk {chunk}'s end"));
        }
        assert!(
            Arc::ptr_eq(&n, &hub.subscribe(batch)),
            "later waiters share the live wake-up"
        );
    }
}
