//! The embedded deployment's delivery loop: due rows of the SQLite store,
//! sent a bounded number at a time, each account and endpoint to its share.

use parking_lot::Mutex;
use platform::webhooks::Room;
use std::sync::Arc;
use std::time::Duration;

/// Sends in flight to one endpoint: a receiver that stalls holds this many.
pub const PER_ENDPOINT: usize = 2;
/// Sends in flight for one account: with 64 slots, 16 accounts whose
/// receivers all stall are needed before another account waits.
pub const PER_ACCOUNT: usize = 4;

/// Sends due deliveries until dropped, `parallel` at a time, at most
/// [`PER_ACCOUNT`] for an account and [`PER_ENDPOINT`] for an endpoint: a
/// receiver that never answers holds its own endpoint's sends for the answer
/// timeout, not a task worker and not another tenant's slot.
pub async fn deliver_forever(
    store: Arc<platform::webhooks::SqliteWebhooks>,
    deliverer: Arc<crate::Deliverer>,
    parallel: usize,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let busy = Arc::new(Mutex::new(Room {
        per_account: PER_ACCOUNT,
        per_endpoint: PER_ENDPOINT,
        ..Room::default()
    }));
    let lease = deliverer.timeouts.connect + deliverer.timeouts.answer + Duration::from_secs(30);
    let wake = store.wake();
    if let Err(e) = store.release_claims(platform::tasks::now()).await {
        tracing::warn!(error = %e, "webhook claims not released");
    }
    loop {
        let woken = wake.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let free = slots.available_permits();
        let due = if free == 0 {
            Vec::new()
        } else {
            // A copy: only this loop adds, so the copy can only be fuller.
            let room = busy.lock().clone();
            match store
                .claim_due_within(platform::tasks::now(), free, lease, room)
                .await
            {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(error = %e, "webhook deliveries not read");
                    Vec::new()
                }
            }
        };
        let claimed = due.len();
        for d in due {
            let Ok(permit) = slots.clone().acquire_owned().await else {
                return;
            };
            busy.lock().take(&d.account, &d.endpoint);
            let (deliverer, wake, busy) = (deliverer.clone(), wake.clone(), busy.clone());
            tokio::spawn(async move {
                let (account, endpoint) = (d.account.clone(), d.endpoint.clone());
                if let Err(e) = deliverer.attempt(d).await {
                    tracing::warn!(error = %e, "webhook attempt not recorded");
                }
                busy.lock().give_back(&account, &endpoint);
                drop(permit);
                wake.notify_one();
            });
        }
        // Until the next due delivery (a second at most), or a change.
        let pause = match store.next_due().await {
            Ok(Some(t)) => (t - platform::tasks::now())
                .to_std()
                .unwrap_or(Duration::ZERO)
                .min(Duration::from_secs(1)),
            _ => Duration::from_secs(1),
        };
        if claimed > 0 && slots.available_permits() > 0 && pause.is_zero() {
            continue;
        }
        // Due rows that nothing claimed belong to accounts or endpoints at
        // their share: a send ending (or a new event) wakes the loop.
        let wait = if pause.is_zero() {
            Duration::from_secs(1)
        } else {
            pause.max(Duration::from_millis(5))
        };
        let _ = tokio::time::timeout(wait, woken).await;
    }
}
