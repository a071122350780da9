//! One read for every long-poll waiting on the same thing. A batch's
//! waiters (a notebook's, a dashboard's, a hundred of one tenant's) wake
//! together at each chunk's end; each needs the batch as it stands after
//! that moment, not a read of its own. A read started after a waiter woke
//! is as fresh as one it would start itself, so it takes that one: the
//! answer is built (read, and serialized) once per wake-up, whatever the
//! number of waiters.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use tokio::time::Instant;

/// A status answer as built once for all who wait on it: its JSON, and
/// whether what it describes has ended (the waiting stops).
pub struct Built {
    pub body: bytes::Bytes,
    pub ended: bool,
}

/// Entries kept before dead ones are swept out.
const SWEEP_AT: usize = 4096;

/// The latest read of one thing, and when it started.
type Slot<T> = tokio::sync::Mutex<Option<(Instant, Arc<T>)>>;

/// A tenant and an id.
type Key = (String, String);

/// Reads of `T` shared by key (the tenant and the id: a tenant never takes
/// another's read). An entry lives while someone waits on it.
pub struct SharedReads<T> {
    slots: Mutex<HashMap<Key, Weak<Slot<T>>>>,
    reads: AtomicU64,
}

impl<T> Default for SharedReads<T> {
    fn default() -> Self {
        SharedReads {
            slots: Mutex::new(HashMap::new()),
            reads: AtomicU64::new(0),
        }
    }
}

/// A waiter's hold on a key's reads.
pub struct Reader<T>(Arc<Slot<T>>);

impl<T> SharedReads<T> {
    /// The reads of `id` for `tenant`, shared with everyone waiting on them.
    pub fn reader(&self, tenant: &str, id: &str) -> Reader<T> {
        let mut slots = self.slots.lock();
        let key = (tenant.to_string(), id.to_string());
        if let Some(slot) = slots.get(&key).and_then(Weak::upgrade) {
            return Reader(slot);
        }
        if slots.len() >= SWEEP_AT {
            slots.retain(|_, w| w.strong_count() > 0);
        }
        let slot = Arc::new(tokio::sync::Mutex::new(None));
        slots.insert(key, Arc::downgrade(&slot));
        Reader(slot)
    }

    /// Reads made, over all keys (tests count them).
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}

impl<T> Reader<T> {
    /// The thing as it stands no earlier than `since`: the last read if it
    /// started then or later (another waiter's), else a new one by `read`,
    /// kept for the others. Waiters queue for the read rather than race:
    /// one runs, the rest take its answer. A failed read is not kept.
    pub async fn read<E, F, Fut>(
        &self,
        shared: &SharedReads<T>,
        since: Instant,
        read: F,
    ) -> Result<Arc<T>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut last = self.0.lock().await;
        if let Some((at, value)) = &*last
            && *at >= since
        {
            return Ok(value.clone());
        }
        let started = Instant::now();
        shared.reads.fetch_add(1, Ordering::Relaxed);
        let value = Arc::new(read().await?);
        *last = Some((started, value.clone()));
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waiters_woken_together_take_one_read_and_a_later_wake_reads_again() {
        let shared = SharedReads::<u32>::default();
        let (a, b) = (shared.reader("t", "x"), shared.reader("t", "x"));
        let woke = Instant::now();
        let first = a
            .read(&shared, woke, || async { Ok::<_, ()>(1) })
            .await
            .unwrap();
        let second = b
            .read(&shared, woke, || async { Ok::<_, ()>(2) })
            .await
            .unwrap();
        assert_eq!((*first, *second), (1, 1), "the second waiter took the read");
        assert_eq!(shared.reads(), 1);
        let later = Instant::now() + std::time::Duration::from_millis(1);
        tokio::time::sleep_until(later).await;
        let fresh = b
            .read(&shared, later, || async { Ok::<_, ()>(3) })
            .await
            .unwrap();
        assert_eq!(*fresh, 3, "a read older than the wake-up is not taken");
        let other = shared
            .reader("another tenant", "x")
            .read(&shared, woke, || async { Ok::<_, ()>(4) })
            .await
            .unwrap();
        assert_eq!(*other, 4, "tenants never share a read");
    }
}
