//! Answers derived from the market data (the catalog's index, a decoded
//! table, an options listing, a precompressed catalog answer), kept by the
//! market data store they came from, within a byte budget. Each is kept
//! with its source (an `Arc`: the data it was derived from) and served only
//! while that source is the current one, so a replaced table or catalog is
//! never answered from an old derivation; the least recently used go first
//! when the budget is full.

use parking_lot::Mutex;
use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;

/// Bytes a store's derived answers may hold by default.
pub const DEFAULT_BUDGET: usize = 128 * 1024 * 1024;

type Shared = Arc<dyn Any + Send + Sync>;

struct Entry {
    key: String,
    /// The source's address, and the source itself (kept alive, so the
    /// address cannot be reused by another while the entry lives).
    source: usize,
    _source: Shared,
    value: Shared,
    bytes: usize,
}

/// Derived answers, least recently used first.
pub struct Memo {
    budget: usize,
    entries: Mutex<(VecDeque<Entry>, usize)>,
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (entries, bytes) = &*self.entries.lock();
        f.debug_struct("Memo")
            .field("budget", &self.budget)
            .field("entries", &entries.len())
            .field("bytes", bytes)
            .finish()
    }
}

impl Default for Memo {
    fn default() -> Self {
        Memo::new(DEFAULT_BUDGET)
    }
}

fn address<S>(source: &Arc<S>) -> usize {
    Arc::as_ptr(source) as *const () as usize
}

impl Memo {
    pub fn new(budget: usize) -> Memo {
        Memo {
            budget,
            entries: Mutex::new((VecDeque::new(), 0)),
        }
    }

    /// Bytes held now.
    pub fn bytes(&self) -> usize {
        self.entries.lock().1
    }

    /// The answer kept for `key` from `source`, if any (now the most
    /// recently used).
    pub fn get<S, T>(&self, key: &str, source: &Arc<S>) -> Option<Arc<T>>
    where
        T: Send + Sync + 'static,
    {
        let at = address(source);
        let mut guard = self.entries.lock();
        let (entries, _) = &mut *guard;
        let k = entries
            .iter()
            .position(|e| e.source == at && e.key == key)?;
        let e = entries.remove(k)?;
        let value = e.value.clone().downcast::<T>().ok();
        entries.push_back(e);
        value
    }

    /// Keeps `value`, derived from `source` under `key` and about `bytes`
    /// large, in place of any other derivation of `key`; the least recently
    /// used go while over the budget. A value larger than the budget is not
    /// kept.
    pub fn put<S, T>(&self, key: &str, source: &Arc<S>, value: Arc<T>, bytes: usize)
    where
        S: Send + Sync + 'static,
        T: Send + Sync + 'static,
    {
        let mut guard = self.entries.lock();
        let (entries, held) = &mut *guard;
        entries.retain(|e| {
            let same = e.key == key;
            if same {
                *held -= e.bytes;
            }
            !same
        });
        if bytes > self.budget {
            return;
        }
        entries.push_back(Entry {
            key: key.to_string(),
            source: address(source),
            _source: source.clone(),
            value,
            bytes,
        });
        *held += bytes;
        while *held > self.budget {
            let Some(old) = entries.pop_front() else {
                break;
            };
            *held -= old.bytes;
        }
        crate::telemetry::cache_bytes("derived", *held);
    }

    /// The answer kept for `key` from `source`, or `make`'s (value and
    /// size), kept.
    pub fn get_or_make<S, T>(
        &self,
        key: &str,
        source: &Arc<S>,
        make: impl FnOnce() -> (T, usize),
    ) -> Arc<T>
    where
        S: Send + Sync + 'static,
        T: Send + Sync + 'static,
    {
        if let Some(v) = self.get(key, source) {
            return v;
        }
        let (value, bytes) = make();
        let value = Arc::new(value);
        self.put(key, source, value.clone(), bytes);
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_served_only_from_its_own_source() {
        let memo = Memo::new(1_000);
        let (a, b) = (Arc::new(vec![1u8]), Arc::new(vec![1u8]));
        let made = memo.get_or_make("index", &a, || ("from a".to_string(), 10));
        assert_eq!(*made, "from a");
        assert_eq!(
            memo.get::<_, String>("index", &a)
                .as_deref()
                .map(String::as_str),
            Some("from a")
        );
        // Equal contents, another source: not served, and replaced.
        assert!(memo.get::<_, String>("index", &b).is_none());
        memo.put("index", &b, Arc::new("from b".to_string()), 10);
        assert!(memo.get::<_, String>("index", &a).is_none());
        assert_eq!(memo.bytes(), 10);
        // Another type under the key is not this one.
        assert!(memo.get::<_, u32>("index", &b).is_none());
    }

    #[test]
    fn the_budget_holds_and_the_least_recently_used_go_first() {
        let memo = Memo::new(100);
        let src = Arc::new(());
        for k in 0..5 {
            memo.put(&format!("k{k}"), &src, Arc::new(k), 30);
            assert!(memo.bytes() <= 100);
        }
        // 30 x 3 fit: k2, k3, k4 remain; reading k2 makes k3 the oldest.
        assert!(memo.get::<_, i32>("k1", &src).is_none());
        assert_eq!(memo.get::<_, i32>("k2", &src).as_deref(), Some(&2));
        memo.put("k5", &src, Arc::new(5), 30);
        assert!(memo.get::<_, i32>("k3", &src).is_none());
        assert_eq!(memo.get::<_, i32>("k2", &src).as_deref(), Some(&2));
        // Larger than the whole budget: answered, not kept.
        let big = memo.get_or_make("big", &src, || (7, 1_000));
        assert_eq!(*big, 7);
        assert!(memo.get::<_, i32>("big", &src).is_none());
        assert!(memo.bytes() <= 100);
    }
}
