//! The decoded-data caches of [`super::ParquetMarketData`]: each a map from
//! object key to decoded value within a byte budget.

use crate::PortError;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// A map from key to decoded value, within a budget of bytes: past it, the
/// least recently used entries go (down to nine tenths of the budget, so
/// eviction runs now and then, not on every miss). Two concurrent misses may
/// both decode; the result is the same, so that is cheaper than holding a
/// lock across I/O.
pub(super) struct Cache<T> {
    /// The `cache` label of its hit, miss and bytes metrics.
    name: &'static str,
    map: Mutex<Lru<T>>,
    budget: usize,
    weigh: fn(&T) -> usize,
}

struct Lru<T> {
    entries: HashMap<String, Entry<T>>,
    used: usize,
    tick: u64,
    /// Counts invalidations: a load that began before one is answered but
    /// not kept (it may have read what was just replaced).
    epoch: u64,
}

struct Entry<T> {
    value: Arc<T>,
    weight: usize,
    used: u64,
}

impl<T> Cache<T> {
    /// A cache of small things, kept whole (no budget, no bytes metric).
    pub(super) fn unbounded(name: &'static str) -> Self {
        Cache::new(name, usize::MAX, |_| 0)
    }

    pub(super) fn new(name: &'static str, budget: usize, weigh: fn(&T) -> usize) -> Self {
        Cache {
            name,
            map: Mutex::new(Lru {
                entries: HashMap::new(),
                used: 0,
                tick: 0,
                epoch: 0,
            }),
            budget,
            weigh,
        }
    }

    pub(super) async fn get_or_load<F>(&self, key: &str, load: F) -> Result<Arc<T>, PortError>
    where
        F: Future<Output = Result<T, PortError>>,
    {
        let epoch = {
            let mut lru = self.map.lock();
            lru.tick += 1;
            let tick = lru.tick;
            if let Some(e) = lru.entries.get_mut(key) {
                e.used = tick;
                crate::telemetry::cache_read(self.name, true);
                return Ok(e.value.clone());
            }
            lru.epoch
        };
        crate::telemetry::cache_read(self.name, false);
        let v = Arc::new(load.await?);
        let weight = (self.weigh)(&v);
        let mut lru = self.map.lock();
        if lru.epoch != epoch {
            return Ok(v);
        }
        lru.tick += 1;
        let used = lru.tick;
        if let Some(old) = lru.entries.insert(
            key.to_string(),
            Entry {
                value: v.clone(),
                weight,
                used,
            },
        ) {
            lru.used -= old.weight;
        }
        lru.used += weight;
        if lru.used > self.budget {
            let mut order: Vec<(u64, String)> = lru
                .entries
                .iter()
                .map(|(k, e)| (e.used, k.clone()))
                .collect();
            order.sort_unstable();
            let target = self.budget / 10 * 9;
            for (_, k) in order {
                if lru.used <= target || k == key {
                    break;
                }
                if let Some(e) = lru.entries.remove(&k) {
                    lru.used -= e.weight;
                }
            }
        }
        if self.budget != usize::MAX {
            crate::telemetry::cache_bytes(self.name, lru.used);
        }
        Ok(v)
    }

    /// The value when it is held, without loading it.
    pub(super) fn peek(&self, key: &str) -> Option<Arc<T>> {
        let mut lru = self.map.lock();
        lru.tick += 1;
        let tick = lru.tick;
        lru.entries.get_mut(key).map(|e| {
            e.used = tick;
            e.value.clone()
        })
    }

    pub(super) fn invalidate(&self, key: &str) {
        let mut lru = self.map.lock();
        lru.epoch += 1;
        if let Some(e) = lru.entries.remove(key) {
            lru.used -= e.weight;
        }
    }

    pub(super) fn clear(&self) {
        let mut lru = self.map.lock();
        lru.epoch += 1;
        lru.entries.clear();
        lru.used = 0;
    }

    /// Bytes held and entries, for tests.
    #[cfg(test)]
    pub(super) fn held(&self) -> (usize, usize) {
        let lru = self.map.lock();
        (lru.used, lru.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_cache_keeps_its_budget_and_the_recently_used() {
        // Entries weigh their length; 100 bytes hold ten of ten.
        let cache: Cache<Vec<u8>> = Cache::new("test", 100, |v| v.len());
        let load = |n: u8| async move { Ok(vec![n; 10]) };
        for k in 0..10u8 {
            cache.get_or_load(&k.to_string(), load(k)).await.unwrap();
        }
        assert_eq!(cache.held(), (100, 10));
        // Key 0 is used again, so the oldest is now 1.
        cache.get_or_load("0", load(99)).await.unwrap();
        cache.get_or_load("10", load(10)).await.unwrap();
        // Over budget: down to nine tenths, the least recently used first.
        assert_eq!(cache.held(), (90, 9));
        let kept = |k: &str| cache.map.lock().entries.contains_key(k);
        assert!(kept("0") && kept("10") && !kept("1") && !kept("2") && kept("3"));
        // A kept entry is the one loaded first, not loaded again.
        assert_eq!(
            *cache.get_or_load("0", load(42)).await.unwrap(),
            vec![0; 10]
        );
        cache.invalidate("0");
        assert_eq!(cache.held(), (80, 8));
    }
}
