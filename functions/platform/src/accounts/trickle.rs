//! A slow trickle of login checks for a client address past its free
//! failures. Such an address is not locked: its uncached checks wait in one
//! queue of their own, in order, at most one starting every [`SPACING`]. A
//! flood from the address slows to the trickle, while an innocent user behind
//! the same address (a NAT, a proxy) waits behind at most the flood's own
//! open requests, a few seconds, instead of being refused for minutes.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// Least time between two checks of one address (at most 8 a second).
pub const SPACING: Duration = Duration::from_millis(125);
/// Checks that may wait for one address; more are refused at once.
pub const MAX_WAITING: usize = 64;
/// Longest a check waits for its turn.
pub const MAX_WAIT: Duration = Duration::from_secs(10);
/// Addresses tracked before idle ones are forgotten.
const MAX_LANES: usize = 10_000;

struct Lane {
    /// When the next check may start; held (in order) by the one waiting for it.
    next: tokio::sync::Mutex<Instant>,
    waiting: AtomicUsize,
}

/// The queues of addresses whose checks trickle.
pub struct Trickle {
    lanes: Mutex<HashMap<IpAddr, Arc<Lane>>>,
    spacing: Duration,
    max_waiting: usize,
    max_wait: Duration,
}

impl Default for Trickle {
    fn default() -> Self {
        Trickle::new(SPACING, MAX_WAITING, MAX_WAIT)
    }
}

/// Counts a waiting check until it is dropped, however its wait ends.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Trickle {
    pub fn new(spacing: Duration, max_waiting: usize, max_wait: Duration) -> Self {
        Trickle {
            lanes: Mutex::new(HashMap::new()),
            spacing,
            max_waiting,
            max_wait,
        }
    }

    fn lane(&self, ip: IpAddr) -> Arc<Lane> {
        let mut lanes = self.lanes.lock();
        if lanes.len() >= MAX_LANES && !lanes.contains_key(&ip) {
            // Lanes nobody is waiting in are forgotten first.
            lanes.retain(|_, l| Arc::strong_count(l) > 1);
        }
        lanes
            .entry(ip)
            .or_insert_with(|| {
                Arc::new(Lane {
                    next: tokio::sync::Mutex::new(Instant::now()),
                    waiting: AtomicUsize::new(0),
                })
            })
            .clone()
    }

    /// Waits for `ip`'s next turn; `Err` with when to try again when its
    /// queue is full or the turn does not come within the longest wait.
    pub async fn turn(&self, ip: IpAddr) -> Result<(), Duration> {
        let lane = self.lane(ip);
        if lane.waiting.fetch_add(1, Ordering::SeqCst) >= self.max_waiting {
            lane.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(Duration::from_secs(1));
        }
        let _waiting = Waiting(&lane.waiting);
        let wait = async {
            let mut next = lane.next.lock().await;
            tokio::time::sleep_until(*next).await;
            *next = Instant::now() + self.spacing;
        };
        tokio::time::timeout(self.max_wait, wait)
            .await
            .map_err(|_| Duration::from_secs(1))
    }

    /// Checks waiting for `ip` now.
    pub fn waiting(&self, ip: IpAddr) -> usize {
        self.lanes
            .lock()
            .get(&ip)
            .map_or(0, |l| l.waiting.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    //! On the real clock, so the tests share tokio's features with the
    //! deployed build: bounds below are exact, bounds above are loose.
    use super::*;

    #[tokio::test]
    async fn turns_come_in_order_spaced_and_bounded() {
        let spacing = Duration::from_millis(200);
        let t = Arc::new(Trickle::new(spacing, 3, Duration::from_secs(10)));
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let started = Instant::now();
        let mut joins = Vec::new();
        for k in 0..4 {
            let lane = t.clone();
            joins.push(tokio::spawn(async move {
                lane.turn(ip).await.map(|_| (k, started.elapsed()))
            }));
            // Each arrives after the one before; the first goes at once.
            while t.waiting(ip) != k {
                assert!(started.elapsed() < spacing, "arrives");
                tokio::task::yield_now().await;
            }
        }
        // The first went at once; three wait, which fills the queue.
        assert_eq!(t.waiting(ip), 3);
        // A fifth finds the queue full and is refused at once.
        assert_eq!(t.turn(ip).await, Err(Duration::from_secs(1)));
        // Another address is not held back by this one: its turn comes
        // while this one's last is still waiting.
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        t.turn(other).await.unwrap();
        assert!(!joins[3].is_finished());
        let mut turns = Vec::new();
        for j in joins {
            turns.push(j.await.unwrap().unwrap());
        }
        let order: Vec<usize> = turns.iter().map(|(k, _)| *k).collect();
        assert_eq!(order, [0, 1, 2, 3], "in order of arrival");
        // Each turn comes a spacing after the one before, so the k-th no
        // sooner than k spacings after the start (a turn's own stamp may be
        // taken late on a loaded machine: the gaps between stamps are not
        // a bound).
        for (k, (_, at)) in turns.iter().enumerate() {
            assert!(*at >= spacing * k as u32, "spaced: {turns:?}");
        }
        assert!(turns[3].1 < Duration::from_secs(5), "{turns:?}");
        assert_eq!(t.waiting(ip), 0);
    }

    #[tokio::test]
    async fn a_turn_past_the_longest_wait_is_refused() {
        let t = Arc::new(Trickle::new(
            Duration::from_secs(1),
            64,
            Duration::from_millis(2_500),
        ));
        let ip: IpAddr = "192.0.2.9".parse().unwrap();
        let mut results = Vec::new();
        for _ in 0..4 {
            let t = t.clone();
            results.push(tokio::spawn(async move { t.turn(ip).await }));
            tokio::task::yield_now().await;
        }
        let mut outcomes = Vec::new();
        for r in results {
            outcomes.push(r.await.unwrap().is_ok());
        }
        // Turns at 0, 1 and 2 s; the fourth would start at 3 s.
        assert_eq!(outcomes, [true, true, true, false]);
        assert_eq!(t.waiting(ip), 0, "a refused wait leaves the queue");
    }
}
