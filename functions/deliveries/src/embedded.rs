//! The embedded deployment's delivery loop: due rows of the SQLite store,
//! sent a bounded number at a time.

use std::sync::Arc;
use std::time::Duration;

/// Sends due deliveries until dropped, `parallel` at a time: a receiver
/// that never answers holds one of these sends for the answer timeout, not
/// a task worker.
pub async fn deliver_forever(
    store: Arc<platform::webhooks::SqliteWebhooks>,
    deliverer: Arc<crate::Deliverer>,
    parallel: usize,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
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
            match store.claim_due(platform::tasks::now(), free, lease).await {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(error = %e, "webhook deliveries not read");
                    Vec::new()
                }
            }
        };
        for d in due {
            let Ok(permit) = slots.clone().acquire_owned().await else {
                return;
            };
            let (deliverer, wake) = (deliverer.clone(), wake.clone());
            tokio::spawn(async move {
                if let Err(e) = deliverer.attempt(d).await {
                    tracing::warn!(error = %e, "webhook attempt not recorded");
                }
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
        if slots.available_permits() > 0 && pause.is_zero() {
            continue;
        }
        let _ = tokio::time::timeout(pause.max(Duration::from_millis(5)), woken).await;
    }
}
