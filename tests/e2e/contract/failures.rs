//! What every failed-login log promises.

use super::unique;
use platform::accounts::{FailureLog, Failures};
use std::sync::Arc;
use std::time::Duration;

pub async fn run_all(log: Arc<dyn FailureLog>) {
    let key = unique("login-account#");
    let w = Duration::from_secs(60);
    let t0 = chrono::Utc::now().timestamp_millis();
    assert_eq!(log.get(&key, t0, w).await.unwrap(), None);
    let at = |count, last_ms| Failures { count, last_ms };
    assert_eq!(log.record(&key, t0, w).await.unwrap(), at(1, t0));
    assert_eq!(log.record(&key, t0 + 10, w).await.unwrap(), at(2, t0 + 10));
    assert_eq!(
        log.get(&key, t0 + 20, w).await.unwrap(),
        Some(at(2, t0 + 10))
    );
    assert_eq!(
        log.get(&key, t0 + 10 + 60_000, w).await.unwrap(),
        None,
        "failures older than the window are forgotten"
    );
    assert_eq!(
        log.record(&key, t0 + 70_011, w).await.unwrap(),
        at(1, t0 + 70_011),
        "and counting starts over"
    );
    log.clear(&key).await.unwrap();
    assert_eq!(log.get(&key, t0 + 70_012, w).await.unwrap(), None);
    log.clear(&unique("never-seen")).await.unwrap();

    // Concurrent failures all count, and keys are independent.
    let (burst, other) = (unique("login-address#"), unique("login-address#"));
    log.record(&other, t0, w).await.unwrap();
    let mut joins = tokio::task::JoinSet::new();
    for i in 0..20 {
        let (log, burst) = (log.clone(), burst.clone());
        joins.spawn(async move { log.record(&burst, t0 + i, w).await.unwrap() });
    }
    while joins.join_next().await.is_some() {}
    assert_eq!(
        log.get(&burst, t0 + 30, w).await.unwrap().map(|f| f.count),
        Some(20)
    );
    assert_eq!(log.get(&other, t0 + 30, w).await.unwrap(), Some(at(1, t0)));
}
