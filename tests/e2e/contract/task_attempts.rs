//! What every task store promises about a running attempt: its progress,
//! and its lease, which only it renews and which another worker may take
//! over once it has passed.

use super::tasks::ended;
use super::unique;
use chrono::TimeDelta;
use platform::tasks::{Claim, NewTask, Outcome, TaskKind, TaskStatus, TaskStore, now};
use serde_json::json;

/// Only the attempt that holds a RUNNING task records its progress and
/// renews its lease; a new claim and the finish clear the progress.
pub async fn progress_and_leases(store: &dyn TaskStore) {
    let owner = unique("owner");
    let t = store
        .create(NewTask {
            owner: owner.clone(),
            kind: TaskKind::CpmScan,
            params: json!({"symbol": "SPX"}),
        })
        .await
        .unwrap();
    assert_eq!(t.progress, None);
    assert!(
        !store.set_progress(t.id, 1, 10).await.unwrap(),
        "a PENDING task has no attempt to report"
    );
    let lease = TimeDelta::milliseconds(1);
    let Claim::Claimed(first) = store.claim(t.id, now(), lease).await.unwrap() else {
        panic!("claim")
    };
    assert!(store.set_progress(t.id, first.attempts, 40).await.unwrap());
    assert!(store.set_progress(t.id, first.attempts, 250).await.unwrap());
    assert_eq!(store.get(t.id).await.unwrap().unwrap().progress, Some(100));
    assert!(store.set_progress(t.id, first.attempts, 55).await.unwrap());
    assert_eq!(store.get(t.id).await.unwrap().unwrap().progress, Some(55));
    // A second on, the 1 ms lease has passed: another worker takes the
    // task over (the store compares leases with the time it is given).
    let Claim::Claimed(second) = store
        .claim(t.id, now() + TimeDelta::seconds(1), TimeDelta::minutes(5))
        .await
        .unwrap()
    else {
        panic!("the expired lease is taken over")
    };
    assert_eq!(second.progress, None, "a new attempt starts from nothing");
    // A renewed lease keeps the task from a third worker until it runs out.
    assert!(
        !store
            .renew(t.id, first.attempts, now() + TimeDelta::hours(1))
            .await
            .unwrap(),
        "only the holding attempt renews"
    );
    assert!(
        store
            .renew(t.id, second.attempts, now() + TimeDelta::hours(1))
            .await
            .unwrap()
    );
    assert!(matches!(
        store.claim(t.id, now(), lease).await.unwrap(),
        Claim::Busy
    ));
    // Renewed to a time already past (as a lease runs out after its
    // worker died).
    assert!(store.renew(t.id, second.attempts, now()).await.unwrap());
    let Claim::Claimed(second) = store
        .claim(t.id, now() + TimeDelta::seconds(1), TimeDelta::minutes(5))
        .await
        .unwrap()
    else {
        panic!("a lease that ran out is taken over")
    };
    assert!(!store.set_progress(t.id, first.attempts, 90).await.unwrap());
    assert!(store.set_progress(t.id, second.attempts, 30).await.unwrap());
    let done = store
        .finish(t.id, ended(second.attempts, Outcome::Success(json!({}))))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((done.status, done.progress), (TaskStatus::Success, None));
    assert!(!store.set_progress(t.id, second.attempts, 99).await.unwrap());
    assert!(
        !store
            .set_progress(uuid::Uuid::new_v4(), 1, 1)
            .await
            .unwrap()
    );
}
